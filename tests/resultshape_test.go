package tests

import (
	"strings"
	"testing"
)

// FLUXGIT_MCP_RESULT_SHAPE through the real binary: lean by default (no
// tier, repoPath or local-git source in the envelope), the reference's
// envelope with reference, and an unknown value warned about at start and
// in doctor, naming the variable and the accepted values, while the
// results stay lean.
func TestResultShapeSwitch(t *testing.T) {
	repo := fixtureRepo(t)
	const warning = `fluxgit: warning: result-shape: FLUXGIT_MCP_RESULT_SHAPE="refrence" is not one of lean, reference; results take the lean shape; fix: set FLUXGIT_MCP_RESULT_SHAPE to reference`
	for _, tc := range []struct {
		name      string
		env       []string
		reference bool
		warned    bool
	}{
		{"unset", nil, false, false},
		{"lean", []string{"FLUXGIT_MCP_RESULT_SHAPE=lean"}, false, false},
		{"reference", []string{"FLUXGIT_MCP_RESULT_SHAPE=reference"}, true, false},
		{"unknown", []string{"FLUXGIT_MCP_RESULT_SHAPE=refrence"}, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := append(append(baseEnv(t), "FLUXGIT_MCP_ALLOWED_ROOTS="+repo, "FLUXGIT_MCP_AUDIT_DISABLED=1"), tc.env...)
			s := startServer(t, env, "serve")
			initialize(t, s)
			p := toolPayload(t, s.call(1, "tools/call", map[string]any{"name": "repo.status", "arguments": map[string]any{"repoPath": repo}}))
			e := toolPayload(t, s.call(2, "tools/call", map[string]any{"name": "commit.details", "arguments": map[string]any{"repoPath": repo, "commit": "no-such-rev"}}))
			s.stop()
			if p["tool"] != "repo.status" || p["readOnly"] != true || p["data"] == nil {
				t.Fatalf("repo.status: %v", p)
			}
			if e["error"] == nil {
				t.Fatalf("commit.details of a missing revision: %v", e)
			}
			for name, payload := range map[string]map[string]any{"success": p, "error": e} {
				if tc.reference {
					if payload["tier"] != "free" || payload["source"] != "local-git" || payload["repoPath"] != repo {
						t.Errorf("reference %s envelope lacks tier/source/repoPath: %v", name, payload)
					}
					continue
				}
				for _, k := range []string{"tier", "repoPath", "source"} {
					if _, ok := payload[k]; ok {
						t.Errorf("lean %s envelope has %s: %v", name, k, payload)
					}
				}
			}
			if got := strings.Contains(s.stderr.String(), warning); got != tc.warned {
				t.Errorf("start-up warning present=%v, want %v:\n%s", got, tc.warned, s.stderr.String())
			}

			out, errOut, code := runCLI(t, env, "doctor")
			if code != 0 {
				t.Fatalf("doctor exit %d (a result shape only warns)\n%s%s", code, out, errOut)
			}
			var row string
			for _, l := range strings.Split(out, "\n") {
				if f := strings.Fields(l); len(f) > 1 && f[0] == "result-shape" {
					row = l
				}
			}
			wantStatus, wantDetail := "OK", "lean (the default"
			switch {
			case tc.warned:
				wantStatus, wantDetail = "WARN", `FLUXGIT_MCP_RESULT_SHAPE="refrence" is not one of lean, reference`
			case tc.reference:
				wantDetail = "reference ("
			}
			if !strings.Contains(row, wantStatus) || !strings.Contains(row, wantDetail) {
				t.Errorf("doctor row %q, want %s with %q:\n%s", row, wantStatus, wantDetail, out)
			}
		})
	}
}
