package tests

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// listTree names every file and directory under root, so a test can show
// that a check wrote nothing.
func listTree(t *testing.T, root string) []string {
	t.Helper()
	var names []string
	err := filepath.WalkDir(root, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		names = append(names, p)
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return names
}

// TestDoctorMisconfiguration runs `fluxgit doctor` and `fluxgit serve` with
// one misconfiguration each: doctor shows the failed check with its fix and
// exits 1, serve exits (fatal problems) or warns with the same one line, and
// neither writes into the run or state directory.
func TestDoctorMisconfiguration(t *testing.T) {
	tests := []struct {
		name string
		// env adds variables; dir is a private scratch directory.
		env func(t *testing.T, dir string) []string
		// row is the doctor table's check name; want is in its detail.
		row, want string
		// fatal: serve exits 1 before serving; otherwise it warns and serves.
		fatal bool
	}{
		{"relative roots", func(*testing.T, string) []string { return []string{"FLUXGIT_MCP_ALLOWED_ROOTS=src/repos"} },
			"roots", "every root must be an absolute path", false},
		{"missing root", func(_ *testing.T, d string) []string {
			return []string{"FLUXGIT_MCP_ALLOWED_ROOTS=" + filepath.Join(d, "gone")}
		}, "roots", "root cannot be resolved", false},
		{"git path missing", func(_ *testing.T, d string) []string {
			return []string{"FLUXGIT_MCP_GIT_PATH=" + filepath.Join(d, "git")}
		}, "git", "FLUXGIT_MCP_GIT_PATH", false},
		{"git too old", func(t *testing.T, d string) []string {
			p := filepath.Join(d, "bin", "git")
			writeFile(t, p, "#!/bin/sh\necho 'git version 2.30.1'\n")
			if err := os.Chmod(p, 0o755); err != nil {
				t.Fatal(err)
			}
			return []string{"FLUXGIT_MCP_GIT_PATH=" + p}
		}, "git", "is git 2.30.1, older than 2.38.0", false},
		{"gateway host name", func(*testing.T, string) []string { return []string{"FLUXGIT_GATEWAY_ADDR=localhost:59647"} },
			"gateway", "IP literal", false},
		{"state dir writable by others", func(t *testing.T, d string) []string {
			s := filepath.Join(d, "state")
			if err := os.Mkdir(s, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(s, 0o777); err != nil {
				t.Fatal(err)
			}
			return []string{"SHIFT_STATE_DIR=" + s}
		}, "state-dir", "writable by group or others", false},
		{"empty signing key", func(*testing.T, string) []string { return []string{"FLUXGIT_MCP_AUDIT_SIGN_KEY="} },
			"signing-key", "set but empty", true},
		{"missing signing key", func(_ *testing.T, d string) []string {
			return []string{"FLUXGIT_MCP_AUDIT_SIGN_KEY=" + filepath.Join(d, "nokey.pem")}
		}, "signing-key", "failing closed", true},
		{"ledger path is a directory", func(_ *testing.T, d string) []string {
			return []string{"FLUXGIT_MCP_AUDIT_LOG=" + d}
		}, "ledger", "is a directory", true},
		{"retention age below the age floor", func(*testing.T, string) []string {
			return []string{"FLUXGIT_MCP_AUDIT_RETAIN_AGE=7d"}
		}, "ledger", "is below FLUXGIT_MCP_AUDIT_MIN_AGE", true},
		{"segment size out of range", func(*testing.T, string) []string {
			return []string{"FLUXGIT_MCP_AUDIT_SEGMENT_BYTES=100", "FLUXGIT_MCP_AUDIT_DISABLED=1"}
		}, "ledger", "between 4096", true},
		{"config shadows a built-in", func(t *testing.T, d string) []string {
			c := filepath.Join(d, "c.yaml")
			writeFile(t, c, "providers:\n  - name: git-read\n    command: /bin/true\n    spec: .\n")
			return []string{"FLUXGIT_CONFIG=" + c}
		}, "config", "shadows a built-in", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			scratch := canonicalTempDir(t)
			env := baseEnv(t) // private run and state directories
			env = append(env, tc.env(t, scratch)...)
			var watched []string
			for _, kv := range env {
				if k, v, _ := strings.Cut(kv, "="); k == "FLUXGIT_RUN_DIR" || k == "SHIFT_STATE_DIR" {
					watched = append(watched, v)
				}
			}
			before := map[string][]string{}
			for _, d := range watched {
				before[d] = listTree(t, d)
			}

			out, errOut, code := runCLI(t, env, "doctor")
			if code != 1 {
				t.Fatalf("doctor exit %d, want 1\n%s%s", code, out, errOut)
			}
			var row string
			for _, l := range strings.Split(out, "\n") {
				if f := strings.Fields(l); len(f) > 1 && f[0] == tc.row {
					row = l
					break
				}
			}
			if !strings.Contains(row, "FAIL") || !strings.Contains(row, tc.want) {
				t.Fatalf("doctor row %q lacks FAIL and %q:\n%s", tc.row, tc.want, out)
			}
			if !strings.Contains(out, "fix: ") {
				t.Errorf("doctor gives no fix:\n%s", out)
			}

			if tc.fatal {
				sout, serr, scode := runCLI(t, env, "serve")
				if scode != 1 || sout != "" {
					t.Fatalf("serve exit %d (want 1), stdout %q", scode, sout)
				}
				line := "fluxgit: error: " + tc.row + ": "
				if !strings.Contains(serr, line) || !strings.Contains(serr, tc.want) || !strings.Contains(serr, "; fix: ") {
					t.Fatalf("serve stderr lacks the one-line %q… %q with a fix:\n%s", line, tc.want, serr)
				}
			}
			for _, d := range watched {
				if after := listTree(t, d); !slices.Equal(before[d], after) {
					t.Errorf("%s changed: before %v, after %v", d, before[d], after)
				}
			}

			if !tc.fatal {
				// The server still starts (older setups relied on it) and
				// says what is wrong on one line.
				_, serr, scode := runCLI(t, env, "serve")
				if scode != 0 {
					t.Fatalf("serve exit %d, want 0 (a warning, not a refusal):\n%s", scode, serr)
				}
				var lines []string
				for _, l := range strings.Split(serr, "\n") {
					if strings.HasPrefix(l, "fluxgit: warning: "+tc.row+": ") {
						lines = append(lines, l)
					}
				}
				if len(lines) != 1 || !strings.Contains(lines[0], tc.want) || !strings.Contains(lines[0], "; fix: ") {
					t.Fatalf("want one warning line for %s with %q and a fix, got %q\n%s", tc.row, tc.want, lines, serr)
				}
			}
		})
	}
}

// TestDoctorHealthy: a sound configuration passes every check, exit 0.
func TestDoctorHealthy(t *testing.T) {
	root := canonicalTempDir(t)
	env := append(baseEnv(t), "FLUXGIT_MCP_ALLOWED_ROOTS="+root)
	out, errOut, code := runCLI(t, env, "doctor")
	if code != 0 {
		t.Fatalf("doctor exit %d\n%s%s", code, out, errOut)
	}
	for _, check := range []string{"config", "roots", "git", "run-dir", "state-dir", "roster-db", "signing-key", "ledger", "gateway", "result-shape"} {
		found := false
		for _, l := range strings.Split(out, "\n") {
			if f := strings.Fields(l); len(f) > 1 && f[0] == check && f[1] == "OK" {
				found = true
			}
		}
		if !found {
			t.Errorf("no OK row for %s:\n%s", check, out)
		}
	}
	if !strings.Contains(out, "0 check(s) failed, 0 warning(s)") {
		t.Errorf("summary line missing:\n%s", out)
	}
	// The ledger row shows the retention policy in effect.
	policy := "retains 20971520 bytes, no age limit, keeps 30d at least, 4194304-byte segments"
	if !strings.Contains(out, policy) {
		t.Errorf("the ledger row lacks the default policy %q:\n%s", policy, out)
	}
	out, _, _ = runCLI(t, append(env, "FLUXGIT_MCP_AUDIT_RETAIN_AGE=90d", "FLUXGIT_MCP_AUDIT_RETAIN_BYTES=0"), "doctor")
	if !strings.Contains(out, "no size limit, prunes after 90d, keeps 30d at least") {
		t.Errorf("the ledger row lacks the configured policy:\n%s", out)
	}
}

// TestProvidersNotReady: a provider that starts but cannot serve a call
// under this configuration is reported as not ready and fails the command.
func TestProvidersNotReady(t *testing.T) {
	tests := []struct {
		name, env, provider, want string
	}{
		{"no git", "FLUXGIT_MCP_GIT_PATH=/nonexistent/git", "git-read", "ready: NO: git: "},
		{"bad roots", "FLUXGIT_MCP_ALLOWED_ROOTS=relative", "handshake", "ready: NO: roots: "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := runCLI(t, append(baseEnv(t), tc.env), "providers")
			if code != 1 || !strings.Contains(errOut, "cannot serve") {
				t.Fatalf("exit %d, want 1\n%s%s", code, out, errOut)
			}
			_, section, _ := strings.Cut(out, tc.provider+" (built-in)\n")
			section, _, _ = strings.Cut(section, "tools (")
			if !strings.Contains(section, tc.want) {
				t.Fatalf("%s is not reported %q:\n%s", tc.provider, tc.want, out)
			}
		})
	}
}
