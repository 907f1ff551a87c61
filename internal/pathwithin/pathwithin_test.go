package pathwithin

import (
	"runtime"
	"testing"
)

// row is one question. When caseOnly is set the paths differ only in case
// below the volume, so Within and Rel answer CaseInsensitive while the
// AnyCase forms answer in; otherwise all four answer in. rel is Rel's
// answer when in.
type row struct {
	root, p  string
	in       bool
	caseOnly bool
	rel      string
	why      string // which of the predicates this package replaced answered otherwise
}

// unixRows are the cases on which the eight predicates fluxgit had before
// this package disagreed (issue 24), with the answer that is now the only
// one. Old names: repopath.Within, credpaths.within/inside,
// policy.Under, execute.inside, gitread.isWithin/fxInside/relInside,
// gitexec.isInside, agentdetect.within/storeWithin, shiftroster's
// WorkspaceNames prefix.
var unixRows = []row{
	{root: "/a/b", p: "/a/b", in: true, rel: ".", why: "credpaths.within and reach.inside: only strictly below"},
	{root: "/a/b", p: "/a/b/c", in: true, rel: "c"},
	{root: "/a/b", p: "/a/b/c/d", in: true, rel: "c/d"},
	{root: "/a/b", p: "/a/bc", why: "a string prefix says yes; none of the eight did, fxInside came closest (dir without a trailing separator)"},
	{root: "/a/b", p: "/a/bc/d"},
	{root: "/a/b", p: "/a"},
	{root: "/a/b", p: "/x/b"},
	{root: "/a/b/", p: "/a/b/c", in: true, rel: "c", why: "repopath.Within, credpaths.within, agentdetect.within, shiftroster: no (they looked for /a/b//)"},
	{root: "/a/b/", p: "/a/b", in: true, rel: ".", why: "repopath.Within, agentdetect.within: no"},
	{root: "/a/b", p: "/a/b/", in: true, rel: "."},
	{root: "/a//b", p: "/a/b/c", in: true, rel: "c", why: "every predicate but gitread.isWithin: no"},
	{root: "/a/b", p: "/a//b///c", in: true, rel: "c", why: "every predicate but gitread.isWithin: yes, with a different relative path"},
	{root: "/a/./b", p: "/a/b/c", in: true, rel: "c", why: "every predicate but gitread.isWithin: no"},
	{root: "/a/b", p: "/a/b/./c", in: true, rel: "c"},
	{root: "/a/b", p: "/a/b/../c", why: "a lexical escape: every predicate but gitread.isWithin said yes"},
	{root: "/a/b", p: "/a/b/..", why: "every predicate but gitread.isWithin: yes"},
	{root: "/a/b", p: "/a/b/c/../d", why: "gitread.isWithin cleaned it to /a/b/d: yes; wrong when c is a symbolic link"},
	{root: "/a/b/..", p: "/a/c", why: "gitread.isWithin cleaned the root to /a: yes"},
	{root: "/a/b", p: "/a/b/..x", in: true, rel: "..x"},
	{root: "/a/b", p: "/a/b/...", in: true, rel: "..."},
	{root: "/", p: "/a", in: true, rel: "a", why: "gitexec.isInside exempts / (it keeps doing so at its call site); policy.Under and execute.inside: yes"},
	{root: "/", p: "/", in: true, rel: "."},
	{root: "//", p: "/a", in: true, rel: "a", why: "repopath.Within, credpaths.within: no"},
	{root: "", p: "/a", why: "policy.Under, fxInside: yes (the empty prefix plus a separator is /)"},
	{root: "/a", p: ""},
	{root: "", p: "", why: "repopath.Within, agentdetect.within, policy.Under, execute.inside: yes (equal)"},
	{root: "a", p: "a/b", why: "relative paths: every predicate but gitexec.isInside said yes"},
	{root: "/a", p: "a/b"},
	{root: "a", p: "/a/b"},
	{root: ".", p: "/a"},
	{root: "/a/b", p: "/a/B", caseOnly: true, in: true, rel: ".", why: "credpaths.reach folded on Windows and macOS, credpaths.Opened and gitread.relInside everywhere, agentdetect.storeWithin on Windows only, the rest never"},
	{root: "/A/b", p: "/a/b/c", caseOnly: true, in: true, rel: "c"},
	{root: "/a/b", p: "/a/B/c", caseOnly: true, in: true, rel: "c"},
	{root: "/a/b", p: "/a/b/C", in: true, rel: "C"},
	{root: "/a/b", p: "/A/bc", caseOnly: true},
	{root: "/a", p: `/a/b\c`, in: true, rel: `b\c`, why: `\ is an ordinary character outside Windows`},
	{root: "/a", p: `/a\b`},
	{root: `/a\b`, p: "/a/b"},
	{root: "/a", p: "/a/b\x00c", why: "a NUL byte names no file"},
}

