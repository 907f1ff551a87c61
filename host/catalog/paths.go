package catalog

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// PathKeyword is the vendor keyword that marks a filesystem-path argument in
// an inputSchema (or a fragment it references). Its value is one of
// PathKinds. The host canonicalises and confines every marked argument,
// whatever the argument is called and however deep it sits; `fluxgit spec
// lint` requires the mark on every argument that looks like a path. JSON
// Schema validators ignore unknown keywords, and the host strips the mark
// from the schemas tools/list serves.
const PathKeyword = "x-fluxgit-path"

// Path kinds: the values of PathKeyword.
const (
	// PathRepository: an absolute path of a git work tree, confined to the
	// allowed roots; the provider checks that it is a work tree.
	PathRepository = "repository"
	// PathRunDir: the FluxGit run directory — the configured one, or a
	// directory inside the allowed roots.
	PathRunDir = "runDir"
	// PathDirectory: an absolute path of an existing directory, confined to
	// the allowed roots.
	PathDirectory = "directory"
	// PathFile: an absolute path of an existing regular file, confined to
	// the allowed roots.
	PathFile = "file"
	// PathRelative: a path inside the repository another argument names;
	// the host forwards it unchanged and the provider resolves it within
	// that repository.
	PathRelative = "relative"
	// PathDestination: an absolute path that may not exist yet — where
	// something is to be created, such as a new worktree. Its deepest
	// existing ancestor is canonicalised and must lie inside the allowed
	// roots; the missing rest is appended. A blank value is forwarded
	// unchanged: it stands for an optional destination left out, which the
	// provider omits.
	PathDestination = "destination"
	// PathNone: looks like a path but is never used as a filesystem
	// location (a label or name stored verbatim); nothing is checked.
	PathNone = "none"
)

// PathKinds lists every valid value of PathKeyword.
var PathKinds = []string{PathRepository, PathRunDir, PathDirectory, PathFile, PathRelative, PathDestination, PathNone}

func validPathKind(k string) bool {
	for _, v := range PathKinds {
		if v == k {
			return true
		}
	}
	return false
}

// PathArg is one marked location in a tool's arguments.
type PathArg struct {
	// Pointer leads from the arguments object to the value, one step each:
	// ".name" a property, "[]" every array item, "[N]" item N, "*" every
	// property value of an object.
	Pointer []string `json:"pointer"`
	// Kind is the PathKeyword value.
	Kind string `json:"kind"`
}

// String renders the location as in error details, e.g.
// "arguments.repositories[].repoPath".
func (p PathArg) String() string { return "arguments" + strings.Join(p.Pointer, "") }

// pathWalk calls fn for every subschema of s with the pointer to the part of
// the instance it describes; name is the property name for property values
// and "" otherwise. Negated and conditional-test schemas describe no data and
// are skipped (as in walkSchema).
func pathWalk(s any, fn func(s *object, ptr []string, name string)) {
	var walk func(s any, ptr []string, name string)
	step := func(ptr []string, tok string) []string {
		return append(append(make([]string, 0, len(ptr)+1), ptr...), tok)
	}
	walk = func(s any, ptr []string, name string) {
		o, ok := s.(*object)
		if !ok {
			return
		}
		fn(o, ptr, name)
		if props := o.obj("properties"); props != nil {
			for _, k := range props.keys {
				walk(props.vals[k], step(ptr, "."+k), k)
			}
		}
		if pp := o.obj("patternProperties"); pp != nil {
			for _, k := range pp.keys {
				walk(pp.vals[k], step(ptr, "*"), "")
			}
		}
		if ap, ok := o.vals["additionalProperties"].(*object); ok {
			walk(ap, step(ptr, "*"), "")
		}
		switch items := o.vals["items"].(type) {
		case *object:
			walk(items, step(ptr, "[]"), "")
		case []any:
			for i, it := range items {
				walk(it, step(ptr, "["+strconv.Itoa(i)+"]"), "")
			}
		}
		if pi, ok := o.vals["prefixItems"].([]any); ok {
			for i, it := range pi {
				walk(it, step(ptr, "["+strconv.Itoa(i)+"]"), "")
			}
		}
		for _, k := range []string{"allOf", "anyOf", "oneOf"} {
			if l, ok := o.vals[k].([]any); ok {
				for _, m := range l {
					walk(m, ptr, name)
				}
			}
		}
		for _, k := range []string{"then", "else"} {
			walk(o.vals[k], ptr, name)
		}
		if ds := o.obj("dependentSchemas"); ds != nil {
			for _, k := range ds.keys {
				walk(ds.vals[k], ptr, "")
			}
		}
	}
	walk(s, nil, "")
}

// pathArgs collects the marked locations of an inlined input schema, once
// each, in schema order. Marks with an unknown kind are ignored here (the
// linter reports them); a location marked with two kinds keeps the first.
func pathArgs(schema any) []PathArg {
	var out []PathArg
	seen := map[string]bool{}
	pathWalk(schema, func(s *object, ptr []string, _ string) {
		k, ok := s.vals[PathKeyword].(string)
		if !ok || !validPathKind(k) {
			return
		}
		key := strings.Join(ptr, "\x00")
		if seen[key] {
			return
		}
		seen[key] = true
		out = append(out, PathArg{Pointer: ptr, Kind: k})
	})
	return out
}

