package tests

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// scripts/release.sh for this machine's OS/arch: the binary carries the
// version through both `version` and `--version`, SHA256SUMS names it with
// its real digest, and a second run in another directory gives the same
// bytes (reproducible build).
func TestReleaseScript(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("scripts/release.sh needs a POSIX shell")
	}
	const version = "9.8.7-test.1"
	target := runtime.GOOS + "/" + runtime.GOARCH
	name := "fluxgit_" + version + "_" + runtime.GOOS + "_" + runtime.GOARCH
	var sums [2]string
	for i := range sums {
		out := filepath.Join(t.TempDir(), "dist")
		runRelease(t, 0, "", []string{"RELEASE_TARGETS=" + target, "SOURCE_DATE_EPOCH=1700000000"}, version, out)
		bin := filepath.Join(out, name)
		for _, args := range [][]string{{"version"}, {"--version"}} {
			got, err := exec.Command(bin, args...).Output()
			if err != nil {
				t.Fatalf("%s %v: %v", name, args, err)
			}
			if want := "fluxgit " + version + "\n"; string(got) != want {
				t.Fatalf("%s %v printed %q, want %q", name, args, got, want)
			}
		}
		data, err := os.ReadFile(bin)
		if err != nil {
			t.Fatal(err)
		}
		digest := sha256.Sum256(data)
		sumFile, err := os.ReadFile(filepath.Join(out, "SHA256SUMS"))
		if err != nil {
			t.Fatalf("SHA256SUMS: %v", err)
		}
		if want := hex.EncodeToString(digest[:]) + "  " + name + "\n"; string(sumFile) != want {
			t.Fatalf("SHA256SUMS is %q, want %q", sumFile, want)
		}
		if st, err := os.Stat(bin); err != nil || st.ModTime().Unix() != 1700000000 {
			t.Fatalf("binary mtime not SOURCE_DATE_EPOCH: %v %v", st.ModTime(), err)
		}
		sums[i] = string(sumFile)
	}
	if sums[0] != sums[1] {
		t.Fatalf("two builds differ:\n%s\n%s", sums[0], sums[1])
	}
}

// Bad arguments are refused before anything is built, with a message that
// says what a valid one looks like.
func TestReleaseScriptRefusesBadInput(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("scripts/release.sh needs a POSIX shell")
	}
	for _, tc := range []struct {
		name    string
		env     []string
		args    []string
		message string
	}{
		{"no version", nil, nil, "usage:"},
		{"version with a space", nil, []string{"1 2"}, "must be letters, digits"},
		{"version with a slash", nil, []string{"../1.0"}, "must be letters, digits"},
		{"target without arch", []string{"RELEASE_TARGETS=linux"}, []string{"1.0.0"}, "must be GOOS/GOARCH"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "dist")
			args := tc.args
			if len(args) > 0 {
				args = append(args, out)
			}
			runRelease(t, 2, tc.message, tc.env, args...)
			if entries, _ := os.ReadDir(out); len(entries) != 0 {
				t.Fatalf("refused run wrote %d files", len(entries))
			}
		})
	}
}

// runRelease runs scripts/release.sh and checks its exit code and, when
// message is set, that stderr contains it.
func runRelease(t *testing.T, wantCode int, message string, env []string, args ...string) {
	t.Helper()
	cmd := exec.Command("../scripts/release.sh", args...)
	cmd.Env = append(os.Environ(), env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("release.sh: %v", err)
	}
	if code != wantCode {
		t.Fatalf("release.sh %v exited %d, want %d; stderr:\n%s", args, code, wantCode, stderr.String())
	}
	if message != "" && !strings.Contains(stderr.String(), message) {
		t.Fatalf("release.sh %v stderr lacks %q:\n%s", args, message, stderr.String())
	}
}

