// TEMPORARY: replaced by helper B's implementation at merge.

// Package proposal is the wire contract of a preview body.
package proposal

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"path/filepath"
	"strings"
)

// Ops are the twelve preview operations.
var Ops = []string{"merge", "rebase", "discard", "reset", "patch", "plan", "worktree", "commit", "push", "branch", "branchDelete", "submodulePointer"}

// Check returns the contract violations of a preview body (stub: the
// common keys and the branch operation's name only).
func Check(op string, body map[string]any) []string {
	var out []string
	known := false
	for _, o := range Ops {
		known = known || o == op
	}
	if !known {
		return []string{"unknown operation " + op}
	}
	for _, k := range []string{"agentId", "idempotencyKey", "operationType", "previewId", "reason", "repoPath", "requestedAt"} {
		if s, ok := body[k].(string); !ok || strings.TrimSpace(s) == "" {
			out = append(out, k+" must be a non-empty string")
		}
	}
	if t, _ := body["operationType"].(string); t != "" && t != op {
		out = append(out, "operationType "+t+" does not match the endpoint "+op)
	}
	if p, _ := body["repoPath"].(string); p != "" && !filepath.IsAbs(p) {
		out = append(out, "repoPath must be absolute")
	}
	if op == "branch" {
		if s, _ := body["name"].(string); s == "" {
			out = append(out, "name must be a non-empty string")
		}
	}
	return out
}

// Fingerprint identifies the intent of a body: without previewId and
// requestedAt.
func Fingerprint(body map[string]any) string {
	m := map[string]any{}
	for k, v := range body {
		if k != "previewId" && k != "requestedAt" {
			m[k] = v
		}
	}
	b, _ := json.Marshal(m)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Refs are the refs a body names.
func Refs(op string, body map[string]any) []string {
	var out []string
	for _, k := range []string{"sourceRef", "targetRef", "currentRef", "ontoRef", "branch", "name", "startPoint"} {
		if s, _ := body[k].(string); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// RepoPaths are the repository and worktree paths a body touches.
func RepoPaths(op string, body map[string]any) []string {
	var out []string
	if s, _ := body["repoPath"].(string); s != "" {
		out = append(out, s)
	}
	if op == "worktree" {
		if s, _ := body["path"].(string); s != "" {
			out = append(out, s)
		}
	}
	if ts, ok := body["targets"].([]any); ok {
		for _, t := range ts {
			if m, ok := t.(map[string]any); ok {
				if s, _ := m["repoPath"].(string); s != "" {
					out = append(out, s)
				}
			}
		}
	}
	return out
}

// Risk is the ledger risk of an operation.
func Risk(op string) string {
	switch op {
	case "reset", "discard":
		return "high"
	case "worktree", "commit", "branch":
		return "low"
	}
	return "medium"
}