// windowsRows: both separators, volumes, UNC shares.
var windowsRows = []row{
	{root: `C:\a`, p: `C:\a\b`, in: true, rel: "b"},
	{root: `C:\a`, p: `C:/a/b`, in: true, rel: "b", why: "every predicate: no (they compared with \\ only)"},
	{root: `C:/a/`, p: `C:\a\b\c`, in: true, rel: "b/c"},
	{root: `C:\a`, p: `C:\ab`},
	{root: `C:\a`, p: `D:\a\b`},
	{root: `c:\a`, p: `C:\a\b`, in: true, rel: "b", why: "a volume name never depends on case"},
	{root: `C:\A`, p: `C:\a\b`, caseOnly: true, in: true, rel: "b"},
	{root: `C:\`, p: `C:\x`, in: true, rel: "x"},
	{root: `C:\`, p: `D:\x`},
	{root: `C:`, p: `C:\x`, why: "C: alone is relative to the drive's current directory"},
	{root: `C:\a`, p: `C:a\b`},
	{root: `\a`, p: `\a\b`, why: "no volume: not absolute on Windows"},
	{root: `\\srv\share\a`, p: `\\srv\share\a\b`, in: true, rel: "b"},
	{root: `\\srv\share`, p: `\\srv\share2\x`},
	{root: `\\srv\share`, p: `\\srv\share\x`, in: true, rel: "x"},
	{root: `\\SRV\Share\a`, p: `//srv/share/a/b`, in: true, rel: "b"},
	{root: `\\srv\share\a`, p: `\\other\share\a\b`},
	{root: `\\?\C:\a`, p: `C:\a\b`, why: "two spellings of a volume are different volumes here"},
	{root: `C:\a`, p: `C:\a\..\b`},
	{root: `C:\a`, p: `C:\a/../b`},
}

func rows() []row {
	if runtime.GOOS == "windows" {
		return windowsRows
	}
	return unixRows
}

func TestWithin(t *testing.T) {
	for _, r := range rows() {
		want, wantAny := r.in, r.in
		if r.caseOnly && !CaseInsensitive {
			want = false
		}
		if got := Within(r.root, r.p); got != want {
			t.Errorf("Within(%q, %q) = %v, want %v (%s)", r.root, r.p, got, want, r.why)
		}
		if got := WithinAnyCase(r.root, r.p); got != wantAny {
			t.Errorf("WithinAnyCase(%q, %q) = %v, want %v (%s)", r.root, r.p, got, wantAny, r.why)
		}
		rel, ok := Rel(r.root, r.p)
		if ok != want || want && rel != r.rel {
			t.Errorf("Rel(%q, %q) = %q, %v, want %q, %v", r.root, r.p, rel, ok, r.rel, want)
		}
		rel, ok = RelAnyCase(r.root, r.p)
		if ok != wantAny || wantAny && rel != r.rel {
			t.Errorf("RelAnyCase(%q, %q) = %q, %v, want %q, %v", r.root, r.p, rel, ok, r.rel, wantAny)
		}
	}
}

// TestCaseRule pins git's core.ignorecase default per operating system.
func TestCaseRule(t *testing.T) {
	want := runtime.GOOS == "windows" || runtime.GOOS == "darwin" || runtime.GOOS == "ios"
	if CaseInsensitive != want {
		t.Fatalf("CaseInsensitive = %v on %s, want %v", CaseInsensitive, runtime.GOOS, want)
	}
}
