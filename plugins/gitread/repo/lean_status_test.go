package repo

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/fluxgit/fluxgit/internal/resultshape"
)

// callBoth calls tool once in the reference shape and once in the lean one
// and returns both data documents.
func callBoth(t *testing.T, tool string, args map[string]any) (ref, lean string) {
	t.Helper()
	t.Setenv(resultshape.Env, "reference")
	ref = mustOK(t, tool, args, new(any))
	t.Setenv(resultshape.Env, "")
	lean = mustOK(t, tool, args, new(any))
	return ref, lean
}

// parseLeanEntry reads a lean entry back into the reference record.
func parseLeanEntry(t *testing.T, raw json.RawMessage, untracked bool) statusEntry {
	t.Helper()
	var s string
	if json.Unmarshal(raw, &s) != nil {
		var e statusEntry
		strictDecode(t, string(raw), &e)
		if e.PathBase64 == "" && e.OrigPathBase64 == "" && !strings.Contains(e.Path+e.OrigPath, renameSep) {
			t.Errorf("record form used where a string would do: %s", raw)
		}
		return e
	}
	if untracked {
		return statusEntry{Status: "??", Path: s}
	}
	if len(s) < 4 || s[2] != ' ' {
		t.Fatalf("lean entry %q is not \"XY path\"", s)
	}
	e := statusEntry{Status: s[:2], Path: s[3:]}
	if n := strings.Count(e.Path, renameSep); n > 1 {
		t.Fatalf("lean entry %q is ambiguous", s)
	} else if n == 1 {
		e.Path, e.OrigPath, _ = strings.Cut(e.Path, renameSep)
	}
	return e
}

func parseLeanEntries(t *testing.T, list []json.RawMessage, untracked bool) []statusEntry {
	out := []statusEntry{}
	for _, raw := range list {
		out = append(out, parseLeanEntry(t, raw, untracked))
	}
	return out
}

// statusFacts is what repo.status must tell in either shape.
type statusFacts struct {
	Branch, Upstream string
	Detached, Unborn bool
	OID              string // full in the reference, git's abbreviation in lean (detached only)
	Ahead, Behind    int64
	Entries          []statusEntry
	ChangedFiles     int64
}

type leanStatusDoc struct {
	Branch       string            `json:"branch"`
	Detached     bool              `json:"detached"`
	OID          string            `json:"oid"`
	Unborn       bool              `json:"unborn"`
	Upstream     string            `json:"upstream"`
	Ahead        int64             `json:"ahead"`
	Behind       int64             `json:"behind"`
	Entries      []json.RawMessage `json:"entries"`
	ChangedFiles int64             `json:"changedFiles"`
}

// noDefaults fails when a lean document carries a default-valued field.
func noDefaults(t *testing.T, lean string) {
	t.Helper()
	for _, bad := range []string{`:false`, `:null`, `:0,`, `:0}`, `:[]`, `:{}`, `:""`} {
		if strings.Contains(lean, bad) {
			t.Errorf("lean data carries a default value (%s): %s", bad, lean)
		}
	}
}

