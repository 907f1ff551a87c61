// Package pathwithin is fluxgit's one answer to "is this path inside that
// directory": the allowed roots of the MCP host, the protected credential
// locations, the gateway's agent-policy path prefixes, the submodule and
// repository checks of the executor and of git-read, the git-executable
// search, agent detection and the shift roster all ask it.
//
// The rule, for Within(root, p):
//
//   - Both paths must be absolute (on Windows: with a volume, C:\ or a UNC
//     \\server\share); an empty or relative path is inside nothing and
//     contains nothing.
//   - Containment is component-wise, never a string prefix: /a/bc is not
//     inside /a/b. A path equal to root is inside it; the file-system root
//     (/, C:\) contains every path on its volume.
//   - The comparison is lexical. Repeated and trailing separators and "."
//     components are cleaned away (filepath.Clean); a ".." component in
//     either path makes the answer false, because lexically removing it
//     (/root/link/../x -> /root/x) is wrong whenever the component before it
//     is a symbolic link. Symbolic links are not resolved here: a caller that
//     asks about real locations resolves both paths first
//     (filepath.EvalSymlinks), at its call site, as it did before.
//   - Separators are the operating system's: / on Unix; on Windows both /
//     and \ (filepath.Clean turns one into the other). Volume names are
//     compared without regard to case on Windows; \\?\C:\x and C:\x are
//     different spellings and are not inside each other.
//   - Case: components are compared the way git's core.ignorecase default
//     treats the platform's file system: case-insensitively on Windows
//     (NTFS) and macOS (APFS and HFS+ are case-insensitive by default; git
//     init and clone set core.ignorecase=true there), exactly on every other
//     system. The rule sits in pathwithin_windows.go, pathwithin_darwin.go
//     and pathwithin_other.go. Folding is Unicode simple case folding
//     (strings.EqualFold); APFS's normalization-insensitivity (é spelled
//     precomposed or decomposed) is not modelled, and neither is a
//     case-sensitive volume on macOS.
//
// WithinAnyCase folds case on every system. It is for deny lists (the
// protected credential locations), where treating two spellings as one
// costs at most a refusal, and missing a case-insensitive mount (vfat, a
// Samba share, ext4 casefold) on Linux would leak a secret.
package pathwithin

import (
	"path/filepath"
	"strings"
)

// CaseInsensitive reports whether Within compares path components without
// regard to case on this operating system (see the package comment).
const CaseInsensitive = caseInsensitive

// Within reports whether p is root or lies below it, by the package's
// rule: absolute paths only, component-wise, lexical, no "..", case folded
// only where the platform's file system is case-insensitive by default.
func Within(root, p string) bool {
	_, ok := rel(root, p, caseInsensitive)
	return ok
}

// WithinAnyCase is Within with case folded on every operating system; use
// it where a false "inside" is the safe answer (deny lists).
func WithinAnyCase(root, p string) bool {
	_, ok := rel(root, p, true)
	return ok
}

// Rel returns p relative to root, '/'-separated, when Within(root, p): "."
// when they are the same path, otherwise the components below root as p
// spells them.
func Rel(root, p string) (string, bool) {
	return rel(root, p, caseInsensitive)
}

// RelAnyCase is Rel with case folded on every operating system, the
// relative form of WithinAnyCase.
func RelAnyCase(root, p string) (string, bool) {
	return rel(root, p, true)
}

func rel(root, p string, fold bool) (string, bool) {
	rv, rc, ok := split(root)
	if !ok {
		return "", false
	}
	pv, pc, ok := split(p)
	if !ok || !sameVolume(rv, pv) || len(pc) < len(rc) {
		return "", false
	}
	for i, c := range rc {
		if c != pc[i] && (!fold || !strings.EqualFold(c, pc[i])) {
			return "", false
		}
	}
	if len(pc) == len(rc) {
		return ".", true
	}
	return strings.Join(pc[len(rc):], "/"), true
}

// split returns the volume name and the components of the absolute path
// p, or false when p is empty, relative or holds a ".." component.
func split(p string) (vol string, comps []string, ok bool) {
	if p == "" || !filepath.IsAbs(p) || strings.IndexByte(p, 0) >= 0 {
		return "", nil, false
	}
	for _, c := range strings.FieldsFunc(p, isSep) {
		if c == ".." {
			return "", nil, false
		}
	}
	p = filepath.Clean(p)
	vol = filepath.VolumeName(p)
	return vol, strings.FieldsFunc(p[len(vol):], isSep), true
}

// isSep is os.IsPathSeparator as a rune predicate: / everywhere, and \ on
// Windows.
func isSep(r rune) bool { return r == '/' || filepath.Separator == '\\' && r == '\\' }

// sameVolume compares volume names ("" on Unix; C:, \\server\share on
// Windows, where they never depend on case).
func sameVolume(a, b string) bool {
	if a == b {
		return true
	}
	if filepath.Separator != '\\' {
		return false
	}
	return strings.EqualFold(strings.ReplaceAll(a, "/", `\`), strings.ReplaceAll(b, "/", `\`))
}
