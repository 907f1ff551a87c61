// Package repopath canonicalizes the filesystem paths named in tool
// arguments and confines them to FLUXGIT_MCP_ALLOWED_ROOTS (and, for run
// directories, to the configured FluxGit run directory). Which arguments are
// paths is decided by the x-fluxgit-path marks of the tool's inputSchema,
// never by an argument's name. It runs in the host, before dispatch, so no
// provider ever sees a path the policy refuses.
package repopath

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/fluxgit/fluxgit/host/catalog"
	"github.com/fluxgit/fluxgit/internal/credpaths"
	"github.com/fluxgit/fluxgit/internal/pathwithin"
)

// EnvAllowedRoots is the variable that confines repository paths.
const EnvAllowedRoots = "FLUXGIT_MCP_ALLOWED_ROOTS"

// JSON-RPC codes this package produces.
const (
	CodeInvalidParams = -32602
	CodeBadRoots      = -32010
	CodeOutsideRoots  = -32011
)

// Error is a refusal the host sends as a JSON-RPC error.
type Error struct {
	Code    int64
	Message string
	Data    map[string]any
}

func (e *Error) Error() string { return fmt.Sprintf("%s (%d)", e.Message, e.Code) }

// Policy is the parsed allow-list. The zero value allows every path.
type Policy struct {
	// Roots are canonical absolute directories; empty means unconfined.
	Roots []string
	// bad is set when the variable is malformed: every call is then refused
	// with -32010 rather than silently running unconfined.
	bad *Error
	// runDir is the configured FluxGit run directory (canonical when it
	// exists, else clean); "" when none could be determined.
	runDir string
	// protected are the person's credential, policy and gateway-state
	// files (internal/credpaths): no path argument may lead there.
	protected []credpaths.Path
}

// WithProtected returns p refusing every absolute path argument that names
// or resolves into one of list's locations, whatever the roots allow.
//
// Why here, and again in the providers: the host sees every absolute path
// argument before dispatch (the x-fluxgit-path marks), so one check covers
// every tool, present and future, and a refused path never reaches a
// provider. Paths a provider computes itself — file.read's path relative to
// the work tree, a registry entry, a record under a run directory — only
// exist inside the provider, so the git-read and presence providers check
// those against the same list (passed to them in credpaths.EnvList).
func (p Policy) WithProtected(list []credpaths.Path) Policy {
	p.protected = append([]credpaths.Path(nil), list...)
	return p
}

// guard refuses a path argument whose clean or canonical form lies in a
// protected location; the refusal names what the file holds, not where.
func (p Policy) guard(field, clean, canonical string) error {
	for _, q := range []string{clean, canonical} {
		if q == "" {
			continue
		}
		if e, ok := credpaths.Contains(p.protected, q); ok {
			return invalid("Protected path", credpaths.Refusal(field, e))
		}
	}
	return nil
}

// WithRunDir returns p accepting dir — the FluxGit run directory the host
// is configured with (FLUXGIT_RUN_DIR or the platform default, as the audit
// ledger computes it) — as a runDir argument, wherever it is.
func (p Policy) WithRunDir(dir string) Policy {
	p.runDir = ""
	if dir == "" || !filepath.IsAbs(dir) {
		return p
	}
	p.runDir = filepath.Clean(dir)
	if c, err := filepath.EvalSymlinks(p.runDir); err == nil {
		p.runDir = c
	}
	return p
}

// RunDir is the configured run directory WithRunDir recorded.
func (p Policy) RunDir() string { return p.runDir }

// runDirAccepted says, in refusals, what a runDir argument may be.
const runDirAccepted = "runDir must be the FluxGit run directory this server is configured with " +
	"(FLUXGIT_RUN_DIR, else the platform default) or an existing directory inside " + EnvAllowedRoots +
	"; omit runDir to use the configured run directory"