// scripts/release.sh --check builds every artefact of the canonical version
// (cmd/fluxgit/VERSION) for this machine and tries each as a user would:
// the npm packages installed offline from their tarballs and run through
// npx (version, tools/list over stdio, exit status, SIGTERM), the Desktop
// bundle validated, packed, unpacked and started with its manifest's command
// line, both plugins' server entries run against the installed package, the
// Homebrew formula against SHA256SUMS, and server.json against the registry
// schema. It needs Node and npm (.ci/run installs Node 22): without them the
// test skips, except in CI.
func TestReleaseCheck(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("scripts/release.sh needs a POSIX shell")
	}
	for _, tool := range []string{"node", "npm", "npx"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("CI is set but %s is not on PATH: the release check needs Node and npm (.ci/run installs Node 22)", tool)
			}
			t.Skipf("%s is not on PATH: the release check needs Node and npm", tool)
		}
	}
	start := time.Now()
	cmd := exec.Command("../scripts/release.sh", "--check")
	cmd.Env = os.Environ()
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("release.sh --check: %v\n%s", err, out.String())
		}
	case <-time.After(10 * time.Minute):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("release.sh --check did not finish in 10 minutes\n%s", out.String())
	}
	for _, want := range []string{
		"ok: SHA256SUMS", "npx fluxgit --version: fluxgit ", "ok: npx fluxgit: tools/list",
		"passes on the exit status", "passes on SIGTERM", "ok: Desktop bundle", "ok: claude-code plugin",
		"ok: codex plugin", "ok: Homebrew formula", "ok: server.json",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("release.sh --check output lacks %q:\n%s", want, out.String())
		}
	}
	t.Logf("release.sh --check took %s", time.Since(start).Round(time.Second))
}

// buildReleaseCheck builds tests/releasecheck, the checks --check runs.
func buildReleaseCheck(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "releasecheck")
	if out, err := exec.Command("go", "build", "-o", bin, "./releasecheck").CombinedOutput(); err != nil {
		t.Fatalf("build releasecheck: %v\n%s", err, out)
	}
	return bin
}

