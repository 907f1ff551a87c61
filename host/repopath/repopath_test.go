package repopath

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fluxgit/fluxgit/host/catalog"
	"github.com/fluxgit/fluxgit/internal/credpaths"
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

func mark(kind string, ptr ...string) catalog.PathArg {
	return catalog.PathArg{Pointer: ptr, Kind: kind}
}

func TestCanonicalizeArguments(t *testing.T) {
	base, _ := filepath.EvalSymlinks(t.TempDir())
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(base, link); err != nil {
		t.Fatal(err)
	}
	// Names are deliberately unusual: only the marks say what is a path.
	args := map[string]any{
		"where":  link,
		"many":   []any{link},
		"nested": []any{map[string]any{"spot": link}, "not-an-object"},
		"byName": map[string]any{"a": link, "b": link},
		"rel":    "../x",
		// Named like a path, but unmarked: left exactly as sent.
		"repoPath": link,
	}
	marks := []catalog.PathArg{
		mark(catalog.PathRepository, ".where"),
		mark(catalog.PathRepository, ".many", "[]"),
		mark(catalog.PathDirectory, ".nested", "[]", ".spot"),
		mark(catalog.PathDirectory, ".byName", "*"),
		mark(catalog.PathRelative, ".rel"),
		mark(catalog.PathRepository, ".absent"),
	}
	top, err := Policy{}.CanonicalizeArguments(args, marks)
	if err != nil || top != base {
		t.Fatalf("top %q err %v", top, err)
	}
	if args["many"].([]any)[0] != base || args["nested"].([]any)[0].(map[string]any)["spot"] != base ||
		args["byName"].(map[string]any)["b"] != base || args["nested"].([]any)[1] != "not-an-object" {
		t.Fatalf("marked paths not canonicalized: %v", args)
	}
	if args["rel"] != "../x" || args["repoPath"] != link {
		t.Fatalf("unmarked or relative argument rewritten: %v", args)
	}
	// A malformed allow-list refuses every call, even one with no path.
	if _, err := Parse("relative").CanonicalizeArguments(map[string]any{}, nil); code(err) != CodeBadRoots {
		t.Fatalf("bad roots: %v", err)
	}
	_, err = Policy{}.CanonicalizeArguments(map[string]any{"many": []any{"rel"}}, marks)
	if code(err) != CodeInvalidParams || !strings.Contains(err.(*Error).Data["details"].(string), "arguments.many[0]") {
		t.Fatalf("nested error does not name its path: %v", err)
	}
}

// TestConfineByMark: with roots set, every marked kind is confined, nested
// ones included, and no refusal carries the refused path.
func TestConfineByMark(t *testing.T) {
	base, _ := filepath.EvalSymlinks(t.TempDir())
	root := filepath.Join(base, "root")
	outside := filepath.Join(base, "secret-outside")
	file := filepath.Join(root, "f.txt")
	for _, d := range []string{root, outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "escape")); err != nil {
		t.Fatal(err)
	}
	p := Parse(root)
	for _, tc := range []struct {
		name   string
		marks  []catalog.PathArg
		args   map[string]any
		wantCd int64
		detail string
	}{
		{"directory inside", []catalog.PathArg{mark(catalog.PathDirectory, ".d")}, map[string]any{"d": root}, 0, ""},
		{"directory outside", []catalog.PathArg{mark(catalog.PathDirectory, ".d")}, map[string]any{"d": outside}, CodeOutsideRoots, "arguments.d"},
		{"missing outside", []catalog.PathArg{mark(catalog.PathDirectory, ".d")}, map[string]any{"d": outside + "/nope"}, CodeOutsideRoots, "arguments.d"},
		{"missing inside", []catalog.PathArg{mark(catalog.PathDirectory, ".d")}, map[string]any{"d": root + "/nope"}, CodeInvalidParams, "arguments.d does not exist"},
		{"missing below a symlink out", []catalog.PathArg{mark(catalog.PathDirectory, ".d")}, map[string]any{"d": root + "/escape/nope"}, CodeOutsideRoots, "arguments.d"},
		{"directory is a file", []catalog.PathArg{mark(catalog.PathDirectory, ".d")}, map[string]any{"d": file}, CodeInvalidParams, "must name a directory"},
		{"file is a directory", []catalog.PathArg{mark(catalog.PathFile, ".f")}, map[string]any{"f": root}, CodeInvalidParams, "must name a regular file"},
		{"file inside", []catalog.PathArg{mark(catalog.PathFile, ".f")}, map[string]any{"f": file}, 0, ""},
		{"nested outside", []catalog.PathArg{mark(catalog.PathFile, ".t", "[]", ".f")},
			map[string]any{"t": []any{map[string]any{"f": file}, map[string]any{"f": outside}}}, CodeOutsideRoots, "arguments.t[1].f"},
		{"tuple item outside", []catalog.PathArg{mark(catalog.PathRepository, ".t", "[1]")},
			map[string]any{"t": []any{"label", outside}}, CodeOutsideRoots, "arguments.t[1]"},
		{"relative is not confined by the host", []catalog.PathArg{mark(catalog.PathRelative, ".p")}, map[string]any{"p": outside}, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := p.CanonicalizeArguments(tc.args, tc.marks)
			if code(err) != tc.wantCd {
				t.Fatalf("code %d (%v), want %d", code(err), err, tc.wantCd)
			}
			if err == nil {
				return
			}
			e := err.(*Error)
			text := e.Message + " " + jsonString(t, e.Data)
			if strings.Contains(text, base) {
				t.Errorf("refusal discloses a path: %s", text)
			}
			if arg, _ := e.Data["argument"].(string); !strings.Contains(arg+" "+text, tc.detail) {
				t.Errorf("refusal does not say %q: %s", tc.detail, text)
			}
		})
	}
}