// leanFixtures are the work trees every lean test runs on.
func leanFixtures() map[string]func(t *testing.T) string {
	return map[string]func(t *testing.T) string{
		"clean": newRepo,
		"empty": emptyRepo,
		"busy": func(t *testing.T) string {
			repo := newRepo(t)
			write(t, repo, "b.txt", "beta\n")
			write(t, repo, "c.txt", "gamma\n")
			commitAll(t, repo, "feat: b and c")
			git(t, repo, "branch", "up", "HEAD~1")
			git(t, repo, "checkout", "-q", "up")
			write(t, repo, "u.txt", "upstream\n")
			commitAll(t, repo, "upstream work")
			git(t, repo, "checkout", "-q", "main")
			git(t, repo, "branch", "--set-upstream-to=up")
			write(t, repo, "a.txt", "stashed\n")
			git(t, repo, "stash", "-q")
			git(t, repo, "mv", "b.txt", "renamed b.txt")
			write(t, repo, "c.txt", "staged\n")
			git(t, repo, "add", "c.txt")
			write(t, repo, "c.txt", "staged, then edited\n")
			write(t, repo, "a.txt", "edited\n")
			write(t, repo, "dir/new file.md", "untracked\n")
			return repo
		},
		"merge conflict": func(t *testing.T) string { return conflictRepo(t, "merge") },
		"detached": func(t *testing.T) string {
			repo := newRepo(t)
			git(t, repo, "checkout", "-q", "--detach", "HEAD")
			write(t, repo, "a.txt", "edited\n")
			return repo
		},
		"odd names": func(t *testing.T) string {
			repo := newRepo(t)
			write(t, repo, "x <- y.txt", "arrow\n")
			write(t, repo, "plain.txt", "plain\n")
			commitAll(t, repo, "odd")
			git(t, repo, "mv", "x <- y.txt", "moved.txt")
			git(t, repo, "mv", "plain.txt", "p <- q.txt")
			write(t, repo, "bad\xffname.txt", "not utf-8\n")
			write(t, repo, "tracked\xfe.txt", "x\n")
			git(t, repo, "add", "tracked\xfe.txt")
			return repo
		},
	}
}

// Every fact of the reference repo.status is in the lean one, the lean one
// carries no default value, and the reference payload is exactly the
// reference struct.
func TestLeanRepoStatusKeepsFacts(t *testing.T) {
	for name, mk := range leanFixtures() {
		for _, max := range []int{1000, 2} {
			t.Run(name+"/maxEntries="+itoa(max), func(t *testing.T) {
				repo := mk(t)
				ref, lean := callBoth(t, "repo.status", map[string]any{"repoPath": repo, "maxEntries": max})
				var r statusData
				strictDecode(t, ref, &r)
				var l leanStatusDoc
				dec := json.NewDecoder(strings.NewReader(lean))
				dec.DisallowUnknownFields()
				if err := dec.Decode(&l); err != nil {
					t.Fatalf("lean %s: %v", lean, err)
				}
				noDefaults(t, lean)
				refTracked, refUntracked := splitUntracked(r.Entries)
				leanTracked, leanUntracked := splitUntracked(parseLeanEntries(t, l.Entries, false))
				if l.ChangedFiles != 0 && int(l.ChangedFiles) <= len(l.Entries) {
					t.Errorf("changedFiles %d sent though nothing was cut", l.ChangedFiles)
				}
				if !r.Truncated {
					if l.ChangedFiles != 0 {
						t.Errorf("changedFiles sent: %s", lean)
					}
					coversUntracked(t, refUntracked, leanUntracked)
				} else if l.ChangedFiles == 0 && len(refTracked) > max {
					t.Errorf("the cut list does not say its total: %s", lean)
				}
				if len(leanTracked) < len(refTracked) {
					refTracked = refTracked[:len(leanTracked)] // cut at maxEntries
				}
				want := statusFacts{Branch: deref(r.Branch), Upstream: deref(r.Upstream), Detached: r.Detached, Unborn: r.OID == nil,
					Ahead: r.Ahead, Behind: r.Behind, Entries: refTracked}
				got := statusFacts{Branch: l.Branch, Upstream: l.Upstream, Detached: l.Detached, Unborn: l.Unborn,
					Ahead: l.Ahead, Behind: l.Behind, Entries: leanTracked}
				if r.Detached {
					if l.OID == "" || !strings.HasPrefix(*r.OID, l.OID) || len(l.OID) >= len(*r.OID) {
						t.Errorf("detached: lean oid %q is not an abbreviation of %s", l.OID, *r.OID)
					}
				} else if l.OID != "" {
					t.Errorf("oid %q sent though a branch is checked out", l.OID)
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("lean facts differ:\n got %+v\nwant %+v\nlean %s\n ref %s", got, want, lean, ref)
				}
			})
		}
	}
}

