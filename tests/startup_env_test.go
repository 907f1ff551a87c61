package tests

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// New-user points of issue 22: a misspelt variable is reported at start
// (stderr) and by doctor, with the name it most likely meant, instead of
// being ignored while the server runs unconfined. MCP_* names are fluxgit's
// only when they are near one of its own; a host's are left alone.
func TestUnknownVariablesWarned(t *testing.T) {
	root := canonicalTempDir(t)
	env := append(baseEnv(t), "FLUXGIT_MCP_ALLOWED_ROOTS="+root,
		"FLUXGIT_ALLOWED_ROOTS="+root, "SHIFT_WORKSPCE=team", "MCP_AUTH_MOD=jwt", "MCP_SERVER_NAME=some-host")
	want := []string{
		"FLUXGIT_ALLOWED_ROOTS is set but fluxgit reads no such variable, so it has no effect; did you mean FLUXGIT_MCP_ALLOWED_ROOTS?",
		"SHIFT_WORKSPCE is set but fluxgit reads no such variable, so it has no effect; did you mean SHIFT_WORKSPACE?",
		"MCP_AUTH_MOD is set but fluxgit reads no such variable, so it has no effect; did you mean MCP_AUTH_MODE?",
	}
	t.Run("serve", func(t *testing.T) {
		s := startServer(t, env, "serve")
		initialize(t, s)
		s.stop()
		errOut := s.stderr.String()
		for _, w := range want {
			if !strings.Contains(errOut, "fluxgit: warning: environment: "+w) {
				t.Errorf("stderr lacks %q:\n%s", w, errOut)
			}
		}
		if strings.Contains(errOut, "MCP_SERVER_NAME") {
			t.Errorf("a host's MCP_* variable was reported:\n%s", errOut)
		}
	})
	t.Run("doctor", func(t *testing.T) {
		out, errOut, code := runCLI(t, env, "doctor")
		if code != 0 {
			t.Fatalf("doctor exit %d (unknown names only warn)\n%s%s", code, out, errOut)
		}
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("doctor lacks %q:\n%s", w, out)
			}
		}
		if !strings.Contains(out, "fix: rename FLUXGIT_ALLOWED_ROOTS to FLUXGIT_MCP_ALLOWED_ROOTS, or unset it") {
			t.Errorf("doctor gives no fix:\n%s", out)
		}
	})
	t.Run("gateway", func(t *testing.T) {
		// --max-pending 0 stops the gateway right after its start-up
		// warnings, so nothing listens.
		genv := append(env, "FLUXGIT_MCP_AGENT_POLICI=/p.yaml")
		_, errOut, code := runCLI(t, genv, "gateway", "--max-pending", "0")
		if code == 0 {
			t.Fatalf("gateway with --max-pending 0 started")
		}
		for _, w := range append(want, "FLUXGIT_MCP_AGENT_POLICI is set but fluxgit reads no such variable, so it has no effect; did you mean FLUXGIT_MCP_AGENT_POLICY?") {
			if !strings.Contains(errOut, "fluxgit: warning: environment: "+w) {
				t.Errorf("gateway stderr lacks %q:\n%s", w, errOut)
			}
		}
	})
}

// A malformed FLUXGIT_MCP_ALLOWED_ROOTS is reported at start as doctor
// reports it, naming the variable and the fix; the server still starts and
// every call answers -32010, which the model can read.
func TestMalformedRootsAtStart(t *testing.T) {
	env := append(baseEnv(t), "FLUXGIT_MCP_ALLOWED_ROOTS=relative/src")
	s := startServer(t, env, "serve")
	initialize(t, s)
	r := s.call(2, "tools/call", map[string]any{"name": "repo.status", "arguments": map[string]any{"repoPath": canonicalTempDir(t)}})
	if r.Error == nil || r.Error.Code != -32010 {
		t.Fatalf("tools/call with malformed roots: %s", r.raw)
	}
	s.stop()
	line := ""
	for _, l := range strings.Split(s.stderr.String(), "\n") {
		if strings.Contains(l, "roots:") {
			line = l
		}
	}
	out, _, _ := runCLI(t, env, "doctor")
	for _, w := range []string{`FLUXGIT_MCP_ALLOWED_ROOTS="relative/src"`, "every root must be an absolute path", "fix: list existing absolute directories"} {
		if !strings.Contains(line, w) {
			t.Errorf("the start-up line %q lacks %q", line, w)
		}
		if !strings.Contains(out, w) {
			t.Errorf("doctor lacks %q:\n%s", w, out)
		}
	}
}