func TestRunDirArgument(t *testing.T) {
	base, _ := filepath.EvalSymlinks(t.TempDir())
	root := filepath.Join(base, "root")
	run := filepath.Join(base, "run")
	outside := filepath.Join(base, "outside")
	inRoot := filepath.Join(root, "state")
	for _, d := range []string{inRoot, run, outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	runLink := filepath.Join(root, "run-link")
	if err := os.Symlink(run, runLink); err != nil {
		t.Fatal(err)
	}
	escape := filepath.Join(root, "escape")
	if err := os.Symlink(outside, escape); err != nil {
		t.Fatal(err)
	}
	confined := Parse(root).WithRunDir(run)
	open := Policy{}.WithRunDir(run)
	for _, tc := range []struct {
		name   string
		p      Policy
		in     any
		want   string
		wantCd int64
	}{
		{"configured run dir, confined", confined, run, run, 0},
		{"configured run dir, unconfined", open, run + "/", run, 0},
		{"configured run dir through a symlink", confined, runLink, run, 0},
		{"directory inside the roots", confined, inRoot, inRoot, 0},
		{"outside the roots", confined, outside, "", CodeOutsideRoots},
		{"symlink out of the roots", confined, escape, "", CodeOutsideRoots},
		{"missing outside", confined, outside + "/nope", "", CodeOutsideRoots},
		{"missing inside", confined, root + "/nope", "", CodeInvalidParams},
		{"missing below a symlink out", confined, escape + "/nope", "", CodeOutsideRoots},
		{"unconfined: anything but the run dir", open, outside, "", CodeOutsideRoots},
		{"no run dir configured", Parse(root), run, "", CodeOutsideRoots},
		{"relative", confined, "run", "", CodeInvalidParams},
		{"not a string", confined, 7, "", CodeInvalidParams},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := map[string]any{"state": tc.in}
			_, err := tc.p.CanonicalizeArguments(args, []catalog.PathArg{mark(catalog.PathRunDir, ".state")})
			if code(err) != tc.wantCd {
				t.Fatalf("code %d (%v), want %d", code(err), err, tc.wantCd)
			}
			if err != nil {
				e := err.(*Error)
				if text := e.Message + jsonString(t, e.Data); strings.Contains(text, base) {
					t.Errorf("refusal discloses a path: %s", text)
				}
				if e.Code == CodeOutsideRoots && !strings.Contains(e.Message, "FLUXGIT_RUN_DIR") {
					t.Errorf("refusal does not say what is accepted: %s", e.Message)
				}
				return
			}
			if args["state"] != tc.want {
				t.Fatalf("forwarded %q, want %q", args["state"], tc.want)
			}
		})
	}
}

