package repopath

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func code(err error) int64 {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return 0
}

func TestParse(t *testing.T) {
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	for _, tc := range []struct {
		name, list string
		bad        bool
	}{
		{"one root", dir, false},
		{"two roots", dir + string(os.PathListSeparator) + "/", false},
		{"empty", "", true},
		{"blank", "  ", true},
		{"relative", "src/repos", true},
		{"missing", filepath.Join(dir, "nope"), true},
		{"only separators", string(os.PathListSeparator), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Parse(tc.list).Check()
			if (err != nil) != tc.bad {
				t.Fatalf("Parse(%q).Check() = %v, want bad=%v", tc.list, err, tc.bad)
			}
			if tc.bad && code(err) != CodeBadRoots {
				t.Fatalf("bad list gave code %d", code(err))
			}
		})
	}
}

func TestCanonical(t *testing.T) {
	base, _ := filepath.EvalSymlinks(t.TempDir())
	root := filepath.Join(base, "root")
	inside := filepath.Join(root, "repo")
	outside := filepath.Join(base, "elsewhere")
	for _, d := range []string{inside, outside, root + "x"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// A symlink inside the root that leads out of it, and one outside that
	// leads in.
	escape := filepath.Join(root, "escape")
	if err := os.Symlink(outside, escape); err != nil {
		t.Fatal(err)
	}
	into := filepath.Join(base, "into")
	if err := os.Symlink(inside, into); err != nil {
		t.Fatal(err)
	}
	confined := Parse(root)
	open := Policy{}
	for _, tc := range []struct {
		name   string
		p      Policy
		in     any
		want   string
		wantCd int64
	}{
		{"inside", confined, inside, inside, 0},
		{"root itself", confined, root, root, 0},
		{"dotdot resolved then checked", confined, inside + "/../../elsewhere", "", CodeOutsideRoots},
		{"symlink out of root", confined, escape, "", CodeOutsideRoots},
		{"symlink into root", confined, into, inside, 0},
		{"prefix is not containment", confined, root + "x", "", CodeOutsideRoots},
		{"unresolvable when confined", confined, filepath.Join(root, "missing"), "", CodeInvalidParams},
		{"outside", confined, outside, "", CodeOutsideRoots},
		{"relative", confined, "repo", "", CodeInvalidParams},
		{"not a string", confined, 42, "", CodeInvalidParams},
		{"unresolvable unconfined keeps path", open, "/no/such/dir/x", "/no/such/dir/x", 0},
		{"unconfined resolves symlinks", open, into, inside, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.p.Canonical("arguments.repoPath", tc.in)
			if code(err) != tc.wantCd {
				t.Fatalf("code %d (%v), want %d", code(err), err, tc.wantCd)
			}
			if got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
	// Refusals never disclose the refused path, only a fingerprint.
	_, err := confined.Canonical("arguments.repoPath", outside)
	var e *Error
	if !errors.As(err, &e) || strings.Contains(e.Error(), outside) || e.Data["repoPathFingerprint"] != Fingerprint(outside) {
		t.Fatalf("outside error: %+v", e)
	}
}

func TestCanonicalizeArguments(t *testing.T) {
	base, _ := filepath.EvalSymlinks(t.TempDir())
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(base, link); err != nil {
		t.Fatal(err)
	}
	args := map[string]any{
		"repoPath":     link,
		"repoPaths":    []any{link},
		"repositories": []any{map[string]any{"repoPath": link}},
		"targets":      []any{map[string]any{"repoPath": link}, "not-an-object"},
	}
	top, err := Policy{}.CanonicalizeArguments(args)
	if err != nil || top != base {
		t.Fatalf("top %q err %v", top, err)
	}
	if args["repoPaths"].([]any)[0] != base || args["repositories"].([]any)[0].(map[string]any)["repoPath"] != base ||
		args["targets"].([]any)[0].(map[string]any)["repoPath"] != base {
		t.Fatalf("nested paths not canonicalized: %v", args)
	}
	// A malformed allow-list refuses every call, even one with no path.
	if _, err := Parse("relative").CanonicalizeArguments(map[string]any{}); code(err) != CodeBadRoots {
		t.Fatalf("bad roots: %v", err)
	}
	_, err = Policy{}.CanonicalizeArguments(map[string]any{"repoPaths": []any{"rel"}})
	if code(err) != CodeInvalidParams || !strings.Contains(err.(*Error).Data["details"].(string), "arguments.repoPaths[0]") {
		t.Fatalf("nested error does not name its path: %v", err)
	}
}
