package proposal

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sort"
	"sync"

	"github.com/fluxgit/fluxgit/internal/audit"
	"github.com/fluxgit/fluxgit/internal/operation"
)

// Fingerprint identifies the intent of a checked preview body: the
// lowercase hex SHA-256 of its canonical JSON (internal/audit's canonical
// form) without previewId and requestedAt. Those two change on every retry
// of the same intent, so leaving them out is what lets a replay with the
// same idempotency key be recognised, while any other difference (another
// ref, another reason) makes a different fingerprint and so a key
// conflict. Numbers take their canonical form (1.0 and 1e0 alike; no
// preview field is a number today). A body that cannot be encoded (not
// one DecodeObject returns) fingerprints as "".
func Fingerprint(body map[string]any) string {
	raw, err := json.Marshal(body)
	if err != nil {
		return ""
	}
	v, err := audit.Parse(raw)
	if err != nil {
		return ""
	}
	obj, ok := v.(audit.Object)
	if !ok {
		return ""
	}
	canon, err := audit.Canonical(obj.Without("previewId", "requestedAt"))
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(canon)
	return hex.EncodeToString(sum[:])
}

// refKeys are, per operation, the body keys whose value is a ref as the
// agent wrote it, and stepRefKeys the same per plan step operation: the
// properties Check treats as refs (bounded by operation.MaxText), less
// those the schema marks "x-fluxgit-ref": false (push's remote is a remote
// name). Derived from the schemas, so a new operation's refs reach the
// agent policy without a list to extend; the submodule oids are object
// ids, not refs.
var derivedRefKeys = sync.OnceValues(deriveRefKeys)

func refKeys() map[string][]string     { o, _ := derivedRefKeys(); return o }
func stepRefKeys() map[string][]string { _, s := derivedRefKeys(); return s }

func deriveRefKeys() (ops, steps map[string][]string) {
	ops, steps = map[string][]string{}, map[string][]string{}
	pick := func(fields map[string]field, s map[string]any) []string {
		props, _ := s["properties"].(map[string]any)
		var keys []string
		for k, f := range fields {
			p, _ := props[k].(map[string]any)
			if f.kind == kRef && p["x-fluxgit-ref"] != false {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		return keys
	}
	for _, op := range operation.Names() {
		s, err := operation.Schema(op)
		if err != nil {
			panic(err)
		}
		if keys := pick(opFields()[op], s); len(keys) > 0 {
			ops[op] = keys
		}
		if op != "plan" {
			continue
		}
		defs, _ := s["$defs"].(map[string]any)
		for _, sop := range operation.PlanStepOps {
			d, _ := defs[sop+"Step"].(map[string]any)
			if keys := pick(stepFields()[sop], d); len(keys) > 0 {
				steps[sop] = keys
			}
		}
	}
	return ops, steps
}

// Refs returns every ref a checked body of op names, as written, in body
// order without repeats: the operation's ref keys, each plan step's, and
// every branch of every branchDelete target. The agent policy matches each
// of them against its ref globs, so a ref missing here would escape the
// policy; a rebase's currentRef (often "HEAD") is a ref like any other.
func Refs(op string, body map[string]any) []string {
	var out []string
	seen := map[string]bool{}
	add := func(v any) {
		s, ok := v.(string)
		if !ok || s == "" || seen[s] {
			return
		}
		seen[s] = true
		out = append(out, s)
	}
	addKeys := func(keys []string, m map[string]any) {
		for _, k := range keys {
			add(m[k])
		}
	}
	switch op {
	case "plan":
		steps, _ := body["steps"].([]any)
		for _, e := range steps {
			if step, ok := e.(map[string]any); ok {
				sop, _ := step["operationType"].(string)
				addKeys(stepRefKeys()[sop], step)
			}
		}
	case "branchDelete":
		for _, t := range targets(body) {
			branches, _ := t["branches"].([]any)
			for _, b := range branches {
				add(b)
			}
		}
	default:
		addKeys(refKeys()[op], body)
	}
	return out
}

// RepoPaths returns every filesystem path a checked body of op asks the
// gateway to touch, as written, without repeats: repoPath, the other
// absolute paths the body names (a worktree's new path), and each
// branchDelete target's repoPath. The agent policy's path constraints
// apply to all of them.
func RepoPaths(op string, body map[string]any) []string {
	var out []string
	seen := map[string]bool{}
	add := func(v any) {
		s, ok := v.(string)
		if !ok || s == "" || seen[s] {
			return
		}
		seen[s] = true
		out = append(out, s)
	}
	add(body["repoPath"])
	for _, k := range pathKeys()[op] {
		add(body[k])
	}
	if op == "branchDelete" {
		for _, t := range targets(body) {
			add(t["repoPath"])
		}
	}
	return out
}

// pathKeys are, per operation, the body keys besides repoPath whose value
// is an absolute path ("x-fluxgit-path": "absolute" in the schema, such as
// a worktree's path), sorted; derived, so a new operation's paths meet the
// policy's path constraints without a list to extend.
var pathKeys = sync.OnceValue(func() map[string][]string {
	out := map[string][]string{}
	for op, fields := range opFields() {
		for k, f := range fields {
			if f.kind == kAbsPath {
				out[op] = append(out[op], k)
			}
		}
		sort.Strings(out[op])
	}
	return out
})

func targets(body map[string]any) []map[string]any {
	a, _ := body["targets"].([]any)
	out := make([]map[string]any, 0, len(a))
	for _, e := range a {
		if t, ok := e.(map[string]any); ok {
			out = append(out, t)
		}
	}
	return out
}

// Audit risk levels (the ledger's risk field).
const (
	RiskHigh   = operation.RiskHigh
	RiskMedium = operation.RiskMedium
	RiskLow    = operation.RiskLow
)

// Risk is the ledger risk of op, contract data (internal/operation): reset
// and discard can lose work and are high; operations that rewrite or
// publish history are medium; worktree, commit and branch only add and are
// low. An unknown op is high, so a mistake errs towards attention.
func Risk(op string) string { return operation.Risk(op) }