func jsonString(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A destination (a worktree to create) may not exist yet; only the part
// that exists is resolved, and it must resolve inside the roots.
func TestDestinationArgument(t *testing.T) {
	base, _ := filepath.EvalSymlinks(t.TempDir())
	root := filepath.Join(base, "root")
	outside := filepath.Join(base, "outside")
	existing := filepath.Join(root, "trees")
	file := filepath.Join(root, "f.txt")
	for _, d := range []string{existing, outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(root, "link")
	if err := os.Symlink(existing, link); err != nil {
		t.Fatal(err)
	}
	escape := filepath.Join(root, "escape")
	if err := os.Symlink(outside, escape); err != nil {
		t.Fatal(err)
	}
	dangling := filepath.Join(root, "dangling")
	if err := os.Symlink(filepath.Join(outside, "gone"), dangling); err != nil {
		t.Fatal(err)
	}
	confined, open := Parse(root), Policy{}
	for _, tc := range []struct {
		name   string
		p      Policy
		in     any
		want   any
		wantCd int64
	}{
		{"missing inside", confined, existing + "/new/wt", existing + "/new/wt", 0},
		{"missing below a symlink inside", confined, link + "/wt", existing + "/wt", 0},
		{"existing directory", confined, existing + "/", existing, 0},
		{"missing, unclean", confined, root + "/a/../trees/./wt", existing + "/wt", 0},
		{"blank is left to the provider", confined, "  ", "  ", 0},
		{"empty is left to the provider", confined, "", "", 0},
		{"missing outside", confined, outside + "/wt", nil, CodeOutsideRoots},
		{"missing below a symlink out", confined, escape + "/wt", nil, CodeOutsideRoots},
		{"existing outside", confined, outside, nil, CodeOutsideRoots},
		{"dangling symlink", confined, dangling, nil, CodeInvalidParams},
		{"dangling symlink, unconfined", open, dangling + "/wt", nil, CodeInvalidParams},
		{"below a file", confined, file + "/wt", nil, CodeInvalidParams},
		{"relative", confined, "trees/wt", nil, CodeInvalidParams},
		{"not a string", confined, 7, nil, CodeInvalidParams},
		{"unconfined, missing", open, outside + "/x/wt", outside + "/x/wt", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := map[string]any{"path": tc.in}
			_, err := tc.p.CanonicalizeArguments(args, []catalog.PathArg{mark(catalog.PathDestination, ".path")})
			if code(err) != tc.wantCd {
				t.Fatalf("code %d (%v), want %d", code(err), err, tc.wantCd)
			}
			if err != nil {
				e := err.(*Error)
				if text := e.Message + " " + jsonString(t, e.Data); strings.Contains(text, base) || !strings.Contains(text, "arguments.path") {
					t.Errorf("refusal must name the argument and never the path: %s", text)
				}
				return
			}
			if args["path"] != tc.want {
				t.Fatalf("forwarded %q, want %q", args["path"], tc.want)
			}
		})
	}
}

// Every kind of absolute path argument that names or resolves into a
// protected location is refused before dispatch, confined or not, with a
// message naming what the file holds and never where it is.
func TestProtectedPathArguments(t *testing.T) {
	base, _ := filepath.EvalSymlinks(t.TempDir())
	gw := filepath.Join(base, "run", "gateway")
	policy := filepath.Join(base, "policy.json")
	if err := os.MkdirAll(gw, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{filepath.Join(gw, "session.json"), policy} {
		if err := os.WriteFile(f, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(gw, filepath.Join(base, "link")); err != nil {
		t.Fatal(err)
	}
	list := []credpaths.Path{{Label: "gateway session and journal", Path: gw, Dir: true}, {Label: "agent policy", Path: policy}}
	for _, pol := range []struct {
		name string
		p    Policy
	}{{"unconfined", Policy{}}, {"confined", Parse(base)}} {
		p := pol.p.WithRunDir(filepath.Join(base, "run")).WithProtected(list)
		for _, tc := range []struct {
			name  string
			kind  string
			value string
			label string
		}{
			{"repository in the gateway dir", catalog.PathRepository, gw, "gateway session and journal"},
			{"file through a symlink", catalog.PathFile, filepath.Join(base, "link", "session.json"), "gateway session and journal"},
			{"policy file", catalog.PathFile, policy, "agent policy"},
			{"missing file below", catalog.PathFile, filepath.Join(gw, "nope"), "gateway session and journal"},
			{"destination inside", catalog.PathDestination, filepath.Join(gw, "new", "x"), "gateway session and journal"},
			{"run dir argument", catalog.PathRunDir, gw, "gateway session and journal"},
			{"control: the run dir itself", catalog.PathRunDir, filepath.Join(base, "run"), ""},
			{"control: a sibling", catalog.PathDirectory, base, ""},
		} {
			t.Run(pol.name+"/"+tc.name, func(t *testing.T) {
				_, err := p.CanonicalizeArguments(map[string]any{"x": tc.value}, []catalog.PathArg{mark(tc.kind, ".x")})
				if tc.label == "" {
					if err != nil {
						t.Fatalf("control refused: %v", err)
					}
					return
				}
				if code(err) != CodeInvalidParams {
					t.Fatalf("code %d (%v), want %d", code(err), err, CodeInvalidParams)
				}
				text := jsonString(t, err.(*Error).Data)
				if !strings.Contains(text, "protected file of the person's ("+tc.label+")") || strings.Contains(text, base) {
					t.Fatalf("refusal %s: want the label %q and no path", text, tc.label)
				}
			})
		}
	}
}
