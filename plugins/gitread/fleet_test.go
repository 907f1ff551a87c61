package gitread

import (
	"encoding/json"
	"fmt"
	"github.com/fluxgit/fluxgit/internal/resultshape"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/fluxgit/fluxgit/host/catalog"
	"github.com/fluxgit/fluxgit/plugins/sdk"
)

var (
	fxCatOnce sync.Once
	fxCat     *catalog.Catalog
	fxCatErr  error
)

// fxCheckPayload wraps a result in the host envelope and validates it
// against the tool's outputSchema, as the host does.
func fxCheckPayload(t *testing.T, tool string, res *sdk.Result, repoPath string) {
	t.Helper()
	fxCatOnce.Do(func() { fxCat, fxCatErr = catalog.Load() })
	if fxCatErr != nil {
		t.Fatal(fxCatErr)
	}
	spec, ok := fxCat.Tool(tool)
	if !ok {
		t.Fatalf("no spec for %s", tool)
	}
	env := map[string]any{"tool": tool, "readOnly": true, "tier": spec.Tier}
	if res.Source != "" {
		env["source"] = res.Source
	}
	if res.Error != nil {
		var d any
		_ = json.Unmarshal(res.Error.Data, &d)
		env["error"] = map[string]any{"code": res.Error.Code, "message": res.Error.Message, "data": d}
		if res.Source != "" && repoPath != "" {
			env["repoPath"] = repoPath
		}
	} else {
		var d any
		if err := json.Unmarshal(res.Data, &d); err != nil {
			t.Fatal(err)
		}
		env["data"] = d
		if repoPath != "" {
			env["repoPath"] = repoPath
		}
	}
	b, _ := json.Marshal(env)
	var decoded any
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	if err := dec.Decode(&decoded); err != nil {
		t.Fatal(err)
	}
	// The schema of the shape the provider answered in (resultshape).
	if err := spec.ValidatePayloadFor(decoded, !resultshape.Lean()); err != nil {
		t.Fatalf("%s payload violates outputSchema: %v\n%s", tool, err, b)
	}
}

// fxOK calls a tool, requires success, validates the envelope and decodes.
func fxOK(t *testing.T, tool string, args map[string]any, out any, roots ...string) {
	t.Helper()
	res, err := call(t, tool, args, roots...)
	if err != nil {
		t.Fatalf("%s: Go error %v", tool, err)
	}
	if res.Error != nil {
		t.Fatalf("%s: tool error %d %s %s", tool, res.Error.Code, res.Error.Message, res.Error.Data)
	}
	rp, _ := args["repoPath"].(string)
	fxCheckPayload(t, tool, res, rp)
	if err := json.Unmarshal(res.Data, out); err != nil {
		t.Fatal(err)
	}
}

// fxClone makes a bare "remote" from repo's main and a clone tracking it.
func fxClone(t *testing.T, origin string) (clone, bare string) {
	t.Helper()
	bare = filepath.Join(tempDir(t), "remote.git")
	git(t, origin, "clone", "-q", "--bare", origin, bare)
	clone = filepath.Join(tempDir(t), "clone")
	git(t, origin, "clone", "-q", bare, clone)
	return clone, bare
}

// fxDiverged builds a clone whose main is one commit ahead of and one behind
// origin/main (as last fetched). mine/theirs are file→content maps.
func fxDiverged(t *testing.T, base map[string]string, theirs, mine func(dir string)) string {
	t.Helper()
	origin := emptyRepo(t)
	for k, v := range base {
		write(t, origin, k, v)
	}
	commitAll(t, origin, "base")
	clone, bare := fxClone(t, origin)
	// theirs: pushed to the remote from another clone, then fetched once.
	other := filepath.Join(tempDir(t), "other")
	git(t, origin, "clone", "-q", bare, other)
	theirs(other)
	commitAll(t, other, "theirs")
	git(t, other, "push", "-q", "origin", "main")
	git(t, clone, "fetch", "-q")
	mine(clone)
	commitAll(t, clone, "mine")
	return clone
}