// FLUXGIT_READ_ONLY (and every boolean variable) takes the usual
// spellings, in any case: yes/no, on/off, true/false, 1/0.
func TestBooleanSpellings(t *testing.T) {
	for _, c := range []struct {
		value    string
		readOnly bool
	}{
		{"yes", true}, {"ON", true}, {"True", true}, {"1", true},
		{"no", false}, {"off", false}, {"FALSE", false}, {"0", false},
	} {
		t.Run(c.value, func(t *testing.T) {
			_, _, _, tools := toolsetSession(t, []string{"FLUXGIT_READ_ONLY=" + c.value})
			writes := 0
			for _, tool := range tools {
				if strings.HasPrefix(tool.Name, "operation.preview.") {
					writes++
				}
			}
			if (writes == 0) != c.readOnly {
				t.Fatalf("FLUXGIT_READ_ONLY=%s: %d preview tools listed, read-only wanted %v", c.value, writes, c.readOnly)
			}
		})
	}
}

// doctor loads FLUXGIT_MCP_AGENT_POLICY with the gateway's own loader: a
// broken file fails with the loader's message, a sound one is OK, unset is
// OK.
func TestDoctorAgentPolicy(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	writeFile(t, bad, "version: 9\n")
	good := filepath.Join(dir, "good.yaml")
	writeFile(t, good, "version: 1\ndefault: deny\nrules: []\n")
	root := canonicalTempDir(t)
	for _, c := range []struct {
		name, file, status, want string
		code                     int
	}{
		{"unset", "", "OK", "none (FLUXGIT_MCP_AGENT_POLICY unset", 0},
		{"broken", bad, "FAIL", "agent policy " + bad + ": at /version: unsupported policy version 9", 1},
		{"missing", filepath.Join(dir, "nope.yaml"), "FAIL", "does not exist", 1},
		{"sound", good, "OK", "agent policy " + good + " (0 rules, default deny)", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := append(baseEnv(t), "FLUXGIT_MCP_ALLOWED_ROOTS="+root)
			if c.file != "" {
				env = append(env, "FLUXGIT_MCP_AGENT_POLICY="+c.file)
			}
			out, errOut, code := runCLI(t, env, "doctor")
			if code != c.code {
				t.Fatalf("doctor exit %d, want %d\n%s%s", code, c.code, out, errOut)
			}
			row := ""
			for _, l := range strings.Split(out, "\n") {
				if strings.HasPrefix(l, "agent-policy") {
					row = l
				}
			}
			if f := strings.Fields(row); len(f) < 2 || f[1] != c.status || !strings.Contains(row, c.want) {
				t.Fatalf("agent-policy row %q, want %s with %q\n%s", row, c.status, c.want, out)
			}
		})
	}
}

// go-plugin's routine INFO lines ("plugin process exited" at every
// shutdown) no longer reach stderr at the default level.
func TestNoGoPluginInfoOnStderr(t *testing.T) {
	repo := fixtureRepo(t)
	s := startServer(t, baseEnv(t), "serve")
	initialize(t, s)
	if r := statusCall(t, s, 2, repo); r == nil {
		t.Fatal("no repo.status result")
	}
	s.stop()
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
	}
	for _, l := range strings.Split(s.stderr.String(), "\n") {
		if strings.Contains(l, "[INFO]") && strings.Contains(l, "plugin") {
			t.Errorf("go-plugin INFO line on stderr: %s", l)
		}
	}
}
