package pathwithin

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// hand-made containment: a string prefix test against a directory plus a
// separator, the shape every one of the eight predicates this package
// replaced had (issue 24), also with the directory's trailing separator
// trimmed first. A literal ".." + separator (a relative path
// climbing out) is not containment and is allowed.
var handMade = regexp.MustCompile(`HasPrefix\([^,]+,\s*[^",]+\+\s*string\(filepath\.Separator\)\)|` +
	`TrimSuffix\([^)]*Separator\)\)\s*\+\s*string\(filepath\.Separator\)`)

// TestNoOtherContainmentPredicate keeps this package the one answer:
// no non-test Go file of the module tests containment by string prefix.
func TestNoOtherContainmentPredicate(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not found at %s: %v", root, err)
	}
	var hits []string
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			if rel == "tests" || rel == "testdata" || strings.HasPrefix(d.Name(), ".") && rel != "." {
				return fs.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(b), "\n") {
			if handMade.MatchString(line) {
				hits = append(hits, filepath.ToSlash(rel)+":"+itoa(i+1)+": "+strings.TrimSpace(line))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) > 0 {
		t.Errorf("path containment by string prefix; ask pathwithin.Within (or Rel) instead:\n%s", strings.Join(hits, "\n"))
	}
}

func itoa(n int) string {
	s := ""
	for {
		s = string(rune('0'+n%10)) + s
		if n /= 10; n == 0 {
			return s
		}
	}
}
