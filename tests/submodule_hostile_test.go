package tests

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// armConfig appends program-valued settings that git would run from a
// submodule's own configuration: filters (selected by the submodule's
// .gitattributes), diff drivers and, if asked, an fsmonitor (only where no
// submodule lies below: an fsmonitor that answers nonsense makes plain git
// skip the submodules it would otherwise visit, which the control needs).
func armConfig(t *testing.T, config, script string, fsmonitor bool) {
	t.Helper()
	cfg := ""
	if fsmonitor {
		cfg = "\n[core]\n\tfsmonitor = " + script
	}
	cfg += "\n[diff \"evil\"]\n\ttextconv = " + script + "\n\tcommand = " + script +
		"\n[filter \"evil\"]\n\tclean = " + script + "\n\tsmudge = " + script + "\n\tprocess = " + script + "\n"
	f, err := os.OpenFile(config, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(cfg); err != nil {
		t.Fatal(err)
	}
}

// makeStatDirty gives a tracked file a new mtime with the same content, so
// git has to run the clean filter to compare it with the index.
func makeStatDirty(t *testing.T, path string) {
	t.Helper()
	future := time.Now().Add(3 * time.Second)
	if err := os.Chtimes(path, future, future); err != nil {
		t.Fatal(err)
	}
}

// No configuration of any repository git touches may run a program: not
// the superproject's, not a submodule's at any depth, not a submodule
// worktree's. The superproject below has a submodule "lib" (with a nested
// submodule "lib/inner") whose own configs define filters, diff drivers
// and an fsmonitor, applied by their own .gitattributes, with stat-dirty
// files; the superproject asks for diff.submodule=diff, submodule.recurse
// and a submodule summary, and its .gitmodules says ignore=none. Every
// git-read tool is called through the real host; the marker must never
// appear. The control at the end proves plain git status and git diff
// run it.
func TestSubmoduleConfigNeverRunsAProgram(t *testing.T) {
	base := canonicalTempDir(t)
	marker := filepath.Join(base, "MARKER")
	script := filepath.Join(base, "evil.sh")
	writeFile(t, script, "#!/bin/sh\necho ran \"$(pwd -P)\" \"$@\" >> "+marker+"\ncat\n")
	if err := os.Chmod(script, 0o755); err != nil {
		t.Fatal(err)
	}
	mk := func(name string) string {
		dir := filepath.Join(base, name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		git(t, dir, "init", "-q", "-b", "main")
		writeFile(t, filepath.Join(dir, name+".txt"), name+"\n")
		git(t, dir, "add", "-A")
		git(t, dir, "commit", "-q", "-m", name)
		return dir
	}
	sub := func(dir, url, path string) {
		git(t, dir, "-c", "protocol.file.allow=always", "submodule", "add", "-q", url, path)
	}
	innerSrc := mk("innersrc")
	libSrc := mk("libsrc")
	sub(libSrc, innerSrc, "inner")
	git(t, libSrc, "commit", "-q", "-m", "add inner")
	super := mk("super")
	sub(super, libSrc, "lib")
	git(t, super, "commit", "-q", "-m", "add lib")
	git(t, super, "-c", "protocol.file.allow=always", "submodule", "update", "-q", "--init", "--recursive")
	lib := filepath.Join(super, "lib")
	inner := filepath.Join(lib, "inner")
	// A submodule bump, so diffs between commits show a gitlink change.
	writeFile(t, filepath.Join(lib, "libsrc.txt"), "lib v2\n")
	git(t, lib, "commit", "-q", "-am", "lib v2")
	git(t, super, "add", "lib")
	git(t, super, "commit", "-q", "-m", "bump lib")
	// A linked worktree of the submodule, inside the roots.
	libWT := filepath.Join(base, "libwt")
	git(t, lib, "worktree", "add", "-q", "--detach", libWT)

	// Arm every level.
	libGitDir := strings.TrimSpace(git(t, lib, "rev-parse", "--path-format=absolute", "--git-common-dir"))
	innerGitDir := strings.TrimSpace(git(t, inner, "rev-parse", "--path-format=absolute", "--git-common-dir"))
	if !strings.HasPrefix(libGitDir, filepath.Join(super, ".git", "modules")) || !strings.HasPrefix(innerGitDir, libGitDir) {
		t.Fatalf("unexpected submodule layout: %s %s", libGitDir, innerGitDir)
	}
	armConfig(t, filepath.Join(libGitDir, "config"), script, false)
	armConfig(t, filepath.Join(innerGitDir, "config"), script, true)
	for _, dir := range []string{lib, inner, libWT} {
		writeFile(t, filepath.Join(dir, ".gitattributes"), "* filter=evil diff=evil\n")
	}
	makeStatDirty(t, filepath.Join(lib, "libsrc.txt"))
	makeStatDirty(t, filepath.Join(inner, "innersrc.txt"))
	makeStatDirty(t, filepath.Join(libWT, "libsrc.txt"))
	git(t, super, "config", "diff.submodule", "diff")
	git(t, super, "config", "submodule.recurse", "true")
	git(t, super, "config", "status.submoduleSummary", "true")
	git(t, super, "config", "-f", ".gitmodules", "submodule.lib.ignore", "none")

	before := snapshot(t, base)

	runDir := t.TempDir()
	env := append(baseEnv(t), "FLUXGIT_RUN_DIR="+runDir, "FLUXGIT_GATEWAY_ADDR=127.0.0.1:9",
		"FLUXGIT_MCP_AUDIT_DISABLED=1", "FLUXGIT_MCP_ALLOWED_ROOTS="+base)
	s := startServer(t, env)
	initialize(t, s)
	type call struct {
		tool string
		args map[string]any
	}
	var calls []call
	for _, repo := range []string{super, lib, libWT} {
		calls = append(calls,
			call{"repo.brief", map[string]any{"repoPath": repo}},
			call{"repo.scope", map[string]any{"repoPath": repo, "path": "."}},
			call{"repo.status", map[string]any{"repoPath": repo}},
			call{"repo.refs", map[string]any{"repoPath": repo}},
			call{"repo.branchStack", map[string]any{"repoPath": repo}},
			call{"repo.history", map[string]any{"repoPath": repo}},
			call{"repo.history", map[string]any{"repoPath": repo, "paths": []string{"sub"}, "firstParent": true}},
			call{"history.search", map[string]any{"repoPath": repo, "text": "sub"}},
			call{"history.search", map[string]any{"repoPath": repo, "regex": "s.b", "paths": []string{"sub"}}},
			call{"repo.reflog", map[string]any{"repoPath": repo}},
			call{"commit.details", map[string]any{"repoPath": repo, "commit": "HEAD"}},
			call{"worktree.changes", map[string]any{"repoPath": repo}},
			call{"worktree.list", map[string]any{"repoPath": repo}},
			call{"submodule.status", map[string]any{"repoPath": repo}},
			call{"diff.text", map[string]any{"repoPath": repo}},
			call{"diff.text", map[string]any{"repoPath": repo, "base": "HEAD~1", "head": "HEAD"}},
			call{"diff.text", map[string]any{"repoPath": repo, "base": "HEAD~1"}},
			call{"conflict.read", map[string]any{"repoPath": repo}},
			call{"file.read", map[string]any{"repoPath": repo, "path": ".gitmodules"}},
			call{"file.read", map[string]any{"repoPath": repo, "path": ".gitmodules", "worktree": true}},
			call{"file.blame", map[string]any{"repoPath": repo, "path": ".gitmodules", "detectCopies": true}},
			call{"fleet.digest", map[string]any{"sinceMs": 0, "repoPaths": []string{repo}}},
			call{"fleet.radar", map[string]any{"repoPaths": []string{repo}}},
			call{"repo.conflictPreflight", map[string]any{"repoPath": repo, "targetRef": "HEAD~1"}},
			call{"diff.semantic", map[string]any{"repoPath": repo}},
			call{"diff.semanticFallbacks", map[string]any{"repoPath": repo}},
			call{"safety.timeline", map[string]any{"repoPath": repo}},
			call{"safety.eventDetails", map[string]any{"repoPath": repo}},
			call{"flux.latestRestorePoint", map[string]any{"repoPath": repo, "repoId": "r1"}},
			call{"flux.restorePoints", map[string]any{"repoPath": repo, "repoId": "r1"}},
			call{"flux.restorePointDetails", map[string]any{"repoPath": repo, "repoId": "r1"}},
			call{"agents.presence", map[string]any{"repoPath": repo}},
		)
		for _, c := range handshakeCalls(repo) {
			calls = append(calls, call(c))
		}
	}
	seen := map[string]bool{}
	for i, c := range calls {
		seen[c.tool] = true
		r := s.call(i+1, "tools/call", map[string]any{"name": c.tool, "arguments": c.args})
		if r.Error != nil {
			t.Errorf("%s %v: JSON-RPC error %s", c.tool, c.args, r.raw)
			continue
		}
		toolPayload(t, r)
		if b, err := os.ReadFile(marker); err == nil {
			t.Fatalf("%s %v ran a program from a submodule's configuration:\n%s", c.tool, c.args, b)
		}
	}
	var listed struct {
		Tools []struct{ Name string } `json:"tools"`
	}
	if err := json.Unmarshal(s.call(1000, "tools/list", nil).Result, &listed); err != nil {
		t.Fatal(err)
	}
	for _, tool := range listed.Tools {
		if !seen[tool.Name] && !strings.HasPrefix(tool.Name, "shift_") {
			t.Errorf("tool %s not exercised by this test", tool.Name)
		}
	}

	// The submodule's dirtiness is still reported (fluxgit's own hardened
	// run inside it, not git's recursion), so the guard is not vacuous.
	r := s.call(1001, "tools/call", map[string]any{"name": "repo.status", "arguments": map[string]any{"repoPath": super}})
	st := toolPayload(t, r)
	data, _ := st["data"].(map[string]any)
	entries, _ := data["entries"].([]any)
	found := false
	for _, e := range entries {
		if e == " M lib" { // the lean entry "XY path"
			found = true
		}
	}
	if !found {
		t.Fatalf("repo.status does not report the dirty submodule lib: %s", r.raw)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the marker appeared")
	}
	// Nothing was written anywhere: superproject, submodules' git
	// directories and indexes, the submodule worktree.
	after := snapshot(t, base)
	for p, sig := range before {
		if after[p] != sig {
			t.Errorf("changed: %s\n before %s\n after  %s", p, sig, after[p])
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			t.Errorf("created: %s", p)
		}
	}

	// Control: plain git runs the submodules' programs: status and diff in
	// the superproject (the diff driver through diff.submodule=diff), and
	// the nested submodule's through plain git status in lib.
	controls := []struct {
		dir, reach string
		args       []string
	}{
		{super, lib, []string{"status"}},
		{super, lib, []string{"diff"}},
		{lib, inner, []string{"status"}},
	}
	for _, c := range controls {
		os.Remove(marker)
		// Plain git refreshes the indexes it reads: make them stale again.
		makeStatDirty(t, filepath.Join(lib, "libsrc.txt"))
		makeStatDirty(t, filepath.Join(inner, "innersrc.txt"))
		cmd := gitCmd(c.dir, c.args...)
		cmd.Env = append(gitEnv(), "GIT_CONFIG_NOSYSTEM=1", "GIT_TRACE=1")
		trace, _ := cmd.CombinedOutput()
		b, err := os.ReadFile(marker)
		if err != nil || !strings.Contains(string(b), "ran "+c.reach) {
			t.Fatalf("control: plain git %v in %s did not run the program configured in %s (%v); the test proves nothing\n%s\n%s", c.args, c.dir, c.reach, err, b, trace)
		}
	}
}