func fxWriter(files map[string]string) func(string) {
	return func(dir string) {
		for k, v := range files {
			p := filepath.Join(dir, k)
			if v == "" {
				_ = os.Remove(p)
				continue
			}
			_ = os.MkdirAll(filepath.Dir(p), 0o755)
			_ = os.WriteFile(p, []byte(v), 0o644)
		}
	}
}

func fxMv(from, to string) func(string) {
	return func(dir string) { _ = os.Rename(filepath.Join(dir, from), filepath.Join(dir, to)) }
}

var fxLines = "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n"

func TestConflictPreflight(t *testing.T) {
	conflict := fxDiverged(t, map[string]string{"a.txt": fxLines},
		fxWriter(map[string]string{"a.txt": strings.Replace(fxLines, "two", "THEIRS", 1)}),
		fxWriter(map[string]string{"a.txt": strings.Replace(fxLines, "two", "MINE", 1)}))
	clean := fxDiverged(t, map[string]string{"a.txt": fxLines, "b.txt": "b\n"},
		fxWriter(map[string]string{"b.txt": "b2\n"}),
		fxWriter(map[string]string{"a.txt": fxLines + "eleven\n"}))
	// Renamed on their side, modified on ours: merge-tree follows the rename.
	renameClean := fxDiverged(t, map[string]string{"a.txt": fxLines},
		fxMv("a.txt", "moved.txt"),
		fxWriter(map[string]string{"a.txt": strings.Replace(fxLines, "nine", "NINE", 1)}))
	renameConflict := fxDiverged(t, map[string]string{"a.txt": fxLines},
		func(d string) {
			fxMv("a.txt", "moved.txt")(d)
			fxWriter(map[string]string{"moved.txt": strings.Replace(fxLines, "two", "THEIRS", 1)})(d)
		},
		fxWriter(map[string]string{"a.txt": strings.Replace(fxLines, "two", "MINE", 1)}))
	unrelated := newRepo(t)
	git(t, unrelated, "checkout", "-q", "--orphan", "other")
	write(t, unrelated, "z.txt", "z\n")
	commitAll(t, unrelated, "orphan")
	git(t, unrelated, "checkout", "-q", "main")

	tests := []struct {
		name, repo, current, target, status string
		paths                               []string
	}{
		{"conflicts", conflict, "", "origin/main", "conflicts", []string{"a.txt"}},
		{"clean merge", clean, "HEAD", "origin/main", "clean-merge", nil},
		{"rename followed", renameClean, "", "origin/main", "clean-merge", nil},
		{"rename conflict", renameConflict, "", "origin/main", "conflicts", []string{"moved.txt"}},
		{"fast-forward", conflict, "HEAD~1", "origin/main", "fast-forward", nil},
		{"up to date", conflict, "HEAD", "HEAD~1", "already-up-to-date", nil},
		{"unrelated", unrelated, "main", "other", "unrelated-histories", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := snapshot(t, tt.repo)
			args := map[string]any{"repoPath": tt.repo, "targetRef": tt.target}
			if tt.current != "" {
				args["currentRef"] = tt.current
			}
			var d preflightData
			fxOK(t, "repo.conflictPreflight", args, &d)
			if d.Status != tt.status {
				t.Fatalf("status %s, want %s (%+v)", d.Status, tt.status, d)
			}
			if tt.paths == nil {
				tt.paths = []string{}
			}
			if fmt.Sprint(d.ConflictingPaths) != fmt.Sprint(tt.paths) || d.ConflictCount != len(tt.paths) {
				t.Fatalf("paths %v (%d), want %v", d.ConflictingPaths, d.ConflictCount, tt.paths)
			}
			if (d.MergeBaseOID == nil) != (tt.status == "unrelated-histories") || !isOID(d.CurrentOID) || !isOID(d.TargetOID) {
				t.Fatalf("oids %+v", d)
			}
			if diff := diffSnapshots(before, snapshot(t, tt.repo)); len(diff) > 0 {
				t.Fatalf("repository modified:\n%s", strings.Join(diff, "\n"))
			}
		})
	}
	t.Run("maxPaths", func(t *testing.T) {
		var d preflightData
		fxOK(t, "repo.conflictPreflight", map[string]any{"repoPath": conflict, "targetRef": "origin/main", "maxPaths": 1}, &d)
		if d.Truncated || len(d.ConflictingPaths) != 1 {
			t.Fatalf("%+v", d)
		}
	})
}