// Each check --check relies on refuses a broken artefact, saying what is
// wrong; the unbroken artefacts pass.
func TestReleaseCheckRefusesBrokenArtefacts(t *testing.T) {
	rc := buildReleaseCheck(t)
	const version = "0.1.0"
	sumA := strings.Repeat("a", 64)
	sumB := strings.Repeat("b", 64)
	sums := sumA + "  fluxgit_0.1.0_darwin_arm64\n" + sumB + "  fluxgit_0.1.0_linux_amd64\n"
	formula := func(s1, s2, ver string) string {
		return "class Fluxgit < Formula\n  version \"" + ver + "\"\n  on_macos do\n    on_arm do\n" +
			"      url \"https://github.com/fluxgit/fluxgit/releases/download/v0.1.0/fluxgit_0.1.0_darwin_arm64\"\n" +
			"      sha256 \"" + s1 + "\"\n    end\n  end\n  on_linux do\n    on_intel do\n" +
			"      url \"https://github.com/fluxgit/fluxgit/releases/download/v0.1.0/fluxgit_0.1.0_linux_amd64\"\n" +
			"      sha256 \"" + s2 + "\"\n    end\n  end\n  def install\n    bin.install \"x\"\n  end\nend\n"
	}
	serverRaw, err := os.ReadFile("../server.json")
	if err != nil {
		t.Fatal(err)
	}
	pkgJSON := func(name, ver, mcpName string) string {
		return fmt.Sprintf(`{"name":%q,"version":%q,"mcpName":%q}`, name, ver, mcpName)
	}
	good := pkgJSON("fluxgit", version, "io.github.fluxgit/fluxgit")
	for _, tc := range []struct {
		name    string
		check   string
		files   map[string]string
		args    []string
		message string // "" = must pass
	}{
		{"formula as written", "formula", map[string]string{"f.rb": formula(sumA, sumB, version), "SUMS": sums}, []string{"f.rb", "SUMS", version, "2"}, ""},
		{"formula checksum not in SHA256SUMS", "formula", map[string]string{"f.rb": formula(sumA, sumA, version), "SUMS": sums}, []string{"f.rb", "SUMS", version, "2"}, "is not SHA256SUMS's"},
		{"formula of another version", "formula", map[string]string{"f.rb": formula(sumA, sumB, "0.2.0"), "SUMS": sums}, []string{"f.rb", "SUMS", version, "2"}, "no version"},
		{"formula with a placeholder", "formula", map[string]string{"f.rb": formula("@SHA256_darwin_arm64@", sumB, version), "SUMS": sums}, []string{"f.rb", "SUMS", version, "2"}, "placeholder"},
		{"formula missing a binary", "formula", map[string]string{"f.rb": formula(sumA, sumB, version), "SUMS": sums}, []string{"f.rb", "SUMS", version, "4"}, "want 4"},
		{"formula with a block left open", "formula", map[string]string{"f.rb": strings.TrimSuffix(formula(sumA, sumB, version), "end\n"), "SUMS": sums}, []string{"f.rb", "SUMS", version, "2"}, "not closed"},
		{"server.json as written", "registry", map[string]string{"s.json": string(serverRaw), "p.json": good}, []string{"schema", "s.json", "p.json", version}, ""},
		{"npm package of another name", "registry", map[string]string{"s.json": string(serverRaw), "p.json": pkgJSON("fluxgit-cli", version, "io.github.fluxgit/fluxgit")}, []string{"schema", "s.json", "p.json", version}, "want fluxgit-cli@"},
		{"mcpName differs", "registry", map[string]string{"s.json": string(serverRaw), "p.json": pkgJSON("fluxgit", version, "io.github.other/fluxgit")}, []string{"schema", "s.json", "p.json", version}, "mcpName"},
		{"entry of another version", "registry", map[string]string{"s.json": string(serverRaw), "p.json": good}, []string{"schema", "s.json", "p.json", "0.2.0"}, "want \"0.2.0\""},
		{"entry against the schema", "registry", map[string]string{"s.json": strings.Replace(string(serverRaw), `"registryType": "npm"`, `"registryType": 7`, 1), "p.json": good}, []string{"schema", "s.json", "p.json", version}, "does not validate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, body := range tc.files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			args := []string{tc.check}
			for _, a := range tc.args {
				if a == "schema" {
					abs, _ := filepath.Abs("testdata/registry/server.schema.json")
					a = abs
				}
				args = append(args, a)
			}
			cmd := exec.Command(rc, args...)
			cmd.Dir = dir
			out, err := cmd.CombinedOutput()
			if tc.message == "" {
				if err != nil {
					t.Fatalf("releasecheck %v refused an intact artefact: %v\n%s", args, err, out)
				}
				return
			}
			if err == nil || !strings.Contains(string(out), tc.message) {
				t.Fatalf("releasecheck %v: err %v, want a refusal naming %q:\n%s", args, err, tc.message, out)
			}
		})
	}
}

// SHA256SUMS must list every artefact with its digest.
func TestReleaseCheckSums(t *testing.T) {
	rc := buildReleaseCheck(t)
	digest := func(s string) string { d := sha256.Sum256([]byte(s)); return hex.EncodeToString(d[:]) }
	for _, tc := range []struct {
		name    string
		files   map[string]string
		sums    string
		message string
	}{
		{"complete", map[string]string{"a": "A", "d/b": "B"}, digest("A") + "  a\n" + digest("B") + "  d/b\n", ""},
		{"a file not listed", map[string]string{"a": "A", "d/b": "B"}, digest("A") + "  a\n", "d/b is not listed"},
		{"a digest that differs", map[string]string{"a": "A"}, digest("X") + "  a\n", "digest differs"},
		{"a listed file missing", map[string]string{"a": "A"}, digest("A") + "  a\n" + digest("B") + "  b\n", "b, which is missing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, body := range tc.files {
				p := filepath.Join(dir, name)
				_ = os.MkdirAll(filepath.Dir(p), 0o755)
				if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(filepath.Join(dir, "SHA256SUMS"), []byte(tc.sums), 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(rc, "sums", dir).CombinedOutput()
			if tc.message == "" {
				if err != nil {
					t.Fatalf("refused: %v\n%s", err, out)
				}
			} else if err == nil || !strings.Contains(string(out), tc.message) {
				t.Fatalf("err %v, want %q:\n%s", err, tc.message, out)
			}
		})
	}
}

