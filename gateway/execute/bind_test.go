package execute

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBindErrors(t *testing.T) {
	runDir := isolate(t)
	repo := newRepo(t)
	git(t, repo, "tag", "v1")
	bare := tmp(t)
	git(t, bare, "init", "-q", "--bare")
	plain := tmp(t)
	git(t, repo, "remote", "add", "evil", "ext::sh -c touch% /tmp/pwned")
	sub := tmp(t)
	git(t, sub, "init", "-q")
	e := New(Options{RunDir: runDir})
	tests := []struct {
		name   string
		op     string
		body   json.RawMessage
		substr string
	}{
		{"plain directory", "commit", body(plain, map[string]any{"message": "m"}), "is not a git work tree"},
		{"bare repository", "commit", body(bare, map[string]any{"message": "m"}), "is not a git work tree"},
		{"missing path", "commit", body(filepath.Join(plain, "nope"), map[string]any{"message": "m"}), "does not exist"},
		{"relative path", "commit", body("rel/path", map[string]any{"message": "m"}), "must be an absolute path"},
		{"unknown op", "amend", body(repo, nil), "unknown operation type"},
		{"malformed body", "merge", json.RawMessage(`{"repoPath": 5}`), "not valid"},
		{"merge source missing", "merge", body(repo, map[string]any{"sourceRef": "nope", "targetRef": "main"}), `sourceRef "nope" does not name a commit`},
		{"merge target is a tag", "merge", body(repo, map[string]any{"sourceRef": "v1", "targetRef": "v1"}), "not a local branch"},
		{"merge target remote-style", "merge", body(repo, map[string]any{"sourceRef": "main", "targetRef": "origin/none"}), "not a local branch"},
		{"rebase onto missing", "rebase", body(repo, map[string]any{"ontoRef": "nope"}), "ontoRef"},
		{"reset bad mode", "reset", body(repo, map[string]any{"targetRef": "HEAD", "mode": "keep"}), "soft, mixed or hard"},
		{"plan step type", "plan", body(repo, map[string]any{"steps": []map[string]any{{"operationType": "push"}}}), "steps[0].operationType"},
		{"plan step ref", "plan", body(repo, map[string]any{"steps": []map[string]any{{"operationType": "reset", "targetRef": "HEAD"}, {"operationType": "merge", "sourceRef": "x", "targetRef": "main"}}}), "steps[1].sourceRef"},
		{"branch exists", "branch", body(repo, map[string]any{"name": "main"}), "already exists"},
		{"branch bad name", "branch", body(repo, map[string]any{"name": "-x"}), "not a valid branch name"},
		{"push unknown remote", "push", body(repo, map[string]any{"remote": "origin"}), `remote "origin" is not configured`},
		{"push ext remote", "push", body(repo, map[string]any{"remote": "evil"}), "ext::"},
		{"worktree path exists", "worktree", body(repo, map[string]any{"branch": "x", "path": plain}), "already exists"},
		{"branchDelete repo not a target", "branchDelete", body(repo, map[string]any{"targets": []map[string]any{{"repoPath": sub, "branches": []string{"x"}}}}), "must be one of the targets"},
		{"branchDelete full ref", "branchDelete", body(repo, map[string]any{"targets": []map[string]any{{"repoPath": repo, "branches": []string{"refs/heads/main"}}}}), "short local branch name"},
		{"submodule not a gitlink", "submodulePointer", body(repo, map[string]any{"parentPath": "", "relativePath": "a.txt", "direction": "return"}), "not initialised"},
		{"submodule escapes", "submodulePointer", body(repo, map[string]any{"parentPath": "..", "relativePath": "x", "direction": "return"}), "relative path inside"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := e.Bind(context.Background(), tt.op, tt.body)
			var be *BindError
			if !errors.As(err, &be) {
				t.Fatalf("want *BindError, got %T %v", err, err)
			}
			if !strings.Contains(be.Msg, tt.substr) {
				t.Fatalf("message %q does not contain %q", be.Msg, tt.substr)
			}
		})
	}
	if _, err := os.Stat("/tmp/pwned"); err == nil {
		t.Fatal("an ext:: remote ran a command")
	}
}

func TestBindSubmodulePins(t *testing.T) {
	runDir := isolate(t)
	repo := newRepo(t)
	sub := withSubmodule(t, repo)
	e := New(Options{RunDir: runDir})
	rec := git(t, repo, "rev-parse", "HEAD:lib")
	tests := []struct {
		name   string
		fields map[string]any
		substr string
	}{
		{"nothing to do", map[string]any{"relativePath": "lib", "direction": "record", "message": "m"}, "already has the recorded commit"},
		{"record pin", map[string]any{"relativePath": "lib", "direction": "return", "expectedRecordedOid": strings.Repeat("0", 40)}, "expectedRecordedOid"},
	}
	for _, tt := range tests {
		_, err := e.Bind(context.Background(), "submodulePointer", body(repo, tt.fields))
		if err == nil || !strings.Contains(err.Error(), tt.substr) {
			t.Errorf("%s: %v", tt.name, err)
		}
	}
	commit(t, sub, "s2.txt", "2\n", "moved")
	_, err := e.Bind(context.Background(), "submodulePointer", body(repo, map[string]any{"relativePath": "lib", "direction": "return", "expectedCheckedOutOid": rec}))
	if err == nil || !strings.Contains(err.Error(), "expectedCheckedOutOid") {
		t.Errorf("checked-out pin: %v", err)
	}
}