func TestRefInjectionRefused(t *testing.T) {
	referenceShape(t) // asserts the reference shape; lean_fleet_test.go covers the lean one
	repo := newRepo(t)
	git(t, repo, "update-ref", "refs/heads/--output=pwned", "HEAD")
	for _, f := range []string{"currentRef", "targetRef"} {
		args := map[string]any{"repoPath": repo, "targetRef": "main", f: "--output=pwned"}
		mustArgError(t, "repo.conflictPreflight", args, "arguments."+f+" must not start with '-'")
	}
	for _, tool := range []string{"diff.semantic", "diff.semanticFallbacks"} {
		var d map[string]any
		fxOK(t, tool, map[string]any{"repoPath": repo, "base": "--output=pwned", "head": "-p"}, &d)
		if fmt.Sprint(d["rejectedArguments"]) != "[base head]" {
			t.Fatalf("%s: %v", tool, d)
		}
	}
	// The ref exists; tools that enumerate refs or reflogs must not pass it on.
	var r radarData
	fxOK(t, "fleet.radar", map[string]any{"repoPaths": []string{repo}}, &r)
	var dg digestData
	fxOK(t, "fleet.digest", map[string]any{"repoPaths": []string{repo}, "sinceMs": 0}, &dg)
	assertNoPwned(t, repo)
	if _, err := os.Stat(filepath.Join(repo, "pwned")); err == nil {
		t.Fatal("pwned written")
	}
}

func TestSemanticFallback(t *testing.T) {
	repo := newRepo(t)
	t.Setenv("FLUXGIT_MCP_HANDSHAKE_ADDR", "")
	t.Setenv("FLUXGIT_GATEWAY_ADDR", "")
	t.Setenv("FLUXGIT_GATEWAY_URL", "")
	var d semanticData
	fxOK(t, "diff.semantic", map[string]any{"repoPath": repo, "base": "HEAD", "path": "a.txt"}, &d)
	want := textDiffArguments{RepoPath: repo, Base: "HEAD", Path: "a.txt"}
	if d.Supported || d.Fallback != "diff.text" || d.TextDiffArguments != want || d.GatewayConfigured {
		t.Fatalf("%+v", d)
	}
	var f semanticFallbacksData
	fxOK(t, "diff.semanticFallbacks", map[string]any{"repoPath": repo}, &f)
	if len(f.Fallbacks) != 1 || f.Fallbacks[0].Path != nil || f.Fallbacks[0].To != "diff.text" {
		t.Fatalf("%+v", f)
	}
	mustFail(t, "diff.semantic", map[string]any{"repoPath": tempDir(t)})
}