// stripPathMarks returns a copy of schema without PathKeyword, sharing every
// subtree that holds no mark. Only schema positions are rewritten: a
// property that happens to be named like the keyword is left alone.
func stripPathMarks(node any) any {
	o, ok := node.(*object)
	if !ok {
		return node
	}
	out := newObject(o.len())
	changed := false
	for _, k := range o.keys {
		v := o.vals[k]
		nv := v
		switch {
		case k == PathKeyword:
			changed = true
			continue
		case schemaKeywords[k] || k == "items":
			if l, ok := v.([]any); ok {
				nv = stripList(l)
			} else {
				nv = stripPathMarks(v)
			}
		case schemaListKeywords[k]:
			if l, ok := v.([]any); ok {
				nv = stripList(l)
			}
		case schemaMapKeywords[k] || k == "$defs":
			// $defs survives only in a schema served with its own $defs.
			if m, ok := v.(*object); ok {
				mm := newObject(m.len())
				same := true
				for _, pk := range m.keys {
					s := stripPathMarks(m.vals[pk])
					same = same && sameValue(s, m.vals[pk])
					mm.set(pk, s)
				}
				if !same {
					nv = mm
				}
			}
		}
		if !sameValue(nv, v) {
			changed = true
		}
		out.set(k, nv)
	}
	if !changed {
		return o
	}
	return out
}

func stripList(l []any) any {
	out := make([]any, len(l))
	same := true
	for i, e := range l {
		out[i] = stripPathMarks(e)
		same = same && sameValue(out[i], e)
	}
	if same {
		return l
	}
	return out
}

// sameValue reports whether stripping returned its input unchanged (the
// same object or list, or an equal scalar).
func sameValue(a, b any) bool {
	switch x := a.(type) {
	case *object:
		y, ok := b.(*object)
		return ok && x == y
	case []any:
		y, ok := b.([]any)
		return ok && len(x) == len(y) && (len(x) == 0 || &x[0] == &y[0])
	}
	return true
}

// Path-likeness heuristics of the path-mark lint rule. Names: path, paths,
// cwd, dir, directory, worktree, folder, and camelCase or snake_case names
// ending in one of them (repoPath, runDir, target_dir). Descriptions: phrases
// that say the value is a location — "absolute path", "file path", "path
// of/to …", a description starting with "Path", "directory" (but not
// "directory name"), "folder". A bare mention of the word path ("the
// registry entry whose path equals repoPath") is not enough.
var (
	pathNameRE = regexp.MustCompile(`^(?i:paths?|cwd|dirs?|director(?:y|ies)|folders?|work-?trees?|workdir|rundir)$` +
		`|[a-z0-9](?:Paths?|Dirs?|Director(?:y|ies)|Folders?|Worktrees?|Cwd)$` +
		`|(?i:[_-](?:paths?|dirs?|director(?:y|ies)|folders?|worktrees?|cwd))$`)
	pathDescRE = regexp.MustCompile(`(?i)\b(?:absolute|relative|filesystem|file-system|file|full|local|canonical)\s+paths?\b` +
		`|^\s*paths?\b|\bpaths?\s+(?:of|to|inside|within|below|under|relative)\b|\bdirector(?:y|ies)\b|\bfolders?\b`)
	dirNameDescRE = regexp.MustCompile(`(?i)\bdirectory names?\b`)
)

// looksLikePath reports whether a property with this name and description
// names a filesystem location.
func looksLikePath(name, description string) bool {
	if name != "" && pathNameRE.MatchString(name) {
		return true
	}
	return pathDescRE.MatchString(dirNameDescRE.ReplaceAllString(description, ""))
}

// schemaTypes returns the effective "type" of s as a list.
func schemaTypes(s *object) []string {
	t, _ := effective(s, "type")
	switch v := t.(type) {
	case string:
		return []string{v}
	case []any:
		return stringList(v)
	}
	return nil
}

func onlyString(s *object) bool {
	ts := schemaTypes(s)
	if len(ts) == 0 {
		return false
	}
	for _, t := range ts {
		if t != "string" && t != "null" {
			return false
		}
	}
	return true
}

func hasType(s *object, want string) bool {
	for _, t := range schemaTypes(s) {
		if t == want {
			return true
		}
	}
	return false
}

// pathMarkFindings checks the marks of one inlined input schema: every
// path-like string property (or array of strings) carries a mark, every mark
// names a known kind and sits on a string schema. Messages name the argument
// path, e.g. "arguments.runDir".
func pathMarkFindings(schema any) []string {
	var out []string
	pathWalk(schema, func(s *object, ptr []string, name string) {
		where := PathArg{Pointer: ptr}.String()
		if v, ok := s.vals[PathKeyword]; ok {
			k, isStr := v.(string)
			if !isStr || !validPathKind(k) {
				out = append(out, fmt.Sprintf("%s: %s must be one of %s, not %s", where, PathKeyword, strings.Join(PathKinds, ", "), jsonText(toPlain(v))))
			}
			if !onlyString(s) {
				out = append(out, fmt.Sprintf("%s: %s is only allowed on string schemas (type: string); mark the items of an array, the fields of an object", where, PathKeyword))
			}
		}
		if name == "" {
			return
		}
		desc, _ := effective(s, "description")
		d, _ := desc.(string)
		if !looksLikePath(name, d) {
			return
		}
		target, what := s, where
		if hasType(s, "array") {
			items, _ := effective(s, "items")
			io, ok := items.(*object)
			if !ok || !onlyString(io) {
				return // an array of objects: its fields are checked themselves
			}
			target, what = io, where+"[]"
		} else if !onlyString(s) {
			return // integers, booleans and objects are not paths
		}
		if _, ok := effective(target, PathKeyword); !ok {
			out = append(out, fmt.Sprintf("%s looks like a filesystem path (by its name or description) but has no %s mark; add %s: %s",
				what, PathKeyword, PathKeyword, strings.Join(PathKinds, " | ")))
		}
	})
	return out
}
