//go:build unix

package tests

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// outsideMarker is the commit subject, branch name and file name of the
// repository outside the allowed roots; no reply may ever contain it.
const outsideMarker = "OUTSIDE-MARKER-5c1e"

// stagedOnly is a file staged in the outside repository's index only.
const stagedOnly = "staged-only-" + outsideMarker + ".txt"

// escapeLayout is a root (the only allowed one) and an outside repository
// with a marker commit, branch, reflog entry and staged file.
type escapeLayout struct {
	base, root, outside string
	outsideHead         string
}

func newEscapeLayout(t *testing.T) *escapeLayout {
	t.Helper()
	base := canonicalTempDir(t)
	l := &escapeLayout{base: base, root: filepath.Join(base, "root"), outside: filepath.Join(base, "elsewhere", "secret")}
	for _, d := range []string{l.root, l.outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	git(t, l.outside, "init", "-q", "-b", "main")
	writeFile(t, filepath.Join(l.outside, outsideMarker+".txt"), outsideMarker+"\n")
	git(t, l.outside, "add", "-A")
	git(t, l.outside, "commit", "-q", "-m", outsideMarker)
	git(t, l.outside, "branch", outsideMarker)
	l.outsideHead = strings.TrimSpace(git(t, l.outside, "rev-parse", "HEAD"))
	return l
}

// innerRepo makes an in-root repository with one commit of its own.
func (l *escapeLayout) innerRepo(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join(l.root, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "init", "-q", "-b", "main")
	writeFile(t, filepath.Join(dir, "inner.txt"), "inner\n")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "inner commit")
	return dir
}

// pointMainAt makes refs/heads/main of repo name the outside commit.
func pointMainAt(t *testing.T, repo, oid string) {
	t.Helper()
	writeFile(t, filepath.Join(repo, ".git", "refs", "heads", "main"), oid+"\n")
}