func TestBindResolvesSymlinksAndRevalidateNoticesARetarget(t *testing.T) {
	runDir := isolate(t)
	repo := newRepo(t)
	other := newRepo(t)
	link := filepath.Join(tmp(t), "link")
	if err := os.Symlink(repo, link); err != nil {
		t.Fatal(err)
	}
	e := New(Options{RunDir: runDir})
	ctx := context.Background()
	b, err := e.Bind(ctx, "commit", body(filepath.Join(link, "."), map[string]any{"message": "m"}))
	if err != nil {
		t.Fatal(err)
	}
	if b.RepoPath != repo || b.GitDir != filepath.Join(repo, ".git") || b.Head != head(t, repo) || b.Branch != "refs/heads/main" {
		t.Fatalf("binding %+v", b)
	}
	if err := e.Revalidate(ctx, b); err != nil {
		t.Fatalf("unchanged repository refused: %v", err)
	}
	// The journal stores bindings as JSON; a round trip must not change
	// what Revalidate compares.
	raw, _ := json.Marshal(b)
	var back Binding
	if err := json.Unmarshal(raw, &back); err != nil || back.RequestedPath != filepath.Join(link, ".") {
		t.Fatalf("round trip %s: %v", raw, err)
	}
	if err := e.Revalidate(ctx, back); err != nil {
		t.Fatalf("round-tripped binding refused: %v", err)
	}
	// A subdirectory binds the work tree's top.
	write(t, repo, "dir/f.txt", "f\n")
	if sb, err := e.Bind(ctx, "commit", body(filepath.Join(repo, "dir"), map[string]any{"message": "m"})); err != nil || sb.RepoPath != repo {
		t.Fatalf("subdirectory: %+v %v", sb, err)
	}
	// The link now points at another repository: execution must refuse.
	os.Remove(link)
	if err := os.Symlink(other, link); err != nil {
		t.Fatal(err)
	}
	err = e.Revalidate(ctx, b)
	if err == nil || !strings.Contains(err.Error(), "now resolves to "+other) {
		t.Fatalf("retargeted link: %v", err)
	}
	os.Remove(link)
	if err := e.Revalidate(ctx, b); err == nil || !strings.Contains(err.Error(), "no longer resolves") {
		t.Fatalf("removed link: %v", err)
	}
}

func TestRevalidateRefusesMovedRefs(t *testing.T) {
	tests := []struct {
		name   string
		op     string
		fields map[string]any
		move   func(t *testing.T, repo string)
		substr string
	}{
		{"source moved", "merge", map[string]any{"sourceRef": "feature", "targetRef": "main"},
			func(t *testing.T, repo string) { commitOn(t, repo, "feature") }, "ref feature"},
		{"HEAD moved", "merge", map[string]any{"sourceRef": "feature", "targetRef": "main"},
			func(t *testing.T, repo string) { commit(t, repo, "z.txt", "z\n", "moved head") }, "HEAD of"},
		{"branch switched", "reset", map[string]any{"targetRef": "HEAD~1", "mode": "hard"},
			func(t *testing.T, repo string) { git(t, repo, "checkout", "-q", "feature") }, "checked-out branch"},
		{"new branch appeared", "branch", map[string]any{"name": "topic"},
			func(t *testing.T, repo string) { git(t, repo, "branch", "topic") }, "refs/heads/topic"},
		{"remote-tracking ref moved", "push", map[string]any{"remote": "origin", "forceWithLease": true},
			func(t *testing.T, repo string) {
				git(t, repo, "update-ref", "refs/remotes/origin/main", git(t, repo, "rev-parse", "feature"))
			}, "refs/remotes/origin/main"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			runDir := isolate(t)
			repo := newRepo(t)
			feature(t, repo)
			bare := tmp(t)
			git(t, bare, "init", "-q", "--bare")
			git(t, repo, "remote", "add", "origin", bare)
			git(t, repo, "push", "-q", "origin", "main")
			e := New(Options{RunDir: runDir})
			b := body(repo, tt.fields)
			bd, err := e.Bind(context.Background(), tt.op, b)
			if err != nil {
				t.Fatal(err)
			}
			tt.move(t, repo)
			before, remoteBefore := snapshot(t, repo), git(t, bare, "rev-parse", "main")
			out := e.Execute(context.Background(), Job{ID: "j", OperationType: tt.op, Body: b, Binding: bd})
			if out.Status != "failed" || !strings.Contains(string(out.Result), tt.substr) || !strings.Contains(string(out.Result), "not executed") {
				t.Fatalf("%s", out.Result)
			}
			if snapshot(t, repo) != before {
				t.Fatal("a refused execution changed the repository")
			}
			if git(t, bare, "rev-parse", "main") != remoteBefore {
				t.Fatal("a refused execution changed the remote")
			}
		})
	}
}

