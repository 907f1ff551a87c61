package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// `fluxgit spec lint DIR` lints the prompts/ directory of DIR like its tools.
func TestSpecLintPromptsCLI(t *testing.T) {
	env := baseEnv(t)
	dir := t.TempDir()
	if out, err := exec.Command("cp", "-r", "../spec/tools", "../spec/fragments", "../spec/resources", "../spec/prompts", dir).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	if out, errOut, code := runCLI(t, env, "spec", "lint", dir); code != 0 {
		t.Fatalf("a faithful copy of the spec should lint clean, exit %d\n%s%s", code, out, errOut)
	}
	bad := filepath.Join(dir, "prompts", "review_branch.yaml")
	b, err := os.ReadFile(bad)
	if err != nil {
		t.Fatal(err)
	}
	broken := strings.Replace(string(b), "{{if .base}} into", "{{if .head}} into", 1)
	broken = strings.Replace(broken, "provider: git-read", "provider: nobody", 1)
	if broken == string(b) {
		t.Fatal("fixture: review_branch.yaml changed; update the replacements")
	}
	writeFile(t, bad, broken)
	out, _, code := runCLI(t, env, "spec", "lint", dir)
	if code != 1 {
		t.Fatalf("broken prompt: exit %d, want 1\n%s", code, out)
	}
	for _, want := range []string{
		"prompts/review_branch.yaml: prompt-template: messages[0]: {{.head}} references head, which is not a declared argument (declared arguments: base, repoPath)",
		`prompts/review_branch.yaml: provider-unknown: provider "nobody"`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("findings lack %q:\n%s", want, out)
		}
	}
}
