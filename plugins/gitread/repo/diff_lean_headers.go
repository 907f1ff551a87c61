package repo

import (
	"bytes"
	"strings"
)

// leanPatchHeaders drops the header lines of a patch that only repeat what
// the file's `diff --git` (or `diff --cc`/`diff --combined`) line already
// says, so the lean diff.text pays for content, not boilerplate:
//   - `index <blob>..<blob>` lines (and a trailing mode of 100644, the
//     ordinary file mode); an index line naming another mode (say 100755 of
//     an executable whose mode did not change) is kept, since nothing else
//     says it. A mode change is printed by git as `old mode`/`new mode`
//     lines, which stay.
//   - `--- X` / `+++ Y` when X and Y are the names the `diff` line gives,
//     and `--- /dev/null` / `+++ /dev/null` when `new file mode` /
//     `deleted file mode` already says the file is new or deleted.
//
// Everything else (hunks, rename/copy/similarity lines, binary notes, stat
// and name-status output) passes through unchanged. Only lines between a
// `diff ` line and its first `@@` line are looked at, so a removed content
// line reading "-- x" is never mistaken for a header.
func leanPatchHeaders(text []byte) []byte {
	if !bytes.Contains(text, []byte("diff --")) {
		return text
	}
	var out bytes.Buffer
	out.Grow(len(text))
	inHeader, combined := false, false
	names, newFile, deletedFile := "", false, false
	rest := text
	for len(rest) > 0 {
		line := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i+1], rest[i+1:]
		} else {
			rest = nil
		}
		s := strings.TrimSuffix(string(line), "\n")
		switch {
		case strings.HasPrefix(s, "diff --git "):
			inHeader, combined, names = true, false, strings.TrimPrefix(s, "diff --git ")
			newFile, deletedFile = false, false
		case strings.HasPrefix(s, "diff --cc ") || strings.HasPrefix(s, "diff --combined "):
			inHeader, combined = true, true
			names = s[strings.IndexByte(s[len("diff --"):], ' ')+len("diff --")+1:]
			newFile, deletedFile = false, false
		case !inHeader:
		case strings.HasPrefix(s, "@@"):
			inHeader = false
		case strings.HasPrefix(s, "new file mode "):
			newFile = true
		case strings.HasPrefix(s, "deleted file mode "):
			deletedFile = true
		case strings.HasPrefix(s, "index "):
			if indexRepeats(s) {
				continue
			}
		case strings.HasPrefix(s, "--- "):
			if fileLineRepeats(strings.TrimPrefix(s, "--- "), names, combined, newFile, "a/", true) {
				continue
			}
		case strings.HasPrefix(s, "+++ "):
			if fileLineRepeats(strings.TrimPrefix(s, "+++ "), names, combined, deletedFile, "b/", false) {
				continue
			}
		}
		out.Write(line)
	}
	return out.Bytes()
}

// indexRepeats reports whether an `index` line carries nothing but blob ids
// (and, at most, the ordinary mode 100644).
func indexRepeats(s string) bool {
	f := strings.Fields(s)
	switch len(f) {
	case 2:
		return true
	case 3:
		return f[2] == "100644"
	}
	return false
}

// fileLineRepeats reports whether the name on a `---`/`+++` line is already
// said: /dev/null by the new/deleted file mode line, a name by the diff line
// (its first name for `---`, its last for `+++`; for a combined diff, its
// only name with or without the a/ or b/ prefix).
func fileLineRepeats(name, names string, combined, nullSaid bool, prefix string, first bool) bool {
	// git ends a name holding a space with a tab on these lines only.
	name = strings.TrimSuffix(name, "\t")
	if name == "/dev/null" {
		return nullSaid
	}
	if names == "" {
		return false
	}
	if combined {
		if name == names {
			return true
		}
		if strings.HasPrefix(name, prefix) {
			return name[len(prefix):] == names
		}
		if strings.HasPrefix(name, `"`+prefix) {
			return `"`+name[len(prefix)+1:] == names
		}
		return false
	}
	if first {
		return strings.HasPrefix(names, name+" ")
	}
	return strings.HasSuffix(names, " "+name)
}