// runDirArg checks a runDir argument: the configured run directory (named
// through any symlink) is always accepted; otherwise only an existing
// directory inside the allowed roots — with no allow-list set, nothing
// else. The canonical form is forwarded.
func (p Policy) runDirArg(field string, v any) (any, error) {
	s, ok := v.(string)
	if !ok {
		return nil, invalid("Path arguments must be strings", field+" must be a string")
	}
	if strings.TrimSpace(s) == "" || !filepath.IsAbs(s) || strings.ContainsRune(s, 0) {
		return nil, invalid("Path arguments must be absolute filesystem paths", field+" must be an absolute path; "+runDirAccepted)
	}
	clean := filepath.Clean(s)
	c, err := filepath.EvalSymlinks(clean)
	if err != nil {
		c = clean
	}
	if err := p.guard(field, clean, c); err != nil {
		return nil, err
	}
	if p.runDir != "" && (c == p.runDir || clean == p.runDir) {
		return p.runDir, nil
	}
	refuse := &Error{Code: CodeOutsideRoots, Message: "runDir is not an accepted FluxGit run directory: " + runDirAccepted, Data: map[string]any{
		"environmentVariable": EnvAllowedRoots,
		"argument":            field,
		"repoPathFingerprint": Fingerprint(c),
		"details":             runDirAccepted,
	}}
	if len(p.Roots) == 0 || !p.Contains(c) || err != nil && !p.ancestorInside(clean) {
		return nil, refuse
	}
	if err != nil {
		return nil, invalid("Path cannot be resolved", field+" does not exist or cannot be resolved; "+runDirAccepted)
	}
	if fi, err := os.Stat(c); err != nil || !fi.IsDir() {
		return nil, invalid("Path is not a directory", field+" must name a directory; "+runDirAccepted)
	}
	return c, nil
}

// FromEnv reads FLUXGIT_MCP_ALLOWED_ROOTS.
func FromEnv() Policy {
	v, set := os.LookupEnv(EnvAllowedRoots)
	if !set {
		return Policy{}
	}
	return Parse(v)
}

// Parse builds a Policy from an OS path list.
func Parse(list string) Policy {
	bad := func(details, root string) Policy {
		data := map[string]any{"environmentVariable": EnvAllowedRoots, "details": details}
		if root != "" {
			data["root"] = root
		}
		return Policy{bad: &Error{Code: CodeBadRoots, Message: "Invalid MCP allowed-roots configuration", Data: data}}
	}
	if strings.TrimSpace(list) == "" {
		return bad("the allow-list is empty", "")
	}
	var roots []string
	for _, r := range filepath.SplitList(list) {
		r = strings.TrimSpace(r)
		if r == "" {
			continue
		}
		if !filepath.IsAbs(r) {
			return bad("every root must be an absolute path", r)
		}
		c, err := filepath.EvalSymlinks(r)
		if err != nil {
			return bad("root cannot be resolved: "+err.Error(), r)
		}
		roots = append(roots, c)
	}
	if len(roots) == 0 {
		return bad("the allow-list names no root", "")
	}
	return Policy{Roots: roots}
}

// Check reports a malformed allow-list; the host calls it for every
// tools/call, even those naming no repository.
func (p Policy) Check() error {
	if p.bad != nil {
		return p.bad
	}
	return nil
}

// Canonical validates one repository path and returns its canonical form
// (symlinks resolved). field names the argument for error details.
func (p Policy) Canonical(field string, v any) (string, error) {
	return p.canonical(field, v, catalog.PathRepository)
}

// canonical validates one absolute path argument of the given kind and
// returns its canonical form. Errors name the argument, never the path: the
// value may point at something the caller must not learn about.
func (p Policy) canonical(field string, v any, kind string) (string, error) {
	if p.bad != nil {
		return "", p.bad
	}
	noun := "Path arguments"
	if kind == catalog.PathRepository {
		noun = "repoPath values"
	}
	s, ok := v.(string)
	if !ok {
		return "", invalid(noun+" must be strings", field+" must be a string")
	}
	if strings.TrimSpace(s) == "" || !filepath.IsAbs(s) || strings.ContainsRune(s, 0) {
		return "", invalid(noun+" must be absolute filesystem paths", field+" must be an absolute path")
	}
	clean := filepath.Clean(s)
	c, err := filepath.EvalSymlinks(clean)
	resolved := c
	if err != nil {
		resolved = credpaths.Canonical(clean)
	}
	if gerr := p.guard(field, clean, resolved); gerr != nil {
		return "", gerr
	}
	if err != nil {
		if len(p.Roots) == 0 {
			// Unconfined: let the provider report "not a git work tree"
			// with its usual 10010 payload.
			return clean, nil
		}
		if !p.ancestorInside(clean) {
			// Whether an outside path exists is itself outside data:
			// answer as for an existing one.
			return "", p.outside(field, clean, kind)
		}
		return "", invalid("Path cannot be resolved",
			field+" does not exist or cannot be resolved; pass an existing absolute path inside "+EnvAllowedRoots)
	}
	if len(p.Roots) > 0 && !p.Contains(c) {
		return "", p.outside(field, c, kind)
	}
	return c, nil
}