// worktree.changes: the same three lists and counts in both shapes.
func TestLeanWorktreeChangesKeepsFacts(t *testing.T) {
	for name, mk := range leanFixtures() {
		t.Run(name, func(t *testing.T) {
			repo := mk(t)
			ref, lean := callBoth(t, "worktree.changes", map[string]any{"repoPath": repo})
			var r worktreeChangesData
			strictDecode(t, ref, &r)
			var l struct {
				Entries        []json.RawMessage `json:"entries"`
				StagedCount    int64             `json:"stagedCount"`
				UnstagedCount  int64             `json:"unstagedCount"`
				UntrackedCount int64             `json:"untrackedCount"`
			}
			dec := json.NewDecoder(strings.NewReader(lean))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&l); err != nil {
				t.Fatalf("lean %s: %v", lean, err)
			}
			noDefaults(t, lean)
			if l.StagedCount+l.UnstagedCount+l.UntrackedCount != 0 {
				t.Errorf("counts sent though nothing was cut: %s", lean)
			}
			// The XY code is the split: X in the index, Y in the work tree.
			got := worktreeChangesData{Staged: []statusEntry{}, Unstaged: []statusEntry{}}
			tracked, untracked := splitUntracked(parseLeanEntries(t, l.Entries, false))
			for _, e := range tracked {
				if e.Status[0] != ' ' {
					got.Staged = append(got.Staged, e)
				}
				if e.Status[1] != ' ' {
					got.Unstaged = append(got.Unstaged, e)
				}
			}
			if !reflect.DeepEqual(got.Staged, r.Staged) || !reflect.DeepEqual(got.Unstaged, r.Unstaged) {
				t.Fatalf("lean facts differ:\n got %+v\nwant %+v\nlean %s\n ref %s", got, r, lean, ref)
			}
			coversUntracked(t, r.Untracked, untracked)
		})
	}
}

// splitUntracked separates the untracked entries from the others.
func splitUntracked(list []statusEntry) (tracked, untracked []statusEntry) {
	tracked, untracked = []statusEntry{}, []statusEntry{}
	for _, e := range list {
		if e.Status == "??" {
			untracked = append(untracked, e)
		} else {
			tracked = append(tracked, e)
		}
	}
	return tracked, untracked
}

// coversUntracked checks the lean untracked entries (git's default mode: a
// new directory is one "dir/" entry) against the reference's every file.
func coversUntracked(t *testing.T, ref, lean []statusEntry) {
	t.Helper()
	covered := func(p string) bool {
		for _, e := range lean {
			q := rawPath(e)
			if q == p || strings.HasSuffix(q, "/") && strings.HasPrefix(p, q) {
				return true
			}
		}
		return false
	}
	for _, e := range ref {
		if !covered(rawPath(e)) {
			t.Errorf("untracked %q is not in the lean entries %+v", e.Path, lean)
		}
	}
	for _, e := range lean {
		q, found := rawPath(e), false
		for _, f := range ref {
			found = found || rawPath(f) == q || strings.HasSuffix(q, "/") && strings.HasPrefix(rawPath(f), q)
		}
		if !found {
			t.Errorf("lean untracked %q is not in the reference %+v", e.Path, ref)
		}
	}
}

