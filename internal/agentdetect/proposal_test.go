package agentdetect

import (
	"fmt"
	"path/filepath"
	"reflect"
	"testing"
)

func TestPatchPaths(t *testing.T) {
	tests := []struct {
		name  string
		patch string
		want  []string
	}{
		{"none", "just text\n", nil},
		{"git header", "diff --git a/old.txt b/new.txt\n", []string{"new.txt"}},
		{"both sides", "--- a/x/y.go\n+++ b/x/y.go\n", []string{"x/y.go", "x/y.go"}},
		{"added file", "--- /dev/null\n+++ b/added.txt\n", []string{"added.txt"}},
		{"deleted file", "--- a/gone.txt\n+++ /dev/null\n", []string{"gone.txt"}},
		{"CRLF", "diff --git a/w.txt b/w.txt\r\n", []string{"w.txt"}},
		{"GNU timestamps", "--- a/t.c\t2026-01-01 00:00:00\n+++ b/t.c\t2026-01-02 00:00:00\n", []string{"t.c", "t.c"}},
		{"spaces", "diff --git a/my file.txt b/my file.txt\n", []string{"my file.txt"}},
		{"quoted", "diff --git \"a/q x\" \"b/q x\"\n+++ \"b/q x\"\n", []string{"q x", "q x"}},
		{"no trailing newline", "+++ b/last", []string{"last"}},
		{"context lines ignored", "@@ -1 +1 @@\n foo\n-bar\n+baz\n", nil},
		{"two files", "diff --git a/a b/a\n--- a/a\n+++ b/a\ndiff --git a/b b/c\n", []string{"a", "a", "a", "c"}},
	}
	for _, tt := range tests {
		if got := PatchPaths(tt.patch); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: PatchPaths = %#v, want %#v", tt.name, got, tt.want)
		}
	}
}

func TestNormalizeProposalPaths(t *testing.T) {
	testRepo := filepath.Join(string(filepath.Separator)+"tmp", "repo")
	outside := filepath.Join(filepath.Dir(testRepo), "elsewhere", "f")
	tests := []struct {
		name string
		in   []string
		want []string
	}{
		{"unknown stays nil", nil, nil},
		{"known empty", []string{}, []string{}},
		{"dot slash", []string{"./a", "././b/", ".//c"}, []string{"a", "b", "c"}},
		{"trailing slash", []string{"dir/", "dir//"}, []string{"dir"}},
		{"empty and dot are the repository", []string{"", "./", "."}, []string{"."}},
		{"backslashes", []string{`sub\file.txt`}, []string{"sub/file.txt"}},
		{"absolute inside", []string{filepath.Join(testRepo, "x", "y"), testRepo}, []string{"x/y", "."}},
		{"absolute outside dropped", []string{outside, "kept"}, []string{"kept"}},
		{"duplicates", []string{"a", "./a", "a/"}, []string{"a"}},
	}
	for _, tt := range tests {
		got := NormalizeProposalPaths(testRepo, tt.in)
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: got %#v, want %#v", tt.name, got, tt.want)
		}
	}
	many := make([]string, 1500)
	for i := range many {
		many[i] = fmt.Sprintf("f%d", i)
	}
	got := NormalizeProposalPaths(testRepo, many)
	if len(got) != MaxProposalPaths || got[0] != "f0" || got[MaxProposalPaths-1] != fmt.Sprintf("f%d", MaxProposalPaths-1) {
		t.Fatalf("cap: %d paths, first %s", len(got), got[0])
	}
}

func TestPathsOverlap(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{".", "x", true},
		{"x/y", ".", true},
		{"a", "a", true},
		{"src", "src/a.go", true},
		{"src/a.go", "src", true},
		{"src", "srcx/a.go", false},
		{"a/b", "a/c", false},
		{"lib/x", "lib", true},
	}
	for _, tt := range tests {
		if got := PathsOverlap(tt.a, tt.b); got != tt.want {
			t.Errorf("PathsOverlap(%q, %q) = %v", tt.a, tt.b, got)
		}
	}
}
