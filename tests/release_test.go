package tests

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
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
