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
		{"quoted", "diff --git \"a/q x\" \"b/q x\"\n+++ \"b/q x\"\n", []string{"q x", "q x"}},
		{"context lines ignored", "@@ -1 +1 @@\n foo\n-bar\n+baz\n", nil},
	}
	for _, tt := range tests {
		if got := PatchPaths(tt.patch); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: PatchPaths = %#v, want %#v", tt.name, got, tt.want)
		}
	}
}

func TestNormalizeProposalPaths(t *testing.T) {
	repo := filepath.Join(string(filepath.Separator)+"tmp", "repo")
	tests := []struct {
		name string
		in   []string
		want []string
	}{
		{"unknown stays nil", nil, nil},
		{"known empty", []string{}, []string{}},
		{"dot slash and trailing slash", []string{"./a", "dir/"}, []string{"a", "dir"}},
		{"repository itself", []string{"", "."}, []string{"."}},
		{"absolute inside and outside", []string{filepath.Join(repo, "x"), filepath.Join(repo+"-old", "y")}, []string{"x"}},
	}
	for _, tt := range tests {
		if got := NormalizeProposalPaths(repo, tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: got %#v, want %#v", tt.name, got, tt.want)
		}
	}
	many := make([]string, MaxProposalPaths+10)
	for i := range many {
		many[i] = fmt.Sprintf("f%d", i)
	}
	if got := NormalizeProposalPaths(repo, many); len(got) != MaxProposalPaths {
		t.Fatalf("cap: %d", len(got))
	}
}

func TestOverlap(t *testing.T) {
	var many []string
	for i := range 30 {
		many = append(many, fmt.Sprintf("src/f%d.go", i))
	}
	findings := []Finding{
		{Agent: "codex", Files: []string{"src/a.go", "docs/x.md", "lib"}},
		{Agent: "aider", Files: []string{"other.go"}},
		{Agent: "roster", Files: []string{"."}},
		{Agent: "big", Files: many},
		{Agent: "nofiles"},
	}
	tests := []struct {
		name     string
		proposal []string
		want     [][]string
	}{
		{"unknown proposal paths", nil, [][]string{nil, nil, nil, nil, nil}},
		{"discard of one file", []string{"src/a.go"}, [][]string{{"src/a.go"}, {}, {"src/a.go"}, {}, {}}},
		{"directory proposal reports the agent's files inside", []string{"src"}, [][]string{{"src/a.go"}, {}, {"src"}, many[:MaxOverlapsPerAgent], {}}},
		{"file inside a directory the agent touches", []string{"lib/z.go", "lib/z.go"}, [][]string{{"lib/z.go"}, {}, {"lib/z.go"}, {}, {}}},
		{"whole repository", []string{"."}, [][]string{{"src/a.go", "docs/x.md", "lib"}, {"other.go"}, {"."}, many[:MaxOverlapsPerAgent], {}}},
		{"known but empty", []string{}, [][]string{{}, {}, {}, {}, {}}},
	}
	for _, tt := range tests {
		if got := Overlap(findings, tt.proposal); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s:\n got %#v\nwant %#v", tt.name, got, tt.want)
		}
	}
}