// TestObjectStoreEscape builds in-root repositories that reach an outside
// repository through their git directory (a symlinked objects, refs,
// packed-refs, index, logs or pack directory, an absolute, relative or
// nested alternate) and proves, per case, that the leak is real when
// unconfined (control) and that every read tool refuses it with -32011
// when confined, naming the location but never the outside path.
func TestObjectStoreEscape(t *testing.T) {
	l := newEscapeLayout(t)
	outGit := filepath.Join(l.outside, ".git")
	cases := []struct {
		name     string
		location string // what the refusal must name
		build    func(t *testing.T, repo string)
		leakTool string // the tool that shows the marker when unconfined
		leakArgs map[string]any
	}{
		{"objects symlink", ".git/objects", func(t *testing.T, repo string) {
			symlink(t, filepath.Join(outGit, "objects"), filepath.Join(repo, ".git", "objects"))
			pointMainAt(t, repo, l.outsideHead)
		}, "repo.history", nil},
		{"refs symlink", ".git/refs", func(t *testing.T, repo string) {
			symlink(t, filepath.Join(outGit, "refs"), filepath.Join(repo, ".git", "refs"))
		}, "repo.refs", nil},
		{"packed-refs symlink", ".git/packed-refs", func(t *testing.T, repo string) {
			symlink(t, filepath.Join(outGit, "packed-refs"), filepath.Join(repo, ".git", "packed-refs"))
		}, "repo.refs", nil},
		{"index symlink", ".git/index", func(t *testing.T, repo string) {
			// Give the inner repository the outside commits (legitimately
			// copied), so only the index comes from outside: its staged
			// file appears in repo.status.
			git(t, repo, "fetch", "-q", l.outside, "main")
			git(t, repo, "reset", "-q", "--hard", "FETCH_HEAD")
			symlink(t, filepath.Join(outGit, "index"), filepath.Join(repo, ".git", "index"))
		}, "repo.status", nil},
		{"logs symlink", ".git/logs", func(t *testing.T, repo string) {
			symlink(t, filepath.Join(outGit, "logs"), filepath.Join(repo, ".git", "logs"))
		}, "repo.reflog", map[string]any{"refName": "refs/heads/" + outsideMarker}},
		{"pack directory symlink", ".git/objects/pack", func(t *testing.T, repo string) {
			symlink(t, filepath.Join(outGit, "objects", "pack"), filepath.Join(repo, ".git", "objects", "pack"))
			pointMainAt(t, repo, l.outsideHead)
		}, "repo.history", nil},
		{"absolute alternate", "objects/info/alternates", func(t *testing.T, repo string) {
			writeFile(t, filepath.Join(repo, ".git", "objects", "info", "alternates"), filepath.Join(outGit, "objects")+"\n")
			pointMainAt(t, repo, l.outsideHead)
		}, "commit.details", map[string]any{"commit": "main"}},
		{"relative alternate", "objects/info/alternates", func(t *testing.T, repo string) {
			objects := filepath.Join(repo, ".git", "objects")
			rel, err := filepath.Rel(objects, filepath.Join(outGit, "objects"))
			if err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(objects, "info", "alternates"), "# comment\n\n"+rel+"\n")
			pointMainAt(t, repo, l.outsideHead)
		}, "diff.text", map[string]any{"base": "main~1", "head": "main"}},
		{"nested alternate", "objects/info/alternates", func(t *testing.T, repo string) {
			mid := l.innerRepo(t, "mid-"+filepath.Base(repo))
			writeFile(t, filepath.Join(mid, ".git", "objects", "info", "alternates"), filepath.Join(outGit, "objects")+"\n")
			writeFile(t, filepath.Join(repo, ".git", "objects", "info", "alternates"), filepath.Join(mid, ".git", "objects")+"\n")
			pointMainAt(t, repo, l.outsideHead)
		}, "repo.history", nil},
	}
	git(t, l.outside, "pack-refs", "--all", "--no-prune")
	git(t, l.outside, "repack", "-q", "-a", "-d")
	// A second outside commit so diff.text main~1..main has a parent.
	writeFile(t, filepath.Join(l.outside, "more.txt"), outsideMarker+" more\n")
	git(t, l.outside, "add", "-A")
	git(t, l.outside, "commit", "-q", "-m", outsideMarker+" second")
	git(t, l.outside, "repack", "-q", "-a", "-d")
	l.outsideHead = strings.TrimSpace(git(t, l.outside, "rev-parse", "HEAD"))
	// Staged only in the outside index, in no commit.
	writeFile(t, filepath.Join(l.outside, stagedOnly), "staged\n")
	git(t, l.outside, "add", stagedOnly)

	open := startServer(t, baseEnv(t))
	initialize(t, open)
	confined := startServer(t, append(baseEnv(t), "FLUXGIT_MCP_ALLOWED_ROOTS="+l.root))
	initialize(t, confined)
	id := 0
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			repo := l.innerRepo(t, strings.ReplaceAll(tc.name, " ", "-"))
			tc.build(t, repo)
			args := func(extra map[string]any) map[string]any {
				a := map[string]any{"repoPath": repo}
				for k, v := range extra {
					a[k] = v
				}
				return a
			}
			// Control: unconfined, the outside data really comes through.
			id++
			r := open.call(id, "tools/call", map[string]any{"name": tc.leakTool, "arguments": args(tc.leakArgs)})
			if !strings.Contains(r.raw, outsideMarker) || tc.name == "index symlink" && !strings.Contains(r.raw, stagedOnly) {
				t.Fatalf("control: %s did not show the outside repository, so the case proves nothing: %s", tc.leakTool, r.raw)
			}
			for _, tool := range []struct {
				name string
				args map[string]any
			}{
				{tc.leakTool, tc.leakArgs}, {"repo.history", nil}, {"commit.details", map[string]any{"commit": "HEAD"}},
				{"diff.text", nil}, {"repo.status", nil}, {"repo.refs", nil},
			} {
				id++
				r := confined.call(id, "tools/call", map[string]any{"name": tool.name, "arguments": args(tool.args)})
				if r.Error == nil || r.Error.Code != -32011 {
					t.Fatalf("%s: want -32011, got %s", tool.name, r.raw)
				}
				if strings.Contains(r.raw, outsideMarker) || strings.Contains(r.raw, l.outside) || strings.Contains(r.raw, filepath.Dir(l.outside)) {
					t.Fatalf("%s: refusal leaks the outside repository: %s", tool.name, r.raw)
				}
				var data struct{ Details string }
				_ = json.Unmarshal(r.Error.Data, &data)
				if !strings.Contains(data.Details, tc.location) || !strings.Contains(data.Details, "fix:") {
					t.Fatalf("%s: details %q should name %s and say how to fix it", tool.name, data.Details, tc.location)
				}
			}
		})
	}

	// Links and alternates that stay inside the roots are fine.
	t.Run("in-root alternate and symlink", func(t *testing.T) {
		mid := l.innerRepo(t, "shared")
		repo := l.innerRepo(t, "borrower")
		writeFile(t, filepath.Join(repo, ".git", "objects", "info", "alternates"), filepath.Join(mid, ".git", "objects")+"\n")
		symlink(t, filepath.Join(mid, ".git", "info"), filepath.Join(repo, ".git", "info"))
		id++
		r := confined.call(id, "tools/call", map[string]any{"name": "repo.history", "arguments": map[string]any{"repoPath": repo}})
		if p := toolPayload(t, r); p["error"] != nil {
			t.Fatalf("in-root links refused: %s", r.raw)
		}
	})
}

