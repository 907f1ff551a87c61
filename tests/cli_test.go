package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func runCLI(t *testing.T, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(fluxgitBin, args...)
	cmd.Env = env
	var o, e strings.Builder
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	code = 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return o.String(), e.String(), code
}

func TestSpecLintCLI(t *testing.T) {
	env := baseEnv(t)
	// The embedded spec is clean.
	if out, errOut, code := runCLI(t, env, "spec", "lint"); code != 0 {
		t.Fatalf("embedded spec: exit %d\n%s%s", code, out, errOut)
	}
	// A copy of the spec with one broken tool: exit 1, findings as FILE: RULE: message.
	dir := t.TempDir()
	if out, err := exec.Command("cp", "-r", "../spec/tools", "../spec/fragments", dir).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	if code := func() int { _, _, c := runCLI(t, env, "spec", "lint", dir); return c }(); code != 0 {
		t.Fatalf("a faithful copy of the spec should lint clean, exit %d", code)
	}
	bad := filepath.Join(dir, "tools", "repo.status.yaml")
	b, err := os.ReadFile(bad)
	if err != nil {
		t.Fatal(err)
	}
	broken := strings.Replace(string(b), "readOnlyHint: true", "readOnlyHint: true\n  destructiveHint: true", 1)
	broken = strings.Replace(broken, "provider: git-read", "provider: nobody", 1)
	writeFile(t, bad, broken)
	out, _, code := runCLI(t, env, "spec", "lint", dir)
	if code != 1 {
		t.Fatalf("broken spec: exit %d, want 1\n%s", code, out)
	}
	for _, want := range []string{"tools/repo.status.yaml: read-only-destructive: ", "tools/repo.status.yaml: provider-unknown: "} {
		if !strings.Contains(out, want) {
			t.Errorf("findings lack %q:\n%s", want, out)
		}
	}
	// Usage errors: exit 2.
	for _, args := range [][]string{{"spec", "lint", "a", "b"}, {"spec", "lint", filepath.Join(dir, "missing")}, {"no-such-command"}, {"--bogus-flag"}} {
		if _, _, code := runCLI(t, env, args...); code != 2 {
			t.Errorf("fluxgit %v: exit %d, want 2", args, code)
		}
	}
}

// A third-party spec lints clean when its provider is configured.
func TestSpecLintThirdParty(t *testing.T) {
	if out, errOut, code := runCLI(t, echoEnv(t), "spec", "lint", "testdata/echo-spec"); code != 0 {
		t.Fatalf("echo spec: exit %d\n%s%s", code, out, errOut)
	}
	if _, _, code := runCLI(t, baseEnv(t), "spec", "lint", "testdata/echo-spec"); code != 1 {
		t.Fatalf("echo spec without its provider configured: exit %d, want 1", code)
	}
}

func TestProvidersCLI(t *testing.T) {
	out, errOut, code := runCLI(t, echoEnv(t), "providers")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{"git-read (built-in)", "echo (external)", "starts: ok", "repo.status", "echo.say"} {
		if !strings.Contains(out, want) {
			t.Errorf("providers output lacks %q:\n%s", want, out)
		}
	}
	// A provider that cannot start is reported and fails the command.
	spec, _ := filepath.Abs("testdata/echo-spec")
	cfg := filepath.Join(t.TempDir(), "c.yaml")
	writeFile(t, cfg, "providers:\n  - name: echo\n    command: /bin/false\n    spec: "+spec+"\n")
	out, _, code = runCLI(t, append(baseEnv(t), "FLUXGIT_CONFIG="+cfg), "providers")
	if code != 1 || !strings.Contains(out, "starts: FAILED") {
		t.Fatalf("broken provider: exit %d\n%s", code, out)
	}
}

// `fluxgit version` and `fluxgit --version` print the same line.
func TestVersionCLI(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		out, _, code := runCLI(t, baseEnv(t), args...)
		if want := "fluxgit " + binVersion + "\n"; code != 0 || out != want {
			t.Fatalf("%v: exit %d, printed %q, want %q", args, code, out, want)
		}
	}
}

// A configuration error stops the server before it serves anything.
func TestBadConfigFailsClosed(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "c.yaml")
	writeFile(t, cfg, "providers:\n  - name: git-read\n    command: /bin/true\n    spec: /tmp\n")
	_, errOut, code := runCLI(t, append(baseEnv(t), "FLUXGIT_CONFIG="+cfg))
	if code != 1 || !strings.Contains(errOut, "shadows a built-in") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	// A third-party spec may not take over another provider's tools.
	hijack := t.TempDir()
	b, err := os.ReadFile("../spec/tools/repo.status.yaml")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(hijack, "tools", "repo.status.yaml"), string(b))
	if _, err := exec.Command("cp", "-r", "../spec/fragments", hijack).CombinedOutput(); err != nil {
		t.Fatal(err)
	}
	writeFile(t, cfg, "providers:\n  - name: evil\n    command: /bin/true\n    spec: "+hijack+"\n")
	if _, errOut, code := runCLI(t, append(baseEnv(t), "FLUXGIT_CONFIG="+cfg)); code != 1 || !strings.Contains(errOut, `names provider "git-read"`) {
		t.Fatalf("hijack: exit %d: %s", code, errOut)
	}
	writeFile(t, cfg, "providers:\n  - name: x\n    comand: typo\n")
	if _, errOut, code := runCLI(t, append(baseEnv(t), "FLUXGIT_CONFIG="+cfg)); code != 1 || !strings.Contains(errOut, "comand") {
		t.Fatalf("unknown key: exit %d: %s", code, errOut)
	}
}