// npmPlatform is the npm package suffix for this machine (process.platform
// and process.arch in Node).
func npmPlatform() string {
	osName, cpu := runtime.GOOS, runtime.GOARCH
	if osName == "windows" {
		osName = "win32"
	}
	if cpu == "amd64" {
		cpu = "x64"
	}
	return osName + "-" + cpu
}

// npmLayout lays out node_modules as npm installs the fluxgit package with
// this machine's platform package (version platformVersion, holding the
// fluxgit binary the tests built; none when platformVersion is empty), and
// returns the launcher's path.
func npmLayout(t *testing.T, version, platformVersion string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "node_modules")
	main := filepath.Join(dir, "fluxgit")
	tmpl, err := os.ReadFile("../packaging/npm/fluxgit/package.json")
	if err != nil {
		t.Fatal(err)
	}
	launcher, err := os.ReadFile("../packaging/npm/fluxgit/bin/fluxgit.js")
	if err != nil {
		t.Fatal(err)
	}
	writeNPMFile(t, filepath.Join(main, "package.json"), strings.ReplaceAll(string(tmpl), "@VERSION@", version), 0o644)
	writeNPMFile(t, filepath.Join(main, "bin", "fluxgit.js"), string(launcher), 0o755)
	if platformVersion != "" {
		plat := filepath.Join(dir, "@fluxgit", npmPlatform())
		writeNPMFile(t, filepath.Join(plat, "package.json"), fmt.Sprintf(`{"name":"@fluxgit/%s","version":%q}`, npmPlatform(), platformVersion), 0o644)
		bin, err := os.ReadFile(fluxgitBin)
		if err != nil {
			t.Fatal(err)
		}
		name := "fluxgit"
		if runtime.GOOS == "windows" {
			name += ".exe"
		}
		writeNPMFile(t, filepath.Join(plat, "bin", name), string(bin), 0o755)
	}
	return filepath.Join(main, "bin", "fluxgit.js")
}

func writeNPMFile(t *testing.T, p, body string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), mode); err != nil {
		t.Fatal(err)
	}
}

// The npm launcher runs the platform package's binary as if it had been
// started directly — arguments, standard streams (a real MCP session),
// exit status, SIGTERM — and refuses, saying how to fix it, when the
// platform package is missing or of another version.
func TestNPMLauncher(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("CI is set but node is not on PATH (.ci/run installs Node 22)")
		}
		t.Skip("node is not on PATH")
	}
	rc := buildReleaseCheck(t)
	const version = "1.2.3"
	launcher := npmLayout(t, version, version)
	direct := exec.Command(fluxgitBin, "--no-such-flag")
	direct.Env = baseEnv(t)
	wantCode := 0
	if err := direct.Run(); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatal(err)
		}
		wantCode = ee.ExitCode()
	}
	if wantCode == 0 {
		t.Fatal("fluxgit --no-such-flag exited 0; the exit-status check needs a failing command")
	}
	repo := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"arguments and stdout", []string{"exitcode", "0", "--", "node", launcher, "version"}, ""},
		{"exit status", []string{"exitcode", fmt.Sprint(wantCode), "--", "node", launcher, "--no-such-flag"}, ""},
		{"MCP over stdio", []string{"mcp", "-env", "FLUXGIT_MCP_ALLOWED_ROOTS=" + repo, "--", "node", launcher}, "tools/list: "},
		{"SIGTERM", []string{"sigterm", "-env", "FLUXGIT_MCP_ALLOWED_ROOTS=" + repo, "--", "node", launcher}, "sigterm: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(rc, tc.args...)
			cmd.Env = baseEnv(t)
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(out), tc.want) {
				t.Fatalf("releasecheck %v: %v\n%s", tc.args, err, out)
			}
		})
	}
	t.Run("version printed", func(t *testing.T) {
		out, err := exec.Command("node", launcher, "--version").Output()
		if want, _ := exec.Command(fluxgitBin, "--version").Output(); err != nil || string(out) != string(want) {
			t.Fatalf("launcher --version printed %q (%v), the binary %q", out, err, want)
		}
	})
	for _, tc := range []struct {
		name, platformVersion, message string
	}{
		{"platform package missing", "", "reinstall without --omit=optional"},
		{"platform package of another version", "1.2.2", "install the same version of both"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := exec.Command("node", npmLayout(t, version, tc.platformVersion), "--version").CombinedOutput()
			if err == nil || !strings.Contains(string(out), tc.message) {
				t.Fatalf("launcher: err %v, want a refusal saying %q:\n%s", err, tc.message, out)
			}
		})
	}
}