// TestCheckThenOpenSwaps swaps CODEOWNERS (read by repo.scope) and a
// conflicted file (scanned by conflict.read) between a regular file, a
// symlink to an outside file and a FIFO while the tools run: no reply may
// show the outside text, and no call may hang on the FIFO (the harness
// gives each call 60 s).
func TestCheckThenOpenSwaps(t *testing.T) {
	l := newEscapeLayout(t)
	secret := filepath.Join(l.outside, "owners")
	writeFile(t, secret, "* @"+outsideMarker+"\n")

	repo := l.innerRepo(t, "repo")
	mergeConflict(t, repo, "conflict.txt")
	conflicted := filepath.Join(repo, "conflict.txt")
	conflictText, err := os.ReadFile(conflicted)
	if err != nil {
		t.Fatal(err)
	}
	owners := filepath.Join(repo, "CODEOWNERS")
	writeFile(t, owners, "* @inner-team\n")

	s := startServer(t, append(baseEnv(t), "FLUXGIT_MCP_ALLOWED_ROOTS="+l.root, "FLUXGIT_MCP_AUDIT_DISABLED=1"))
	initialize(t, s)
	id := 0
	call := func(tool string) response {
		id++
		args := map[string]any{"repoPath": repo}
		if tool == "repo.scope" {
			args["path"] = "."
		}
		return s.call(id, "tools/call", map[string]any{"name": tool, "arguments": args})
	}

	// Static cases first: each replacement on its own, with a clear result.
	for _, tc := range []struct {
		name    string
		replace func(path string)
	}{
		{"symlink to an outside file", func(p string) { symlink(t, secret, p) }},
		{"fifo", func(p string) {
			_ = os.Remove(p)
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.replace(owners)
			tc.replace(conflicted)
			r := call("repo.scope")
			p := toolPayload(t, r)
			if strings.Contains(r.raw, outsideMarker) || p["error"] != nil {
				t.Fatalf("repo.scope: %s", r.raw)
			}
			if owners := p["data"].(map[string]any)["owners"]; owners != nil {
				t.Fatalf("repo.scope used a replaced CODEOWNERS: %v", owners)
			}
			r = call("conflict.read")
			p = toolPayload(t, r)
			files := p["data"].(map[string]any)["files"].([]any)
			// Lean shape: worktree says why; the reference shape: regionsSkipped.
			skipped, _ := files[0].(map[string]any)["worktree"].(string)
			if skipped == "" || strings.Contains(r.raw, outsideMarker) {
				t.Fatalf("conflict.read scanned a replaced file: %s", r.raw)
			}
		})
	}

	// Then the race: swap continuously while calling.
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; !stop.Load(); i++ {
			for _, f := range []struct {
				path string
				text []byte
			}{{owners, []byte("* @inner-team\n")}, {conflicted, conflictText}} {
				tmp := f.path + ".tmp"
				_ = os.Remove(tmp)
				switch i % 3 {
				case 0:
					_ = os.WriteFile(tmp, f.text, 0o644)
				case 1:
					_ = os.Symlink(secret, tmp)
				case 2:
					_ = syscall.Mkfifo(tmp, 0o644)
				}
				_ = os.Rename(tmp, f.path)
			}
			time.Sleep(100 * time.Microsecond)
		}
	}()
	defer func() {
		stop.Store(true)
		wg.Wait()
	}()
	for i := 0; i < 150; i++ {
		for _, tool := range []string{"repo.scope", "conflict.read"} {
			r := call(tool)
			if strings.Contains(r.raw, outsideMarker) {
				t.Fatalf("%s leaked the outside file: %s", tool, r.raw)
			}
			if p := toolPayload(t, r); p["error"] != nil {
				t.Fatalf("%s failed: %s", tool, r.raw)
			}
		}
	}
}

