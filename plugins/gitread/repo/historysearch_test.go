package repo

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// searchHit is the comparable part of a hit.
type searchHit struct {
	hash  string
	files []string
}

func searchHits(t *testing.T, args map[string]any) (historySearchData, []searchHit) {
	t.Helper()
	var d historySearchData
	mustOK(t, "history.search", args, &d)
	hits := []searchHit{}
	for _, c := range d.Commits {
		h := searchHit{hash: c.Hash, files: []string{}}
		for _, f := range c.Files {
			h.files = append(h.files, f.Path)
		}
		hits = append(hits, h)
	}
	return d, hits
}

func TestHistorySearch(t *testing.T) {
	repo, c := histFixture(t)
	cwd, _ := os.Getwd()
	alpha := []searchHit{{c["c5"], []string{"a.txt"}}, {c["c4"], []string{"a.txt"}}, {c["c1"], []string{"a.txt"}}}
	tests := []struct {
		name      string
		args      map[string]any
		mode      string
		want      []searchHit
		truncated bool
	}{
		{"added once, renamed later", map[string]any{"text": "Helper"}, "text", []searchHit{{c["c2"], []string{"lib/util.go"}}}, false},
		{"deleted and re-added", map[string]any{"text": "alpha"}, "text", alpha, false},
		{"value that looks like an option", map[string]any{"text": "--output=/tmp/x"}, "text", []searchHit{{c["c7"], []string{"README.md"}}}, false},
		{"regex", map[string]any{"regex": "func [A-Z][a-z]+\\("}, "regex", []searchHit{{c["c2"], []string{"lib/util.go"}}}, false},
		{"regex with GNU word boundaries", map[string]any{"regex": "\\bHelper\\b"}, "regex", []searchHit{{c["c2"], []string{"lib/util.go"}}}, false},
		{"regex ignoring case", map[string]any{"regex": "^ALPHA", "ignoreCase": true}, "regex", alpha, false},
		{"text ignoring case", map[string]any{"text": "ALPHA", "ignoreCase": true}, "text", alpha, false},
		{"text is case-sensitive by default", map[string]any{"text": "ALPHA"}, "text", []searchHit{}, false},
		{"budget cuts and says so", map[string]any{"text": "alpha", "limit": 2}, "text", alpha[:2], true},
		{"exact budget is not truncated", map[string]any{"text": "alpha", "limit": 3}, "text", alpha, false},
		{"rev", map[string]any{"text": "alpha", "rev": "v1"}, "text", alpha[2:], false},
		{"range", map[string]any{"text": "alpha", "rev": "v1..v2"}, "text", alpha[:2], false},
		{"paths exclude", map[string]any{"text": "alpha", "paths": []string{"lib"}}, "text", []searchHit{}, false},
		{"paths include", map[string]any{"text": "alpha", "paths": []string{"README.md", "a.txt"}}, "text", alpha, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := map[string]any{"repoPath": repo}
			for k, v := range tt.args {
				args[k] = v
			}
			d, hits := searchHits(t, args)
			if !reflect.DeepEqual(hits, tt.want) || d.Truncated != tt.truncated || d.Mode != tt.mode {
				t.Fatalf("got %v truncated=%v mode=%s\nwant %v truncated=%v mode=%s", hits, d.Truncated, d.Mode, tt.want, tt.truncated, tt.mode)
			}
		})
	}

	t.Run("binary file and non-UTF-8 path", func(t *testing.T) {
		d, _ := searchHits(t, map[string]any{"repoPath": repo, "text": "needle"})
		if len(d.Commits) != 1 || d.Commits[0].Hash != c["c6"] {
			t.Fatalf("got %+v", d.Commits)
		}
		got := d.Commits[0]
		want := []searchFile{{Path: "bin.dat"}, {Path: "caf\uFFFD.txt", PathBase64: base64.StdEncoding.EncodeToString([]byte("caf\xe9.txt"))}}
		if !reflect.DeepEqual(got.Files, want) || got.Subject != "side: binary and latin-1 name" || got.AuthorName != "Ada Author" || got.AuthorTime != authorTime+5*day || got.ShortHash != c["c6"][:7] {
			t.Fatalf("got %+v", got)
		}
	})

	t.Run("non-ASCII author", func(t *testing.T) {
		d, _ := searchHits(t, map[string]any{"repoPath": repo, "text": "Helper"})
		if d.Commits[0].AuthorName != "Zoë Ünïcode" || d.Commits[0].AuthorEmail != "zoe@example.com" {
			t.Fatalf("got %+v", d.Commits[0])
		}
	})

	refused := []struct {
		name string
		args map[string]any
		want string
	}{
		{"neither", map[string]any{}, "arguments.text or arguments.regex is required"},
		{"both", map[string]any{"text": "a", "regex": "a"}, "not both"},
		{"empty text", map[string]any{"text": ""}, "arguments.text must not be empty"},
		{"bad regex", map[string]any{"regex": "func(("}, "arguments.regex is not a valid POSIX extended regular expression (Unmatched ( or \\(); escape"},
		{"rev option", map[string]any{"text": "a", "rev": "--output=pwned"}, "arguments.rev must not start with '-'"},
		{"range option", map[string]any{"text": "a", "rev": "v1..-c core.pager=touch pwned"}, "each side of the range"},
		{"path escaping", map[string]any{"text": "a", "paths": []string{"../x"}}, "arguments.paths[0] must be a path inside the repository"},
		{"limit", map[string]any{"text": "a", "limit": 0}, "arguments.limit must be between 1 and 200"},
	}
	for _, tt := range refused {
		t.Run("refused "+tt.name, func(t *testing.T) {
			tt.args["repoPath"] = repo
			mustArgError(t, "history.search", tt.args, tt.want)
		})
	}
	t.Run("unknown revision", func(t *testing.T) {
		fd := mustFail(t, "history.search", map[string]any{"repoPath": repo, "text": "a", "rev": "nope"})
		if fd.Details != `arguments.rev "nope" does not name a commit in this repository` {
			t.Fatalf("details %q", fd.Details)
		}
	})
	t.Run("empty repository", func(t *testing.T) {
		var d historySearchData
		raw := mustOK(t, "history.search", map[string]any{"repoPath": emptyRepo(t), "text": "x"}, &d)
		if raw != `{"mode":"text","commits":[],"truncated":false}` {
			t.Fatalf("got %s", raw)
		}
	})
	assertNoPwned(t, repo, cwd, filepath.Dir(repo))
}

func TestHistorySearchFilesCapped(t *testing.T) {
	repo := newRepo(t)
	for i := 0; i < maxSearchFiles+5; i++ {
		write(t, repo, fmt.Sprintf("d/f%03d.txt", i), "needle\n")
	}
	head := commitAll(t, repo, "many")
	var d historySearchData
	mustOK(t, "history.search", map[string]any{"repoPath": repo, "text": "needle"}, &d)
	if len(d.Commits) != 1 || d.Commits[0].Hash != head || len(d.Commits[0].Files) != maxSearchFiles || !d.Commits[0].FilesTruncated || d.Commits[0].Files[0].Path != "d/f000.txt" {
		t.Fatalf("got %d commits, files=%d truncated=%v", len(d.Commits), len(d.Commits[0].Files), d.Commits[0].FilesTruncated)
	}
}