// The cut list of worktree.changes says the totals by location.
func TestLeanWorktreeChangesTruncated(t *testing.T) {
	repo := newRepo(t)
	write(t, repo, "a.txt", "edited\n")
	for i := 0; i < maxChangeEntries+5; i++ {
		write(t, repo, "u"+itoa(i), "x\n")
	}
	write(t, repo, "newdir/x/y.txt", "x\n")
	_, lean := callBoth(t, "worktree.changes", map[string]any{"repoPath": repo})
	var l struct {
		Entries        []string `json:"entries"`
		UnstagedCount  int64    `json:"unstagedCount"`
		UntrackedCount int64    `json:"untrackedCount"`
		StagedCount    int64    `json:"stagedCount"`
	}
	if err := json.Unmarshal([]byte(lean), &l); err != nil {
		t.Fatal(err)
	}
	if len(l.Entries) != maxChangeEntries || l.UntrackedCount != maxChangeEntries+6 || l.UnstagedCount != 1 || l.StagedCount != 0 {
		t.Fatalf("%d listed, counts %+v", len(l.Entries), l)
	}
	if l.Entries[0] != " M a.txt" {
		t.Fatalf("entries not in git's order: %v", l.Entries[:3])
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

type leanBriefDoc struct {
	Branch                  string               `json:"branch"`
	Detached                bool                 `json:"detached"`
	Sha                     string               `json:"sha"`
	Upstream                string               `json:"upstream"`
	Ahead                   int64                `json:"ahead"`
	Behind                  int64                `json:"behind"`
	OperationInProgress     string               `json:"operationInProgress"`
	Staged                  int64                `json:"staged"`
	Unstaged                int64                `json:"unstaged"`
	Untracked               int64                `json:"untracked"`
	Conflicted              int64                `json:"conflicted"`
	Stashes                 int64                `json:"stashes"`
	Submodules              *leanBriefSubmodules `json:"submodules"`
	RecentCommits           []string             `json:"recentCommits"`
	ConventionalCommitRatio *float64             `json:"conventionalCommitRatio"`
	DefaultBranch           string               `json:"defaultBranch"`
	Hints                   []string             `json:"hints"`
	Truncated               bool                 `json:"truncated"`
}

// repo.brief: every fact of the reference brief is in the lean one (head,
// operation, counts, stashes, commits, submodules, default branch, the
// last absent when it is the branch), with no zero-valued block and no hint
// that repeats a field.
func TestLeanRepoBriefKeepsFacts(t *testing.T) {
	fixtures := leanFixtures()
	fixtures["submodules"] = func(t *testing.T) string { return submoduleRepo(t).top }
	for name, mk := range fixtures {
		t.Run(name, func(t *testing.T) {
			repo := mk(t)
			ref, lean := callBoth(t, "repo.brief", map[string]any{"repoPath": repo})
			var r briefData
			strictDecode(t, ref, &r)
			var l leanBriefDoc
			dec := json.NewDecoder(strings.NewReader(lean))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&l); err != nil {
				t.Fatalf("lean %s: %v", lean, err)
			}
			noDefaults(t, lean)
			h := r.Head
			type facts struct {
				Branch, Upstream, Sha, Op, DefBranch string
				Detached                             bool
				Ahead, Behind, Stashes               int64
				Tree                                 briefTree
				Commits                              []shortCommit
			}
			want := facts{deref(h.Branch), deref(h.Upstream), deref(h.Sha), deref(r.OperationInProgress), deref(r.Conventions.DefaultBranch),
				h.Detached, h.Ahead, h.Behind, r.Stashes, r.WorkingTree, r.RecentCommits}
			got := facts{l.Branch, l.Upstream, l.Sha, l.OperationInProgress, l.DefaultBranch, l.Detached, l.Ahead, l.Behind, l.Stashes,
				briefTree{Staged: l.Staged, Unstaged: l.Unstaged, Untracked: l.Untracked, Conflicted: l.Conflicted}, []shortCommit{}}
			got.Tree.Clean = got.Tree == briefTree{}
			for _, c := range l.RecentCommits {
				sha, subj, ok := strings.Cut(c, " ")
				if !ok {
					t.Fatalf("recent commit %q is not \"<id> <subject>\"", c)
				}
				got.Commits = append(got.Commits, shortCommit{Sha: sha, Subject: subj})
			}
			// The default branch is left out when it is the branch.
			if l.DefaultBranch == "" && want.DefBranch == l.Branch {
				got.DefBranch = l.Branch
			} else if l.DefaultBranch != "" && l.DefaultBranch == l.Branch {
				t.Errorf("defaultBranch %q repeats branch", l.DefaultBranch)
			}
			if len(got.Commits) > 0 {
				if l.Sha != "" {
					t.Errorf("sha %q repeats recentCommits[0]", l.Sha)
				}
				got.Sha = got.Commits[0].Sha
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("lean facts differ:\n got %+v\nwant %+v\nlean %s\n ref %s", got, want, lean, ref)
			}
			s := r.Submodules
			if s.Total == 0 && s.Skipped == 0 && !s.AttentionTruncated {
				if l.Submodules != nil {
					t.Errorf("an all-zero submodule block is sent: %s", lean)
				}
			} else {
				ls := l.Submodules
				if ls == nil || ls.Total != s.Total || ls.Clean != s.Clean || ls.Drifted != s.Drifted || ls.Uninitialized != s.Uninitialized ||
					ls.Conflicts != s.Conflicts || ls.Skipped != s.Skipped || ls.AttentionTruncated != s.AttentionTruncated || len(ls.Attention) != len(s.Attention) {
					t.Fatalf("submodules %+v, reference %+v", ls, s)
				}
				for i, m := range s.Attention {
					if ls.Attention[i] != m.State+m.Commit+" "+m.Path {
						t.Errorf("attention[%d] = %q, reference %+v", i, ls.Attention[i], m)
					}
				}
			}
			for _, hint := range l.Hints {
				if strings.ContainsAny(hint, "0123456789") || strings.Contains(hint, "detached") || strings.Contains(hint, "in progress") {
					t.Errorf("hint repeats a field: %q", hint)
				}
			}
			// conflicted and operationInProgress already say it: no hint.
			if strings.Contains(lean, "conflict.read") {
				t.Errorf("a conflict hint repeats conflicted %d: %s", r.WorkingTree.Conflicted, lean)
			}
			if l.ConventionalCommitRatio != nil {
				t.Errorf("a ratio over fewer than %d commits is sent: %s", convMinCommits, lean)
			}
		})
	}
}

// The conventional-commit ratio is sent only when it is a convention.
func TestLeanBriefConventions(t *testing.T) {
	tests := []struct {
		name          string
		conv, other   int
		wantRatio     float64 // 0: absent
		wantReference float64
	}{
		{"too few commits", 5, 0, 0, 1},
		{"mixed like git/git", 5, 7, 0, 0.42},
		{"a real convention", 9, 1, 0.9, 0.9},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			repo := emptyRepo(t)
			for i := 0; i < tt.conv+tt.other; i++ {
				write(t, repo, "f.txt", itoa(i))
				subj := "Plain subject " + itoa(i)
				if i < tt.conv {
					subj = "feat: thing " + itoa(i)
				}
				commitAll(t, repo, subj)
			}
			ref, lean := callBoth(t, "repo.brief", map[string]any{"repoPath": repo})
			var r briefData
			strictDecode(t, ref, &r)
			if got := *r.Conventions.ConventionalCommitRatio; got != tt.wantReference {
				t.Errorf("reference ratio %v, want %v", got, tt.wantReference)
			}
			var l leanBriefDoc
			if err := json.Unmarshal([]byte(lean), &l); err != nil {
				t.Fatal(err)
			}
			switch {
			case tt.wantRatio == 0 && l.ConventionalCommitRatio != nil:
				t.Errorf("ratio %v sent: %s", *l.ConventionalCommitRatio, lean)
			case tt.wantRatio != 0 && (l.ConventionalCommitRatio == nil || *l.ConventionalCommitRatio != tt.wantRatio):
				t.Errorf("want ratio %v: %s", tt.wantRatio, lean)
			}
		})
	}
}

// The string form of an entry, and where it falls back to the record.
func TestLeanEntry(t *testing.T) {
	tests := []struct {
		e    statusEntry
		want any
	}{
		{statusEntry{Status: " M", Path: "a b.txt"}, " M a b.txt"},
		{statusEntry{Status: "R ", Path: "new.go", OrigPath: "old.go"}, "R  new.go <- old.go"},
		{statusEntry{Status: "UU", Path: "x"}, "UU x"},
		{statusEntry{Status: "M ", Path: "a <- b"}, statusEntry{Status: "M ", Path: "a <- b"}},
		{statusEntry{Status: "R ", Path: "n", OrigPath: "o <- p"}, statusEntry{Status: "R ", Path: "n", OrigPath: "o <- p"}},
		{statusEntry{Status: "A ", Path: "\uFFFD", PathBase64: "/w=="}, statusEntry{Status: "A ", Path: "\uFFFD", PathBase64: "/w=="}},
	}
	for _, tt := range tests {
		if got := leanEntry(tt.e); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("leanEntry(%+v) = %#v, want %#v", tt.e, got, tt.want)
		}
	}
}
