package envflag

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestTruthy(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"1", true}, {"true", true}, {"yes", true}, {"TRUE", true}, {"on", true}, {"anything", true},
		{"", false}, {"  ", false}, {"0", false}, {"false", false}, {"No", false}, {" off ", false},
	}
	for _, tt := range tests {
		if got := Truthy(tt.in); got != tt.want {
			t.Errorf("Truthy(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestParseBool(t *testing.T) {
	tests := []struct {
		in      string
		want    bool
		wantErr bool
	}{
		{"1", true, false}, {"true", true, false}, {"YES", true, false}, {" On ", true, false}, {"True", true, false},
		{"0", false, false}, {"false", false, false}, {"no", false, false}, {"OFF", false, false},
		{"", false, true}, {"yes please", false, true}, {"2", false, true}, {"t", false, true},
	}
	for _, tt := range tests {
		got, err := ParseBool(tt.in)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("ParseBool(%q) = %v, %v; want %v, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
		if err != nil && !strings.Contains(err.Error(), Spellings) {
			t.Errorf("ParseBool(%q) error %q does not name the spellings", tt.in, err)
		}
	}
}

func TestSet(t *testing.T) {
	const name = "FLUXGIT_TEST_ENVFLAG"
	t.Setenv(name, "1")
	if !Set(name) {
		t.Fatalf("Set(%s=1) = false", name)
	}
	t.Setenv(name, "0")
	if Set(name) {
		t.Fatalf("Set(%s=0) = true", name)
	}
}

func TestUnknown(t *testing.T) {
	tests := []struct {
		name    string
		environ []string
		want    []Unrecognised
	}{
		{"known names pass", []string{"FLUXGIT_MCP_ALLOWED_ROOTS=/src", "SHIFT_WORKSPACE=w", "MCP_AUTH_MODE=jwt", "PATH=/bin"}, nil},
		{"missing word", []string{"FLUXGIT_ALLOWED_ROOTS=/src"}, []Unrecognised{{"FLUXGIT_ALLOWED_ROOTS", "FLUXGIT_MCP_ALLOWED_ROOTS"}}},
		{"typo", []string{"FLUXGIT_READONLY=1"}, []Unrecognised{{"FLUXGIT_READONLY", "FLUXGIT_READ_ONLY"}}},
		{"roster typo", []string{"SHIFT_WORKSPCE=w"}, []Unrecognised{{"SHIFT_WORKSPCE", "SHIFT_WORKSPACE"}}},
		{"nothing near", []string{"FLUXGIT_ZZZZZZZZZZZZZZZZZZ=1"}, []Unrecognised{{"FLUXGIT_ZZZZZZZZZZZZZZZZZZ", ""}}},
		{"own MCP near miss", []string{"MCP_AUTH_MOD=jwt"}, []Unrecognised{{"MCP_AUTH_MOD", "MCP_AUTH_MODE"}}},
		{"a host's MCP variable", []string{"MCP_SERVER_NAME=x", "MCP_TIMEOUT=5"}, nil},
		{"sorted, once", []string{"SHIFT_X=1", "FLUXGIT_X=1", "FLUXGIT_X=2"}, []Unrecognised{{"FLUXGIT_X", ""}, {"SHIFT_X", ""}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Unknown(tt.environ)
			if !slices.Equal(got, tt.want) {
				t.Fatalf("Unknown(%q) = %+v, want %+v", tt.environ, got, tt.want)
			}
			for _, u := range got {
				if !strings.Contains(u.String(), u.Name) || (u.Nearest != "" && !strings.Contains(u.String(), "did you mean "+u.Nearest+"?")) {
					t.Errorf("warning %q does not name the variable and the suggestion", u)
				}
			}
		})
	}
}

// notVariables are names in the source that fluxgit does not read on
// purpose: this package's own test variable, the misspellings tests set to
// check the warning, and a host's MCP_* variable they check is left alone.
var notVariables = []string{"FLUXGIT_TEST_ENVFLAG", "FLUXGIT_ALLOWED_ROOTS", "FLUXGIT_READONLY", "SHIFT_WORKSPCE", "MCP_AUTH_MOD", "MCP_SERVER_NAME"}

// Every FLUXGIT_*, SHIFT_* and MCP_* name the repository's code, tests and
// CI scripts spell out is in Known: a variable added without it would be
// reported as unknown at every start.
func TestKnownCoversSource(t *testing.T) {
	root := filepath.Join("..", "..")
	literal := regexp.MustCompile(`"((?:FLUXGIT|SHIFT|MCP)_[A-Z0-9_]*[A-Z0-9])"`)
	word := regexp.MustCompile(`\b((?:FLUXGIT|SHIFT)_[A-Z0-9_]*[A-Z0-9])\b`)
	var missing []string
	seen := map[string]bool{}
	scan := func(path string, re *regexp.Regexp) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range re.FindAllStringSubmatch(string(b), -1) {
			n := m[1]
			if !slices.Contains(Known, n) && !slices.Contains(notVariables, n) && !seen[n] {
				seen[n] = true
				missing = append(missing, n+" ("+path+")")
			}
		}
	}
	files := 0
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "node_modules", "testdata", "cache":
				return filepath.SkipDir
			}
			return nil
		}
		// This file spells unknown names on purpose.
		if strings.HasSuffix(path, ".go") && d.Name() != "envflag_test.go" {
			files++
			scan(path, literal)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("scanned only %d Go files under %s: is the repository layout different?", files, root)
	}
	for _, p := range []string{".ci/run", "Dockerfile"} {
		if _, err := os.Stat(filepath.Join(root, p)); err == nil {
			scan(filepath.Join(root, p), word)
		}
	}
	if scripts, _ := filepath.Glob(filepath.Join(root, "scripts", "*")); len(scripts) > 0 {
		for _, p := range scripts {
			scan(p, word)
		}
	}
	if len(missing) > 0 {
		t.Fatalf("names read by the code but missing from envflag.Known (add them there):\n%s", strings.Join(missing, "\n"))
	}
}