func TestExecuteNeverPanics(t *testing.T) {
	runDir := isolate(t)
	repo := newRepo(t)
	e := New(Options{RunDir: runDir})
	bd, err := e.Bind(context.Background(), "commit", body(repo, map[string]any{"message": "m"}))
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range []Job{
		{OperationType: "nope", Binding: bd},
		{OperationType: "commit", Body: json.RawMessage(`[1,2]`), Binding: bd},
		{OperationType: "submodulePointer", Body: body(repo, map[string]any{"direction": "record"}), Binding: bd},
		{OperationType: "commit", Body: body(repo, map[string]any{"message": "nothing staged"}), Binding: bd},
	} {
		out := e.Execute(context.Background(), j)
		var res map[string]any
		if out.Status != "failed" || json.Unmarshal(out.Result, &res) != nil || res["status"] != "failed" || res["message"] == "" {
			t.Errorf("%s: %s %s", j.OperationType, out.Status, out.Result)
		}
	}
}

func TestReviewAndConfirmations(t *testing.T) {
	runDir := isolate(t)
	repo := newRepo(t)
	conflicting(t, repo)
	git(t, repo, "branch", "ahead", "main")
	git(t, repo, "checkout", "-q", "ahead")
	commit(t, repo, "n.txt", "n\n", "ahead work")
	git(t, repo, "checkout", "-q", "main")
	bare := tmp(t)
	git(t, bare, "init", "-q", "--bare")
	git(t, repo, "remote", "add", "origin", bare)
	e := New(Options{RunDir: runDir})
	ctx := context.Background()
	review := func(op string, fields map[string]any) Review {
		t.Helper()
		b := body(repo, fields)
		bd, err := e.Bind(ctx, op, b)
		if err != nil {
			t.Fatal(err)
		}
		rv, err := e.Review(ctx, op, b, bd)
		if err != nil {
			t.Fatal(err)
		}
		if rv.Summary == "" {
			t.Fatalf("%s: empty summary", op)
		}
		return rv
	}
	m := review("merge", map[string]any{"sourceRef": "feature", "targetRef": "main"}).Merge
	if m == nil || m.Commits != 1 || m.FastForward || m.FilesChanged != 1 || len(m.Log) != 1 || !strings.HasSuffix(m.Log[0], "feature a") {
		t.Fatalf("merge review %+v", m)
	}
	if w := review("merge", map[string]any{"sourceRef": "feature", "targetRef": "main"}).Warnings; len(w) == 0 || !strings.Contains(w[0], "conflicts") {
		t.Fatalf("no conflict warning: %v", w)
	}
	if m := review("merge", map[string]any{"sourceRef": "ahead", "targetRef": "main"}).Merge; !m.FastForward {
		t.Fatalf("fast-forward not detected: %+v", m)
	}

	tests := []struct {
		name string
		rv   Review
		ok   []Confirmations
		bad  []Confirmations
	}{
		{"hard reset", review("reset", map[string]any{"targetRef": "HEAD~1", "mode": "hard"}),
			[]Confirmations{{TypedBranch: "main"}}, []Confirmations{{}, {TypedBranch: "Main"}, {TypedBranch: "feature"}}},
		{"soft reset", review("reset", map[string]any{"targetRef": "HEAD~1", "mode": "soft"}),
			[]Confirmations{{}}, nil},
		{"plan", review("plan", map[string]any{"steps": []map[string]any{
			{"operationType": "patch", "patchContent": "x"},
			{"operationType": "discard", "paths": []string{"a.txt"}},
			{"operationType": "reset", "targetRef": "HEAD", "mode": "hard"},
		}}), []Confirmations{{Steps: []int{1, 2}}, {Steps: []int{0, 1, 2}}}, []Confirmations{{}, {Steps: []int{1}}, {Steps: []int{0, 2}}}},
		{"force push", review("push", map[string]any{"remote": "origin", "forceWithLease": true}),
			[]Confirmations{{ForcePush: true}}, []Confirmations{{}}},
		{"plain push", review("push", map[string]any{"remote": "origin"}), []Confirmations{{}}, nil},
	}
	for _, tt := range tests {
		for _, c := range tt.ok {
			if err := CheckConfirmations(tt.rv, c); err != nil {
				t.Errorf("%s %+v: %v", tt.name, c, err)
			}
		}
		for _, c := range tt.bad {
			if err := CheckConfirmations(tt.rv, c); err == nil {
				t.Errorf("%s %+v: accepted", tt.name, c)
			}
		}
	}
}
