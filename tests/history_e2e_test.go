package tests

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// histPayloadData decodes a successful tool result's data into out.
func histPayloadData(t *testing.T, r response, out any) {
	t.Helper()
	p := toolPayload(t, r)
	if p["error"] != nil {
		t.Fatalf("tool error: %v", p["error"])
	}
	raw, err := json.Marshal(p["data"])
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
}

type histCommit struct {
	Hash    string `json:"hash"`
	Subject string `json:"subject"`
	Files   []struct {
		Path string `json:"path"`
	} `json:"files"`
}

func histSubjects(cs []histCommit) []string {
	out := []string{}
	for _, c := range cs {
		out = append(out, c.Subject)
	}
	return out
}

// TestHistoryToolsThroughTheBinary: the new repo.history filters,
// history.search and the repo.refs options answer known questions about
// the standard fixture through the real server.
func TestHistoryToolsThroughTheBinary(t *testing.T) {
	repo := fixtureRepo(t)
	s := startServer(t, append(baseEnv(t), "FLUXGIT_MCP_AUDIT_DISABLED=1"))
	initialize(t, s)
	id := 0
	call := func(tool string, args map[string]any) response {
		id++
		args["repoPath"] = repo
		return s.call(id, "tools/call", map[string]any{"name": tool, "arguments": args})
	}

	for _, tt := range []struct {
		name string
		args map[string]any
		want []string
	}{
		{"tag", map[string]any{"rev": "v1.0.0"}, []string{"fix(app): correct the answer", "feat: initial import"}},
		{"range", map[string]any{"rev": "v1.0.0..main"}, []string{"docs: add notes"}},
		{"path and grep", map[string]any{"paths": []string{"src/app.go"}, "grep": "FIX"}, []string{"fix(app): correct the answer"}},
		{"author and date window", map[string]any{"author": "lovelace", "since": "2026-01-02", "until": "2026-01-02T03:04:05Z", "merges": "exclude", "firstParent": true, "limit": 1}, []string{"docs: add notes"}},
	} {
		// Lean rows: "<short id> <subject>".
		var d struct {
			Commits []string `json:"commits"`
		}
		histPayloadData(t, call("repo.history", tt.args), &d)
		got := []string{}
		for _, row := range d.Commits {
			_, subject, _ := strings.Cut(row, " ")
			got = append(got, subject)
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("repo.history %s: %q, want %q", tt.name, got, tt.want)
		}
	}

	var sd struct {
		Mode      string       `json:"mode"`
		Commits   []histCommit `json:"commits"`
		Truncated bool         `json:"truncated"`
	}
	histPayloadData(t, call("history.search", map[string]any{"text": "return 41", "limit": 1}), &sd)
	if sd.Mode != "text" || !sd.Truncated || len(sd.Commits) != 1 || sd.Commits[0].Subject != "fix(app): correct the answer" ||
		len(sd.Commits[0].Files) != 1 || sd.Commits[0].Files[0].Path != "src/app.go" {
		t.Errorf("history.search: %+v", sd)
	}

	var rd struct {
		Branches []string `json:"branches"`
		Tags     []string `json:"tags"`
		Remotes  []string `json:"remotes"`
	}
	histPayloadData(t, call("repo.refs", map[string]any{"kinds": []string{"branches"}, "pattern": "feat*", "sort": "recency"}), &rd)
	if !reflect.DeepEqual(rd.Branches, []string{"feature/cart"}) || len(rd.Tags) != 0 || len(rd.Remotes) != 0 {
		t.Errorf("repo.refs: %+v", rd)
	}
}

// TestHistoryOptionInjection: every new value-taking argument of
// repo.history, history.search and repo.refs is given --output=…,
// -c core.pager=… and --upload-pack=… values. Revisions and dates are
// refused with -32602; free-text and path values are searched for
// literally (they can only ever be a value) and find nothing; no file is
// written anywhere.
func TestHistoryOptionInjection(t *testing.T) {
	repo := fixtureRepo(t)
	work := canonicalTempDir(t)
	target := filepath.Join(work, "pwned")
	evils := []string{"--output=" + target, "-c core.pager=touch " + target, "--upload-pack=touch " + target, "-o" + target}
	s := startServer(t, append(baseEnv(t), "FLUXGIT_MCP_AUDIT_DISABLED=1"))
	initialize(t, s)
	id := 0
	for _, evil := range evils {
		for _, c := range []struct {
			tool     string
			args     map[string]any
			wantCode int // 0: answered, with no commits or refs
		}{
			{"repo.history", map[string]any{"rev": evil}, -32602},
			{"repo.history", map[string]any{"rev": "main.." + evil}, -32602},
			{"repo.history", map[string]any{"rev": evil + "...main"}, -32602},
			{"repo.history", map[string]any{"since": evil}, -32602},
			{"repo.history", map[string]any{"until": evil}, -32602},
			{"repo.history", map[string]any{"merges": evil}, -32602},
			{"repo.history", map[string]any{"paths": []string{evil}}, 0},
			{"repo.history", map[string]any{"author": evil}, 0},
			{"repo.history", map[string]any{"grep": evil}, 0},
			{"history.search", map[string]any{"text": evil}, 0},
			{"history.search", map[string]any{"regex": evil}, 0},
			{"history.search", map[string]any{"text": "x", "rev": evil}, -32602},
			{"history.search", map[string]any{"text": "x", "rev": "main.." + evil}, -32602},
			{"history.search", map[string]any{"text": "x", "paths": []string{evil}}, 0},
			{"repo.refs", map[string]any{"pattern": evil}, 0},
			{"repo.refs", map[string]any{"sort": evil}, -32602},
			{"repo.refs", map[string]any{"kinds": []string{evil}}, -32602},
		} {
			id++
			c.args["repoPath"] = repo
			r := s.call(id, "tools/call", map[string]any{"name": c.tool, "arguments": c.args})
			if c.wantCode != 0 {
				if got := codeOf(t, r); got != c.wantCode {
					t.Errorf("%s %v: want %d, got %.300s", c.tool, c.args, c.wantCode, r.raw)
				}
				continue
			}
			var d struct {
				Commits  []json.RawMessage `json:"commits"`
				Branches []string          `json:"branches"`
				Tags     []string          `json:"tags"`
			}
			histPayloadData(t, r, &d)
			if len(d.Commits)+len(d.Branches)+len(d.Tags) != 0 {
				t.Errorf("%s %v: a hostile value matched something: %.300s", c.tool, c.args, r.raw)
			}
		}
	}
	for _, dir := range []string{work, repo, filepath.Join(repo, ".git")} {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), "pwned") || strings.HasPrefix(e.Name(), "core.pager") {
				t.Fatalf("a tool wrote %s", filepath.Join(dir, e.Name()))
			}
		}
	}
}
