package tests

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// file.read and file.blame through the real binary: known answers from
// the fixture repository (src/app.go said 41, then 42; NOTES.txt is a
// staged rename of a committed file), the envelope, and option-injection
// attempts in every value-taking argument refused with nothing written.
func TestFileToolsEndToEnd(t *testing.T) {
	repo := fixtureRepo(t)
	work := canonicalTempDir(t)
	target := filepath.Join(work, "pwned")
	s := startServer(t, append(baseEnv(t), "FLUXGIT_GATEWAY_ADDR=127.0.0.1:9", "FLUXGIT_MCP_AUDIT_DISABLED=1"))
	initialize(t, s)
	writeFile(t, filepath.Join(repo, "caf\xe9.txt"), "latin-1 name\n")
	initial := strings.TrimSpace(git(t, repo, "rev-parse", "HEAD~2"))
	fix := strings.TrimSpace(git(t, repo, "rev-parse", "HEAD~1"))

	id := 0
	data := func(tool string, args map[string]any) map[string]any {
		t.Helper()
		id++
		args["repoPath"] = repo
		p := toolPayload(t, s.call(id, "tools/call", map[string]any{"name": tool, "arguments": args}))
		if _, source := p["source"]; p["error"] != nil || p["tool"] != tool || p["readOnly"] != true || source {
			t.Fatalf("%s %v: %v", tool, args, p)
		}
		return p["data"].(map[string]any)
	}
	for _, c := range []struct {
		args    map[string]any
		content string
	}{
		{map[string]any{"path": "src/app.go", "rev": "HEAD~2", "startLine": 3}, "func Answer() int { return 41 }\n"},
		{map[string]any{"path": "src/app.go", "rev": "v1.0.0", "startLine": 3}, "func Answer() int { return 42 }\n"},
		{map[string]any{"path": "NOTES.txt", "worktree": true}, "remember the milk\n"},
		{map[string]any{"path": "README.md", "maxBytes": 3}, "# d"},
		{map[string]any{"pathBase64": base64.StdEncoding.EncodeToString([]byte("caf\xe9.txt")), "worktree": true}, "latin-1 name\n"},
	} {
		d := data("file.read", c.args)
		if d["content"] != c.content {
			t.Errorf("file.read %v: content %q, want %q", c.args, d["content"], c.content)
		}
	}

	d := data("file.blame", map[string]any{"path": "src/app.go"})
	hunks, _ := d["hunks"].([]any)
	commits, _ := d["commits"].([]any)
	want := []string{initial + " 1 2", fix + " 3 1"}
	var got []string
	for _, h := range hunks {
		m := h.(map[string]any)
		got = append(got, m["commit"].(string)+" "+num(m["startLine"])+" "+num(m["lines"]))
	}
	if strings.Join(got, ",") != strings.Join(want, ",") || len(commits) != 2 {
		t.Fatalf("file.blame hunks %v, want %v (commits %v)", got, want, commits)
	}
	if c := commits[1].(map[string]any); c["summary"] != "fix(app): correct the answer" || c["hash"] != fix {
		t.Fatalf("file.blame commit %v", c)
	}

	for _, evil := range []string{"--output=" + target, "-c core.pager=touch " + target, "--upload-pack=touch " + target} {
		for _, tool := range []string{"file.read", "file.blame"} {
			id++
			r := s.call(id, "tools/call", map[string]any{"name": tool, "arguments": map[string]any{"repoPath": repo, "path": "README.md", "rev": evil}})
			if codeOf(t, r) != -32602 {
				t.Errorf("%s rev %q: want -32602, got %.300s", tool, evil, r.raw)
			}
			// As a path the value is a file name, which does not exist.
			id++
			r = s.call(id, "tools/call", map[string]any{"name": tool, "arguments": map[string]any{"repoPath": repo, "path": evil}})
			if p := toolPayload(t, r); p["error"] == nil {
				t.Errorf("%s path %q: want a tool error, got %.300s", tool, evil, r.raw)
			}
		}
	}
	for _, dir := range []string{work, repo} {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), "pwned") {
				t.Fatalf("a file tool wrote %s", filepath.Join(dir, e.Name()))
			}
		}
	}
}

// num renders a JSON number as an integer string.
func num(v any) string {
	f, _ := v.(float64)
	return strconv.FormatFloat(f, 'f', -1, 64)
}