func TestFleetRadar(t *testing.T) {
	referenceShape(t) // asserts the reference shape; lean_fleet_test.go covers the lean one
	conflict := fxDiverged(t, map[string]string{"a.txt": fxLines},
		fxWriter(map[string]string{"a.txt": strings.Replace(fxLines, "two", "THEIRS", 1)}),
		fxWriter(map[string]string{"a.txt": strings.Replace(fxLines, "two", "MINE", 1)}))
	divergent := fxDiverged(t, map[string]string{"a.txt": fxLines},
		fxMv("a.txt", "moved.txt"),
		fxWriter(map[string]string{"a.txt": strings.Replace(fxLines, "nine", "NINE", 1)}))
	origin := newRepo(t)
	behind, _ := fxClone(t, origin)
	git(t, behind, "reset", "-q", "--hard", "HEAD") // in sync
	clean, _ := fxClone(t, newRepo(t))
	dirty := newRepo(t)
	write(t, dirty, "a.txt", "changed\n")
	merging := fxDiverged(t, map[string]string{"a.txt": fxLines},
		fxWriter(map[string]string{"a.txt": strings.Replace(fxLines, "two", "THEIRS", 1)}),
		fxWriter(map[string]string{"a.txt": strings.Replace(fxLines, "two", "MINE", 1)}))
	_ = execGit(merging, "merge", "-q", "origin/main").Run() // stops with a conflict

	before := map[string]map[string]string{}
	for _, r := range []string{conflict, divergent, clean} {
		before[r] = snapshot(t, r)
	}
	var d radarData
	fxOK(t, "fleet.radar", map[string]any{
		"repositories": []map[string]any{{"repoPath": conflict, "repoId": "c1", "label": "conflicting"}},
		"repoPaths":    []string{divergent, clean, dirty, merging, "/nonexistent/repo", conflict},
	}, &d)
	want := []struct{ status string }{{"potential_conflict"}, {"divergent"}, {"clean"}, {"local_changes"}, {"conflict"}, {"unknown"}}
	if len(d.Entries) != len(want) || d.RequestedCount != 7 || d.ScannedCount != 6 {
		t.Fatalf("entries %d requested %d scanned %d", len(d.Entries), d.RequestedCount, d.ScannedCount)
	}
	for i, w := range want {
		if d.Entries[i].Status != w.status {
			t.Errorf("entry %d (%s): status %s, want %s (err %q)", i, d.Entries[i].RepoPath, d.Entries[i].Status, w.status, d.Entries[i].Error)
		}
	}
	e := d.Entries[0]
	if *e.RepoID != "c1" || e.Label != "conflicting" || fmt.Sprint(e.PotentialConflictPaths) != "[a.txt]" || *e.PotentialConflictTarget != "origin/main" || e.Ahead != 1 || e.Behind != 1 {
		t.Errorf("conflict entry %+v", e)
	}
	if d.Entries[4].ConflictOperation == nil || *d.Entries[4].ConflictOperation != "merge" {
		t.Errorf("merging entry %+v", d.Entries[4])
	}
	if d.Entries[3].Dirty != true || d.DirtyCount < 1 || d.FailedCount != 1 || d.ConflictCount != 1 {
		t.Errorf("counts %+v", d)
	}
	if len(d.AttentionStack) != 5 || d.AttentionStack[0].Status != "conflict" || d.AttentionStack[1].Status != "potential_conflict" {
		t.Errorf("attention %+v", d.AttentionStack)
	}
	for r, snap := range before {
		if diff := diffSnapshots(snap, snapshot(t, r)); len(diff) > 0 {
			t.Fatalf("%s modified:\n%s", r, strings.Join(diff, "\n"))
		}
	}
	var lim radarData
	fxOK(t, "fleet.radar", map[string]any{"repoPaths": []string{clean, dirty}, "maxRepos": 1}, &lim)
	if len(lim.Entries) != 1 || lim.TruncatedCount != 1 || !lim.Truncated {
		t.Fatalf("%+v", lim)
	}
}

func BenchmarkFleetRadar20(b *testing.B) {
	var paths []string
	for i := 0; i < 20; i++ {
		dir := b.TempDir()
		for _, args := range [][]string{{"init", "-q", "-b", "main"}} {
			if err := execGit(dir, args...).Run(); err != nil {
				b.Fatal(err)
			}
		}
		_ = os.WriteFile(filepath.Join(dir, "a.txt"), []byte(fxLines), 0o644)
		for _, args := range [][]string{{"add", "-A"}, {"commit", "-q", "-m", "c"}} {
			if err := execGit(dir, args...).Run(); err != nil {
				b.Fatal(err)
			}
		}
		if i%2 == 0 {
			_ = os.WriteFile(filepath.Join(dir, "b.txt"), []byte("x\n"), 0o644)
		}
		paths = append(paths, dir)
	}
	raw, _ := json.Marshal(map[string]any{"repoPaths": paths})
	p := New()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := p.CallTool(b.Context(), &sdk.Call{Tool: "fleet.radar", Arguments: raw})
		if err != nil || res.Error != nil {
			b.Fatal(err, res)
		}
	}
}