// ancestorInside reports whether the deepest existing ancestor of the
// unresolvable path clean resolves inside the roots. Only then may a
// refusal say the path does not exist: below a symlink that leads out of
// the roots, that would tell the caller about the outside.
func (p Policy) ancestorInside(clean string) bool {
	for dir := filepath.Dir(clean); ; dir = filepath.Dir(dir) {
		if c, err := filepath.EvalSymlinks(dir); err == nil {
			return p.Contains(c)
		}
		if filepath.Dir(dir) == dir {
			return false
		}
	}
}

// outside is the -32011 refusal of a path argument.
func (p Policy) outside(field, canonical, kind string) *Error {
	msg := "Path argument is outside the MCP allowed roots"
	if kind == catalog.PathRepository {
		msg = "Repository path is outside the MCP allowed roots"
	}
	return &Error{Code: CodeOutsideRoots, Message: msg, Data: map[string]any{
		"environmentVariable": EnvAllowedRoots,
		"argument":            field,
		"repoPathFingerprint": Fingerprint(canonical),
		"hint":                "pass a path inside one of the directories listed in " + EnvAllowedRoots,
	}}
}

// Contains reports whether the canonical path c lies in one of the roots.
func (p Policy) Contains(c string) bool {
	for _, r := range p.Roots {
		if pathwithin.Within(r, c) {
			return true
		}
	}
	return false
}

// Fingerprint names a path in errors without disclosing it: the refused
// path may itself be sensitive.
func Fingerprint(path string) string {
	sum := sha256.Sum256([]byte(path))
	return "sha256:" + hex.EncodeToString(sum[:])
}

func invalid(msg, details string) *Error {
	return &Error{Code: CodeInvalidParams, Message: msg, Data: map[string]any{"details": details}}
}

// CanonicalizeArguments rewrites, in place, every argument marks names (the
// x-fluxgit-path marks of the tool's inputSchema, whatever the arguments are
// called and however deep they sit) to its canonical form, and refuses
// those the policy does not allow. It returns the canonical value of the
// first top-level repository argument ("" when there is none): the
// repository the result envelope names.
func (p Policy) CanonicalizeArguments(args map[string]any, marks []catalog.PathArg) (string, error) {
	if err := p.Check(); err != nil {
		return "", err
	}
	var top string
	for _, m := range marks {
		var fix func(field string, v any) (any, error)
		switch m.Kind {
		case catalog.PathRepository, catalog.PathDirectory, catalog.PathFile:
			kind := m.Kind
			fix = func(field string, v any) (any, error) { return p.existing(field, v, kind) }
		case catalog.PathRunDir:
			fix = p.runDirArg
		case catalog.PathDestination:
			fix = p.destination
		default:
			continue // relative (the provider resolves it in its repository) and none
		}
		if _, err := rewrite(args, m.Pointer, "arguments", fix); err != nil {
			return "", err
		}
		if top == "" && m.Kind == catalog.PathRepository && len(m.Pointer) == 1 {
			top, _ = args[strings.TrimPrefix(m.Pointer[0], ".")].(string)
		}
	}
	return top, nil
}