// TestHistoryCursorBounds: git parses --skip into a C int, so a cursor past
// 2^31-1 would wrap and a client following nextCursor would loop forever.
func TestHistoryCursorBounds(t *testing.T) {
	repo := fixtureRepo(t)
	s := startServer(t, baseEnv(t))
	initialize(t, s)
	for i, tc := range []struct {
		cursor string
		ok     bool
		want   string
	}{
		{"2147483647", true, ""},
		{"2147483648", false, "at most 2147483647"},
		{"4294967297", false, "at most 2147483647"},
		{"99999999999", false, "cursor"}, // longer than the schema allows
	} {
		t.Run(tc.cursor, func(t *testing.T) {
			r := s.call(i+1, "tools/call", map[string]any{"name": "repo.history", "arguments": map[string]any{"repoPath": repo, "cursor": tc.cursor}})
			if tc.ok {
				p := toolPayload(t, r)
				d := p["data"].(map[string]any)
				if p["error"] != nil || len(d["commits"].([]any)) != 0 || d["nextCursor"] != nil {
					t.Fatalf("want an empty last page: %s", r.raw)
				}
				return
			}
			if !strings.Contains(r.raw, tc.want) || strings.Contains(r.raw, `"commits"`) {
				t.Fatalf("want a refusal mentioning %q, got %s", tc.want, r.raw)
			}
			if r.Error != nil && r.Error.Code != -32602 {
				t.Fatalf("want -32602, got %s", r.raw)
			}
		})
	}
}

// TestConflictReadNoConflict: without a conflict the data is exactly
// {inConflict:false, hint}.
func TestConflictReadNoConflict(t *testing.T) {
	repo := fixtureRepo(t)
	s := startServer(t, baseEnv(t))
	initialize(t, s)
	p := toolPayload(t, s.call(1, "tools/call", map[string]any{"name": "conflict.read", "arguments": map[string]any{"repoPath": repo}}))
	d, _ := p["data"].(map[string]any)
	if len(d) != 2 || d["inConflict"] != false || d["hint"] == nil || d["hint"] == "" {
		t.Fatalf("data = %v", d)
	}
}

// TestSubmoduleGitDirEscape: git never runs inside a submodule, but status
// and diff still read a checked-out submodule's HEAD in-process, through
// <path>/.git. A .git file or symlink leading out of the roots would show the outside repository's commit id, so the
// repository is refused, naming the submodule; the same layout with its
// git data inside the roots is served.
func TestSubmoduleGitDirEscape(t *testing.T) {
	l := newEscapeLayout(t)
	outGit := filepath.Join(l.outside, ".git")
	open := startServer(t, baseEnv(t))
	initialize(t, open)
	confined := startServer(t, append(baseEnv(t), "FLUXGIT_MCP_ALLOWED_ROOTS="+l.root))
	initialize(t, confined)
	// withGitlink records sub as a submodule at the repository's own
	// commit, so any other HEAD read through sub/.git shows as a change.
	withGitlink := func(t *testing.T, name string) string {
		repo := l.innerRepo(t, name)
		head := strings.TrimSpace(git(t, repo, "rev-parse", "HEAD"))
		git(t, repo, "update-index", "--add", "--cacheinfo", "160000,"+head+",sub")
		git(t, repo, "commit", "-q", "-m", "add gitlink")
		return repo
	}
	id := 0
	for _, tc := range []struct {
		name  string
		build func(t *testing.T, repo string)
	}{
		{"gitdir file", func(t *testing.T, repo string) {
			writeFile(t, filepath.Join(repo, "sub", ".git"), "gitdir: "+outGit+"\n")
		}},
		{"symlinked .git", func(t *testing.T, repo string) {
			if err := os.MkdirAll(filepath.Join(repo, "sub"), 0o755); err != nil {
				t.Fatal(err)
			}
			symlink(t, outGit, filepath.Join(repo, "sub", ".git"))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repo := withGitlink(t, strings.ReplaceAll(tc.name, " ", "-"))
			tc.build(t, repo)
			args := map[string]any{"repoPath": repo}
			id++
			if r := open.call(id, "tools/call", map[string]any{"name": "diff.text", "arguments": args}); !strings.Contains(r.raw, l.outsideHead) {
				t.Fatalf("control: unconfined diff.text did not show the outside commit, so the case proves nothing: %s", r.raw)
			}
			for _, tool := range []string{"diff.text", "repo.status", "repo.brief", "worktree.changes"} {
				id++
				r := confined.call(id, "tools/call", map[string]any{"name": tool, "arguments": args})
				if r.Error == nil || r.Error.Code != -32011 {
					t.Fatalf("%s: want -32011, got %s", tool, r.raw)
				}
				if strings.Contains(r.raw, l.outsideHead) || strings.Contains(r.raw, l.outside) {
					t.Fatalf("%s: refusal leaks the outside repository: %s", tool, r.raw)
				}
				if !strings.Contains(string(r.Error.Data), "submodule sub") || !strings.Contains(string(r.Error.Data), "fix:") {
					t.Fatalf("%s: the refusal should name submodule sub and say how to fix it: %s", tool, r.raw)
				}
			}
		})
	}
	t.Run("in-root submodule git dir", func(t *testing.T) {
		repo := withGitlink(t, "in-root")
		other := l.innerRepo(t, "in-root-data")
		writeFile(t, filepath.Join(repo, "sub", ".git"), "gitdir: "+filepath.Join(other, ".git")+"\n")
		id++
		r := confined.call(id, "tools/call", map[string]any{"name": "repo.status", "arguments": map[string]any{"repoPath": repo}})
		if r.Error != nil || strings.Contains(r.raw, `"isError":true`) {
			t.Fatalf("a submodule whose git data is inside the roots was refused: %s", r.raw)
		}
	})
}

