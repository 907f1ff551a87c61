package repo

import (
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/fluxgit/fluxgit/plugins/sdk"
)

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

type subFixture struct {
	top, outside          string
	libA1, libA2, libBOID string
}

// submoduleRepo builds: modA (initialized, checked out one commit behind
// the recorded pointer) containing inner (initialized, clean); modB
// (deinitialized); evil, a gitlink whose .git file points outside.
func submoduleRepo(t *testing.T) subFixture {
	t.Helper()
	var f subFixture
	libB := newRepo(t)
	f.libBOID = git(t, libB, "rev-parse", "HEAD")
	libA := newRepo(t)
	f.libA1 = git(t, libA, "rev-parse", "HEAD")
	git(t, libA, "-c", "protocol.file.allow=always", "submodule", "add", "-q", libB, "inner")
	f.libA2 = commitAll(t, libA, "add inner")
	top := newRepo(t)
	git(t, top, "-c", "protocol.file.allow=always", "submodule", "add", "-q", libA, "modA")
	git(t, top, "-c", "protocol.file.allow=always", "submodule", "add", "-q", libB, "modB")
	commitAll(t, top, "add submodules")
	git(t, top, "-c", "protocol.file.allow=always", "submodule", "update", "-q", "--init", "--recursive")
	git(t, top, "submodule", "deinit", "-q", "-f", "modB")
	// drift modA's inner repo? no: drift modA itself by one commit, keeping
	// inner checked out (detached checkout of the recorded commit).
	git(t, filepath.Join(top, "modA"), "commit", "-q", "--allow-empty", "-m", "local drift")
	// A gitlink whose .git file leads outside the repository.
	f.outside = newRepo(t)
	outOID := git(t, f.outside, "rev-parse", "HEAD")
	git(t, top, "update-index", "--add", "--cacheinfo", "160000,"+outOID+",evil")
	write(t, top, "evil/.git", "gitdir: "+filepath.Join(f.outside, ".git")+"\n")
	f.top = top
	return f
}

func TestSubmoduleStatus(t *testing.T) {
	f := submoduleRepo(t)
	drift := git(t, filepath.Join(f.top, "modA"), "rev-parse", "HEAD")
	var d submoduleData
	raw := mustOK(t, "submodule.status", map[string]any{"repoPath": f.top}, &d)
	want := []submodule{
		{State: "+", Commit: drift, Recorded: f.libA2, Path: "modA"},
		{State: " ", Commit: f.libBOID, Path: "modA/inner", Depth: 1},
		{State: "-", Commit: f.libBOID, Path: "modB"},
	}
	if !reflect.DeepEqual(d.Submodules, want) || d.Total != 3 || d.Skipped != 1 {
		t.Fatalf("got %s", raw)
	}
	if !strings.Contains(raw, `"description":""`) {
		t.Fatal(raw)
	}

	t.Run("path filter", func(t *testing.T) {
		var d submoduleData
		mustOK(t, "submodule.status", map[string]any{"repoPath": f.top, "path": "modA/"}, &d)
		if d.Total != 2 || d.Submodules[1].Path != "modA/inner" || d.Path == nil || *d.Path != "modA" {
			t.Fatalf("%+v", d)
		}
	})
	t.Run("allowed roots exclude a submodule gitdir", func(t *testing.T) {
		// git would read evil's HEAD from outside the roots during a
		// status or diff, so the repository is refused, naming evil.
		_, err := call(t, "submodule.status", map[string]any{"repoPath": f.top}, f.top)
		var re *sdk.Error
		if !errors.As(err, &re) || re.Kind != sdk.KindOutsideRoots || !strings.Contains(fmt.Sprint(re.Data["details"]), "submodule evil") {
			t.Fatalf("want an outside-roots refusal naming submodule evil, got %v", err)
		}
		// With the outside repository inside the roots it is served.
		if res, err := call(t, "submodule.status", map[string]any{"repoPath": f.top}, f.top, f.outside); err != nil || res.Error != nil {
			t.Fatalf("%v %+v", err, res)
		}
	})
	t.Run("no submodules", func(t *testing.T) {
		var d submoduleData
		raw := mustOK(t, "submodule.status", map[string]any{"repoPath": newRepo(t)}, &d)
		if !strings.Contains(raw, `"submodules":[]`) || d.Total != 0 {
			t.Fatal(raw)
		}
	})
}

func TestSubmoduleConflictState(t *testing.T) {
	repo := newRepo(t)
	oids := []string{}
	for i := 0; i < 3; i++ {
		oids = append(oids, fmt.Sprintf("%040x", i+1))
	}
	info := fmt.Sprintf("160000 %s 1\tsub\n160000 %s 2\tsub\n160000 %s 3\tsub\n", oids[0], oids[1], oids[2])
	cmd := execGit(repo, "update-index", "--index-info")
	cmd.Stdin = strings.NewReader(info)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	var d submoduleData
	mustOK(t, "submodule.status", map[string]any{"repoPath": repo}, &d)
	if len(d.Submodules) != 1 || d.Submodules[0].State != "U" || d.Submodules[0].Commit != oids[1] {
		t.Fatalf("%+v", d)
	}
}

func TestSubmoduleEntryCap(t *testing.T) {
	repo := newRepo(t)
	var b strings.Builder
	for i := 0; i <= maxSubmoduleEntries; i++ {
		fmt.Fprintf(&b, "160000 %040x 0\ts%04d\n", i+1, i)
	}
	cmd := execGit(repo, "update-index", "--index-info")
	cmd.Stdin = strings.NewReader(b.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	fd := mustFail(t, "submodule.status", map[string]any{"repoPath": repo})
	if !strings.Contains(fd.Details, "more than 1000 submodules") {
		t.Fatalf("%+v", fd)
	}
	// repo.brief stays within its budget and flags the cut instead.
	d, raw := briefOf(t, repo)
	if !d.Submodules.AttentionTruncated || len([]rune(raw)) >= briefBudget {
		t.Fatalf("%d %s", len(raw), raw)
	}
	_ = os.Remove
}
