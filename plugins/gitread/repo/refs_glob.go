package repo

import (
	"errors"
	"unicode/utf8"
)

// glob is a compiled repo.refs pattern, matched against short ref names
// ("main", "origin/main", "v1.2.0") the way `git branch --list` and
// `git tag --list` match theirs: '*' matches any run of characters,
// slashes included; '?' one character; [abc], [a-z] and [!a-z] (or [^a-z])
// one character of a class; a backslash makes the next character literal.
// Matching happens here, never in git, so the pattern is not a command-line
// value at all.
type glob struct{ pat []rune }

// maxPatternRunes bounds the pattern; ref names are short.
const maxPatternRunes = 1024

func compileGlob(p string) (*glob, error) {
	switch {
	case p == "":
		return nil, errors.New("must not be empty; omit it to list every ref")
	case !utf8.ValidString(p) || utf8.RuneCountInString(p) > maxPatternRunes:
		return nil, errors.New("must be valid UTF-8 of at most 1024 characters")
	}
	g := &glob{pat: []rune(p)}
	for i := 0; i < len(g.pat); i++ {
		switch g.pat[i] {
		case '\\':
			if i+1 == len(g.pat) {
				return nil, errors.New("ends with a lone backslash; write \\\\ for a literal backslash")
			}
			i++
		case '[':
			end, ok := g.classEnd(i)
			if !ok {
				return nil, errors.New("has a '[' without its closing ']'; write \\[ for a literal bracket")
			}
			i = end
		}
	}
	return g, nil
}

// classEnd returns the index of the ']' closing the class opened at i. A
// ']' right after '[' or '[!' is a member, as in fnmatch.
func (g *glob) classEnd(i int) (int, bool) {
	j := i + 1
	if j < len(g.pat) && (g.pat[j] == '!' || g.pat[j] == '^') {
		j++
	}
	if j < len(g.pat) && g.pat[j] == ']' {
		j++
	}
	for ; j < len(g.pat); j++ {
		switch g.pat[j] {
		case '\\':
			j++
		case ']':
			return j, true
		}
	}
	return 0, false
}

// match reports whether the whole name matches. Backtracking is only to
// the last '*', which keeps the cost linear in practice.
func (g *glob) match(name string) bool {
	s := []rune(name)
	pi, si := 0, 0
	star, mark := -1, 0
	for si < len(s) {
		if pi < len(g.pat) {
			switch c := g.pat[pi]; c {
			case '*':
				star, mark = pi, si
				pi++
				continue
			case '?':
				pi++
				si++
				continue
			case '[':
				end, _ := g.classEnd(pi)
				if g.inClass(pi, end, s[si]) {
					pi, si = end+1, si+1
					continue
				}
			case '\\':
				if g.pat[pi+1] == s[si] {
					pi, si = pi+2, si+1
					continue
				}
			default:
				if c == s[si] {
					pi++
					si++
					continue
				}
			}
		}
		if star < 0 {
			return false
		}
		mark++
		pi, si = star+1, mark
	}
	for pi < len(g.pat) && g.pat[pi] == '*' {
		pi++
	}
	return pi == len(g.pat)
}

// inClass reports whether r is in the class pat[open..end].
func (g *glob) inClass(open, end int, r rune) bool {
	j := open + 1
	negate := g.pat[j] == '!' || g.pat[j] == '^'
	if negate {
		j++
	}
	in := false
	for first := true; j < end; first = false {
		lo := g.pat[j]
		if lo == '\\' {
			j++
			lo = g.pat[j]
		} else if lo == ']' && !first {
			break
		}
		j++
		hi := lo
		if j+1 < end && g.pat[j] == '-' {
			hi = g.pat[j+1]
			if hi == '\\' && j+2 < end {
				hi = g.pat[j+2]
				j++
			}
			j += 2
		}
		if lo <= r && r <= hi {
			in = true
		}
	}
	return in != negate
}
