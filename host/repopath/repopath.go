// Package repopath canonicalizes the repository paths named in tool
// arguments and confines them to FLUXGIT_MCP_ALLOWED_ROOTS. It runs in the
// host, before dispatch, so no provider ever sees a path the policy refuses.
package repopath

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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
	if p.bad != nil {
		return "", p.bad
	}
	s, ok := v.(string)
	if !ok {
		return "", invalid("repoPath values must be strings", field+" must be a string")
	}
	if strings.TrimSpace(s) == "" || !filepath.IsAbs(s) {
		return "", invalid("repoPath values must be absolute filesystem paths", field+" must be an absolute path")
	}
	c, err := filepath.EvalSymlinks(filepath.Clean(s))
	if err != nil {
		if len(p.Roots) == 0 {
			// Unconfined: let the provider report "not a git work tree"
			// with its usual 10010 payload.
			return filepath.Clean(s), nil
		}
		return "", invalid("Repository path cannot be resolved", field+": "+err.Error())
	}
	if len(p.Roots) > 0 && !p.Contains(c) {
		return "", &Error{Code: CodeOutsideRoots, Message: "Repository path is outside the MCP allowed roots",
			Data: map[string]any{"environmentVariable": EnvAllowedRoots, "repoPathFingerprint": Fingerprint(c)}}
	}
	return c, nil
}

// Contains reports whether the canonical path c lies in one of the roots.
func (p Policy) Contains(c string) bool {
	for _, r := range p.Roots {
		if Within(r, c) {
			return true
		}
	}
	return false
}

// Within reports whether path equals root or lies below it. Both must be
// clean absolute paths.
func Within(root, path string) bool {
	if path == root {
		return true
	}
	if root == string(filepath.Separator) {
		return strings.HasPrefix(path, root)
	}
	return strings.HasPrefix(path, root+string(filepath.Separator))
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

// CanonicalizeArguments rewrites, in place, every repository path the
// contract recognises in a tool's arguments: repoPath, repoPaths[],
// repositories[].repoPath and targets[].repoPath. It returns the canonical
// top-level repoPath ("" when absent).
func (p Policy) CanonicalizeArguments(args map[string]any) (string, error) {
	if err := p.Check(); err != nil {
		return "", err
	}
	var top string
	if v, ok := args["repoPath"]; ok {
		c, err := p.Canonical("arguments.repoPath", v)
		if err != nil {
			return "", err
		}
		args["repoPath"] = c
		top = c
	}
	if list, ok := args["repoPaths"].([]any); ok {
		for i, v := range list {
			c, err := p.Canonical(fmt.Sprintf("arguments.repoPaths[%d]", i), v)
			if err != nil {
				return "", err
			}
			list[i] = c
		}
	}
	for _, key := range []string{"repositories", "targets"} {
		list, _ := args[key].([]any)
		for i, item := range list {
			obj, ok := item.(map[string]any)
			if !ok {
				continue
			}
			v, ok := obj["repoPath"]
			if !ok {
				continue
			}
			c, err := p.Canonical(fmt.Sprintf("arguments.%s[%d].repoPath", key, i), v)
			if err != nil {
				return "", err
			}
			obj["repoPath"] = c
		}
	}
	return top, nil
}
