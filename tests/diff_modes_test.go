package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// diff.text's views and summary modes through the real binary, on the
// fixture repository (a staged rename notes.txt -> NOTES.txt, an unstaged
// README.md edit, src/app.go changed by v1.0.0).
func TestDiffTextModesThroughTheBinary(t *testing.T) {
	repo := fixtureRepo(t)
	s := startServer(t, append(baseEnv(t), "FLUXGIT_GATEWAY_ADDR=127.0.0.1:9", "FLUXGIT_MCP_AUDIT_DISABLED=1"))
	initialize(t, s)
	for i, tc := range []struct {
		name     string
		args     map[string]any
		want     string
		mode     string
		trunc    bool
		exact    bool
		contains string
	}{
		{"staged rename", map[string]any{"staged": true, "mode": "nameStatus"}, "R100\tnotes.txt\tNOTES.txt\n", "nameStatus", false, true, ""},
		{"staged without rename detection", map[string]any{"staged": true, "mode": "nameStatus", "findRenames": false}, "A\tNOTES.txt\nD\tnotes.txt\n", "nameStatus", false, true, ""},
		{"unstaged only", map[string]any{"mode": "nameStatus"}, "M\tREADME.md\n", "nameStatus", false, true, ""},
		{"work tree against HEAD, one path", map[string]any{"base": "HEAD", "mode": "nameStatus", "paths": []string{"notes.txt", "README.md"}}, "M\tREADME.md\nD\tnotes.txt\n", "nameStatus", false, true, ""},
		{"stat of a tagged commit", map[string]any{"base": "v1.0.0~1", "head": "v1.0.0", "mode": "stat"}, "1\t1\tsrc/app.go\n 1 file changed, 1 insertion(+), 1 deletion(-)\n", "stat", false, true, ""},
		{"no context", map[string]any{"base": "v1.0.0~1", "head": "v1.0.0", "contextLines": 0}, "", "patch", false, true,
			"@@ -3 +3 @@ package app\n-func Answer() int { return 41 }\n+func Answer() int { return 42 }\n"},
		{"stopped at the budget", map[string]any{"base": "v1.0.0~1", "head": "v1.0.0", "maxBytes": 40, "exactTotals": false}, "diff --git a/src/app.go b/src/app.go\n", "patch", true, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.args["repoPath"] = repo
			p := toolPayload(t, s.call(i+1, "tools/call", map[string]any{"name": "diff.text", "arguments": tc.args}))
			d, ok := p["data"].(map[string]any)
			if !ok {
				t.Fatalf("no data: %v", p)
			}
			diff, _ := d["diff"].(string)
			if tc.want != "" && diff != tc.want {
				t.Fatalf("diff %q, want %q", diff, tc.want)
			}
			if !strings.Contains(diff, tc.contains) {
				t.Fatalf("diff %q lacks %q", diff, tc.contains)
			}
			// The lean shape: truncated only as true, totalsExact only as
			// false (the totals are lower bounds), no echo of mode or format.
			if (d["truncated"] == true) != tc.trunc || (d["totalsExact"] == false) == tc.exact || d["mode"] != nil || d["format"] != nil {
				t.Fatalf("%s: truncated=%v totalsExact=%v mode=%v format=%v", tc.mode, d["truncated"], d["totalsExact"], d["mode"], d["format"])
			}
		})
	}
}

// Option-shaped values in every value-taking argument of diff.text are
// refused (revisions, by the schema's pattern or the provider; the enum,
// integer and boolean arguments, by the schema) or stay literal paths that
// match nothing; either way nothing is written anywhere.
func TestDiffTextOptionInjection(t *testing.T) {
	repo := fixtureRepo(t)
	work := canonicalTempDir(t)
	target := filepath.Join(work, "pwned")
	before := snapshot(t, repo)
	s := startServer(t, append(baseEnv(t), "FLUXGIT_GATEWAY_ADDR=127.0.0.1:9", "FLUXGIT_MCP_AUDIT_DISABLED=1"))
	initialize(t, s)
	evils := []string{"--output=" + target, "-c core.pager=touch " + target, "-ccore.pager=touch " + target, "--upload-pack=touch " + target}
	id := 0
	for _, evil := range evils {
		for _, c := range []struct {
			args     map[string]any
			wantCode int
		}{
			{map[string]any{"base": evil, "mode": "stat"}, -32602},
			{map[string]any{"base": "HEAD", "head": evil, "mode": "nameStatus"}, -32602},
			{map[string]any{"base": evil, "staged": true}, -32602},
			{map[string]any{"mode": evil}, -32602},
			{map[string]any{"contextLines": evil}, -32602},
			{map[string]any{"renameSimilarity": evil}, -32602},
			{map[string]any{"findRenames": evil}, -32602},
			{map[string]any{"staged": evil}, -32602},
			{map[string]any{"exactTotals": evil}, -32602},
			{map[string]any{"paths": []string{evil}, "base": "HEAD~2"}, 0},
			{map[string]any{"paths": []string{"README.md", evil}, "staged": true, "mode": "stat"}, 0},
			{map[string]any{"path": evil, "base": "HEAD~2", "mode": "nameStatus"}, 0},
		} {
			id++
			c.args["repoPath"] = repo
			r := s.call(id, "tools/call", map[string]any{"name": "diff.text", "arguments": c.args})
			if code := codeOf(t, r); code != c.wantCode {
				t.Errorf("%v: code %d, want %d: %.300s", c.args, code, c.wantCode, r.raw)
				continue
			}
			if c.wantCode == 0 {
				d, _ := toolPayload(t, r)["data"].(map[string]any)
				if d == nil || d["diff"] != "" {
					t.Errorf("%v: an option-shaped path matched something: %v", c.args, d)
				}
			}
		}
	}
	for _, dir := range []string{work, repo} {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), "pwned") {
				t.Fatalf("a diff.text argument wrote %s", filepath.Join(dir, e.Name()))
			}
		}
	}
	after := snapshot(t, repo)
	for k, v := range before {
		if after[k] != v {
			t.Errorf("diff.text changed %s", k)
		}
	}
	if len(after) != len(before) {
		t.Errorf("diff.text added or removed files: %d -> %d", len(before), len(after))
	}
}