// --set-version moves every file that names the version literally, so the
// literal-version agreement (TestLiteralVersionsAgree) holds after a bump.
func TestReleaseSetVersion(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("scripts/release.sh needs a POSIX shell")
	}
	dir := t.TempDir()
	files := []string{"scripts/release.sh", "cmd/fluxgit/VERSION", "server.json",
		"packaging/claude-plugin/.claude-plugin/plugin.json", "packaging/codex/.codex-plugin/plugin.json",
		"packaging/codex/.mcp.json", "packaging/codex/config.toml", "README.md", "docs/install.md"}
	for _, f := range files {
		raw, err := os.ReadFile(filepath.Join("..", f))
		if err != nil {
			t.Fatal(err)
		}
		writeNPMFile(t, filepath.Join(dir, f), string(raw), 0o755)
	}
	old := canonicalVersion(t)
	const next = "7.8.9-rc.1"
	if out, err := exec.Command(filepath.Join(dir, "scripts/release.sh"), "--set-version", next).CombinedOutput(); err != nil {
		t.Fatalf("--set-version: %v\n%s", err, out)
	}
	for _, c := range []struct{ file, want string }{
		{"cmd/fluxgit/VERSION", next + "\n"},
		{"server.json", `"version": "` + next + `"`},
		{"server.json", `"ghcr.io/fluxgit/fluxgit:` + next + `"`},
		{"packaging/claude-plugin/.claude-plugin/plugin.json", `"fluxgit@` + next + `"`},
		{"packaging/claude-plugin/.claude-plugin/plugin.json", `"version": "` + next + `"`},
		{"packaging/codex/.codex-plugin/plugin.json", `"version": "` + next + `"`},
		{"packaging/codex/.mcp.json", `"fluxgit@` + next + `"`},
		{"packaging/codex/config.toml", `"fluxgit@` + next + `"`},
		{"README.md", "npx -y fluxgit@" + next},
		{"README.md", "fluxgit/cmd/fluxgit@v" + next},
		{"docs/install.md", "fluxgit_" + next + "_darwin_arm64.mcpb"},
		{"docs/install.md", "npx -y fluxgit@" + next},
	} {
		raw, err := os.ReadFile(filepath.Join(dir, c.file))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(raw), c.want) || strings.Contains(string(raw), `"`+old+`"`) || strings.Contains(string(raw), "@"+old+`"`) {
			t.Errorf("%s after --set-version %s lacks %s or still names %s:\n%s", c.file, next, c.want, old, raw)
		}
	}
	if out, err := exec.Command(filepath.Join(dir, "scripts/release.sh"), "--set-version", "v1.0").CombinedOutput(); err == nil || !strings.Contains(string(out), "semver without v") {
		t.Errorf("--set-version v1.0: %v, want a refusal naming semver without v:\n%s", err, out)
	}
}