// destination canonicalises a path that may not exist yet: its deepest
// existing ancestor is resolved and confined, and the missing components
// are appended to the canonical ancestor. An existing entry on the way that
// cannot be resolved (a dangling symbolic link) is refused whatever the
// policy: creating through it would land wherever the link points. A blank
// value is an optional destination left out and passes unchanged.
func (p Policy) destination(field string, v any) (any, error) {
	if p.bad != nil {
		return nil, p.bad
	}
	s, ok := v.(string)
	if !ok {
		return nil, invalid("Path arguments must be strings", field+" must be a string")
	}
	if strings.TrimSpace(s) == "" {
		return v, nil
	}
	if !filepath.IsAbs(s) || strings.ContainsRune(s, 0) {
		return nil, invalid("Path arguments must be absolute filesystem paths", field+" must be an absolute path (or be left out)")
	}
	clean := filepath.Clean(s)
	if err := p.guard(field, clean, credpaths.Canonical(clean)); err != nil {
		return nil, err
	}
	if c, err := filepath.EvalSymlinks(clean); err == nil {
		if len(p.Roots) > 0 && !p.Contains(c) {
			return nil, p.outside(field, c, catalog.PathDestination)
		}
		return c, nil
	}
	// Walk up to the deepest entry that exists (as itself, links included).
	var missing []string
	dir := clean
	for {
		if _, err := os.Lstat(dir); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return nil, invalid("Path cannot be resolved", field+" cannot be resolved; pass an absolute path inside "+EnvAllowedRoots)
		}
		missing = append([]string{filepath.Base(dir)}, missing...)
		dir = parent
	}
	c, err := filepath.EvalSymlinks(dir)
	if err != nil {
		if len(p.Roots) > 0 && !p.ancestorInside(dir) {
			return nil, p.outside(field, clean, catalog.PathDestination)
		}
		return nil, invalid("Path cannot be resolved",
			field+" passes through an entry that cannot be resolved (a dangling symbolic link?); pass a path whose existing part resolves")
	}
	if len(p.Roots) > 0 && !p.Contains(c) {
		return nil, p.outside(field, filepath.Join(append([]string{c}, missing...)...), catalog.PathDestination)
	}
	if fi, err := os.Stat(c); err != nil || !fi.IsDir() {
		return nil, invalid("Path cannot be created", field+" lies below an existing entry that is not a directory")
	}
	return filepath.Join(append([]string{c}, missing...)...), nil
}

// existing canonicalises a repository, directory or file argument; the last
// two must also exist with that type when the policy confines paths.
func (p Policy) existing(field string, v any, kind string) (any, error) {
	c, err := p.canonical(field, v, kind)
	if err != nil || kind == catalog.PathRepository {
		return c, err
	}
	fi, err := os.Stat(c)
	if err != nil {
		if len(p.Roots) == 0 {
			return c, nil
		}
		return nil, invalid("Path cannot be resolved", field+" does not exist; pass an existing absolute path")
	}
	if kind == catalog.PathDirectory && !fi.IsDir() {
		return nil, invalid("Path is not a directory", field+" must name a directory")
	}
	if kind == catalog.PathFile && !fi.Mode().IsRegular() {
		return nil, invalid("Path is not a regular file", field+" must name a regular file")
	}
	return c, nil
}

// rewrite applies fix to every value ptr reaches in v and returns v with
// the results stored in place. Values of another shape than the pointer
// expects (validation let an alternative through) are left alone.
func rewrite(v any, ptr []string, field string, fix func(field string, v any) (any, error)) (any, error) {
	if len(ptr) == 0 {
		return fix(field, v)
	}
	step, rest := ptr[0], ptr[1:]
	switch {
	case strings.HasPrefix(step, "."):
		obj, ok := v.(map[string]any)
		if !ok {
			return v, nil
		}
		key := step[1:]
		cur, ok := obj[key]
		if !ok {
			return v, nil
		}
		nv, err := rewrite(cur, rest, field+"."+key, fix)
		if err != nil {
			return nil, err
		}
		obj[key] = nv
	case step == "*":
		obj, ok := v.(map[string]any)
		if !ok {
			return v, nil
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys) // the first refusal is the same on every run
		for _, k := range keys {
			nv, err := rewrite(obj[k], rest, field+"."+k, fix)
			if err != nil {
				return nil, err
			}
			obj[k] = nv
		}
	case step == "[]":
		list, ok := v.([]any)
		if !ok {
			return v, nil
		}
		for i := range list {
			nv, err := rewrite(list[i], rest, fmt.Sprintf("%s[%d]", field, i), fix)
			if err != nil {
				return nil, err
			}
			list[i] = nv
		}
	case strings.HasPrefix(step, "[") && strings.HasSuffix(step, "]"):
		list, ok := v.([]any)
		i, err := strconv.Atoi(step[1 : len(step)-1])
		if !ok || err != nil || i < 0 || i >= len(list) {
			return v, nil
		}
		nv, err := rewrite(list[i], rest, fmt.Sprintf("%s[%d]", field, i), fix)
		if err != nil {
			return nil, err
		}
		list[i] = nv
	}
	return v, nil
}
