package repo

import (
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestRepoScopeCodeowners(t *testing.T) {
	owners := "# comment\n* @everyone\n/src/ @src-team\nsrc/api/** @api-team @lead # trailing\n/src/api/deep/ @deep\n"
	for _, loc := range codeownersFiles {
		t.Run(loc, func(t *testing.T) {
			repo := newRepo(t)
			write(t, repo, loc, owners)
			// A later candidate must not be consulted when an earlier exists.
			for _, other := range codeownersFiles {
				if other != loc {
					if _, err := os.Stat(filepath.Join(repo, other)); err != nil && other > loc {
						write(t, repo, other, "* @wrong\n")
					}
				}
			}
			tests := []struct {
				scope, pattern string
				owners         []string
			}{
				{"src/api", "src/api/**", []string{"@api-team", "@lead"}},
				{"src/api/x.go", "src/api/**", []string{"@api-team", "@lead"}},
				{"src/web", "/src/", []string{"@src-team"}},
				{"docs", "*", []string{"@everyone"}},
				{"src", "/src/", []string{"@src-team"}}, // deeper patterns do not match
			}
			for _, tt := range tests {
				var d scopeData
				mustOK(t, "repo.scope", map[string]any{"repoPath": repo, "path": tt.scope + "/"}, &d)
				o := d.Owners
				want := loc
				if loc == "docs/CODEOWNERS" || loc == "CODEOWNERS" {
					// earlier candidates were written as "@wrong" only when they sort later
					want = firstExisting(repo)
				}
				if o == nil || o.Source != want {
					t.Fatalf("%s: owners %+v", tt.scope, o)
				}
				if want != loc {
					continue
				}
				if *o.MatchedPattern != tt.pattern || !reflect.DeepEqual(o.Owners, tt.owners) || o.Matching != "simplified-prefix (last match wins)" || d.Scope != tt.scope {
					t.Fatalf("%s: %+v", tt.scope, o)
				}
			}
		})
	}
	t.Run("no CODEOWNERS", func(t *testing.T) {
		var d scopeData
		raw := mustOK(t, "repo.scope", map[string]any{"repoPath": newRepo(t), "path": "a.txt"}, &d)
		if d.Owners != nil || !strings.Contains(raw, `"owners":null`) || len(d.Hints) == 0 {
			t.Fatal(raw)
		}
	})
	t.Run("symlink out of the repository is ignored", func(t *testing.T) {
		repo := newRepo(t)
		outside := filepath.Join(tempDir(t), "CODEOWNERS")
		if err := os.WriteFile(outside, []byte("* @outsider\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(outside, filepath.Join(repo, "CODEOWNERS")); err != nil {
			t.Fatal(err)
		}
		var d scopeData
		mustOK(t, "repo.scope", map[string]any{"repoPath": repo, "path": "a.txt"}, &d)
		if d.Owners != nil {
			t.Fatalf("%+v", d.Owners)
		}
	})
}

func firstExisting(repo string) string {
	for _, c := range codeownersFiles {
		if _, err := os.Stat(filepath.Join(repo, c)); err == nil {
			return c
		}
	}
	return ""
}

func TestRepoScopeActivity(t *testing.T) {
	repo := newRepo(t)
	now := strconv.FormatInt(time.Now().Unix(), 10) + " +0000"
	for i, author := range []string{"Ann", "Bob", "Ann", "Cy"} {
		msg := "src change " + strconv.Itoa(i)
		if author == "Cy" {
			write(t, repo, "other.txt", "not in scope\n")
			msg = "other"
		} else {
			write(t, repo, "src/f"+strconv.Itoa(i)+".txt", "x\n")
		}
		git(t, repo, "add", "-A")
		cmd := execGit(repo, "commit", "-q", "-m", msg)
		cmd.Env = append(cmd.Env, "GIT_AUTHOR_NAME="+author, "GIT_COMMITTER_DATE="+now)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v %s", err, out)
		}
	}
	for i := 0; i < 25; i++ {
		write(t, repo, "src/new file "+strconv.Itoa(i)+".txt", "u\n")
	}
	write(t, repo, "elsewhere.txt", "u\n")
	var d scopeData
	mustOK(t, "repo.scope", map[string]any{"repoPath": repo, "path": "src", "recentCommits": 2, "churnDays": 30}, &d)
	if d.WorkingTree.Changed != 25 || len(d.WorkingTree.Entries) != maxScopeEntries || !d.WorkingTree.Truncated {
		t.Fatalf("%+v", d.WorkingTree)
	}
	if len(d.RecentCommits) != 2 || d.RecentCommits[0].Subject != "src change 2" {
		t.Fatalf("%+v", d.RecentCommits)
	}
	if d.Churn.Days != 30 || d.Churn.Commits != 3 || d.Churn.Authors != 2 {
		t.Fatalf("%+v", d.Churn)
	}
	if len(d.Hints) == 0 || len(d.Hints) > 3 {
		t.Fatalf("%+v", d.Hints)
	}
	mustArgError(t, "repo.scope", map[string]any{"repoPath": repo, "path": "  "}, "arguments.path is required")
	mustArgError(t, "repo.scope", map[string]any{"repoPath": repo, "path": "src", "churnDays": 366}, "arguments.churnDays must be between 1 and 365")
}