// TestConfigIncludeEscape: git reads a file named by include.path or
// includeIf.<condition>.path as the repository's own configuration, so an
// include of another repository's config shows that repository's remotes.
// Confined, such a repository is refused, naming the setting; an include
// that stays inside the roots is served.
func TestConfigIncludeEscape(t *testing.T) {
	l := newEscapeLayout(t)
	leak := "leakremote" + outsideMarker
	git(t, l.outside, "remote", "add", leak, "https://example.invalid/secret.git")
	outCfg := filepath.Join(l.outside, ".git", "config")
	open := startServer(t, baseEnv(t))
	initialize(t, open)
	confined := startServer(t, append(baseEnv(t), "FLUXGIT_MCP_ALLOWED_ROOTS="+l.root))
	initialize(t, confined)
	id := 0
	for _, tc := range []struct{ name, key, value string }{
		{"absolute include", "include.path", outCfg},
		{"relative include", "include.path", ""}, // filled in below: relative to .git/config
		{"includeIf", "includeIf.gitdir:/.path", outCfg},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repo := l.innerRepo(t, strings.ReplaceAll(tc.name, " ", "-"))
			value := tc.value
			if value == "" {
				rel, err := filepath.Rel(filepath.Join(repo, ".git"), outCfg)
				if err != nil {
					t.Fatal(err)
				}
				value = rel
			}
			git(t, repo, "config", "--add", tc.key, value)
			args := map[string]any{"repoPath": repo}
			id++
			if r := open.call(id, "tools/call", map[string]any{"name": "repo.refs", "arguments": args}); !strings.Contains(r.raw, leak) {
				t.Fatalf("control: unconfined repo.refs did not show the outside remote, so the case proves nothing: %s", r.raw)
			}
			for _, tool := range []string{"repo.refs", "repo.brief", "repo.status"} {
				id++
				r := confined.call(id, "tools/call", map[string]any{"name": tool, "arguments": args})
				if r.Error == nil || r.Error.Code != -32011 {
					t.Fatalf("%s: want -32011, got %s", tool, r.raw)
				}
				if strings.Contains(r.raw, leak) || strings.Contains(r.raw, l.outside) {
					t.Fatalf("%s: refusal leaks the outside repository: %s", tool, r.raw)
				}
				if d := string(r.Error.Data); !strings.Contains(strings.ToLower(d), strings.ToLower(strings.SplitN(tc.key, ".", 2)[0])) || !strings.Contains(d, "fix:") {
					t.Fatalf("%s: the refusal should name the include setting and say how to fix it: %s", tool, r.raw)
				}
			}
		})
	}
	t.Run("in-root include", func(t *testing.T) {
		repo := l.innerRepo(t, "in-root-include")
		shared := filepath.Join(l.root, "shared.gitconfig")
		writeFile(t, shared, "[remote \"team\"]\n\turl = https://example.invalid/team.git\n")
		git(t, repo, "config", "include.path", shared)
		id++
		r := confined.call(id, "tools/call", map[string]any{"name": "repo.refs", "arguments": map[string]any{"repoPath": repo}})
		if r.Error != nil || !strings.Contains(r.raw, `"team"`) {
			t.Fatalf("an include inside the roots should be served and followed: %s", r.raw)
		}
	})
}
