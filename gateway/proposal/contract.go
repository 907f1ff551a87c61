// Package proposal is the wire contract of a write proposal's preview body
// (README.md, "Approval gateway"): which keys each of the twelve operations
// carries and how each is checked, the refs and repository paths a body
// names, the intent fingerprint idempotent replay compares, and the audit
// risk of each operation. The approval gateway checks every body with it
// before a proposal is journalled, and the strict test gateway in
// tests/gatewaytest uses the same checks, so the two can never disagree
// about what a conforming client sends.
package proposal

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/fluxgit/fluxgit/internal/operation"
)

// Ops are the twelve preview operations, in the contract's order
// (internal/operation owns the list).
var Ops = operation.Names()

// CommonKeys are the keys every preview body carries, sorted
// (operation.Header).
var CommonKeys = operation.HeaderKeys()

// kind is how one body field is checked.
type kind int

const (
	kString    kind = iota // non-empty string
	kRef                   // a ref: non-blank, 1-4,096 characters
	kPathRel               // a relative path, may be empty
	kRepoPath              // non-blank absolute path (repository)
	kAbsPath               // non-blank absolute path (other)
	kBool                  // a boolean
	kFalse                 // the boolean false
	kStrings               // array of 0-10,000 non-empty paths
	kStrings1              // array of 1-10,000 non-empty paths
	kEnum                  // one of field.enum
	kOID                   // full lowercase object id
	kMessage               // 1-2,000 characters
	kCommitMsg             // 1-65,536 characters
	kPatch                 // 1 to 4 Mi characters
	kSteps                 // plan steps
	kTargets               // branchDelete targets
)

type field struct {
	kind     kind
	required bool
	enum     []string
}

// opFields are the operation-specific body keys of each preview, and
// stepFields the keys a plan step may carry for each step operation
// (besides operationType): both derived from the operation schemas
// (schemas/operations, internal/operation), so the words Check explains a
// violation in follow the contract as data instead of a copy of it.
var derivedFields = sync.OnceValues(deriveFields)

// opFields and stepFields are derived on first use, not at start-up: the
// package is linked into every fluxgit process (serve, the providers),
// and reading the twelve schemas costs about 1.5 ms that only a gateway
// checking a body needs.
func opFields() map[string]map[string]field   { o, _ := derivedFields(); return o }
func stepFields() map[string]map[string]field { _, s := derivedFields(); return s }

// deriveFields reads every operation schema. The embedded schemas are part
// of the build, so one this cannot read is a defect the package's tests
// catch; it panics rather than check bodies against a partial contract.
func deriveFields() (ops, steps map[string]map[string]field) {
	ops, steps = map[string]map[string]field{}, map[string]map[string]field{}
	for _, op := range operation.Names() {
		s, err := operation.Schema(op)
		if err != nil {
			panic(err)
		}
		ops[op] = objectFields(op, s, CommonKeys)
		if op != "plan" {
			continue
		}
		defs, _ := s["$defs"].(map[string]any)
		for _, sop := range operation.PlanStepOps {
			d, ok := defs[sop+"Step"].(map[string]any)
			if !ok {
				panic(fmt.Sprintf("the plan schema has no $defs/%sStep", sop))
			}
			steps[sop] = objectFields("plan step "+sop, d, []string{"operationType"})
		}
	}
	return ops, steps
}

// objectFields turns an object schema's properties, less skip, into field
// rules.
func objectFields(where string, s map[string]any, skip []string) map[string]field {
	props, _ := s["properties"].(map[string]any)
	req := map[string]bool{}
	if r, ok := s["required"].([]any); ok {
		for _, k := range r {
			req[k.(string)] = true
		}
	}
	out := map[string]field{}
	for k, v := range props {
		if contains(skip, k) {
			continue
		}
		p, _ := v.(map[string]any)
		f, ok := kindOf(k, p)
		if !ok {
			panic(fmt.Sprintf("%s: cannot tell how to check property %q from its schema", where, k))
		}
		f.required = req[k]
		out[k] = f
	}
	return out
}

// kindOf is how a property's schema is checked: const false, an enum, a
// boolean, a path list, the plan's steps or the branchDelete targets; a
// string is an absolute path (x-fluxgit-path absolute), an object id (the
// oid pattern), or by its maxLength a ref (operation.MaxText, non-blank), a
// submodule pointer message, a commit message or a patch; without one it
// is a non-empty string (minLength 1) or a relative path that may be empty.
func kindOf(name string, p map[string]any) (field, bool) {
	if c, ok := p["const"]; ok && c == false {
		return field{kind: kFalse}, true
	}
	if e, ok := p["enum"].([]any); ok {
		f := field{kind: kEnum}
		for _, v := range e {
			f.enum = append(f.enum, v.(string))
		}
		return f, true
	}
	num := func(k string) int { n, _ := p[k].(float64); return int(n) }
	switch p["type"] {
	case "boolean":
		return field{kind: kBool}, true
	case "array":
		switch name {
		case "steps":
			return field{kind: kSteps}, true
		case "targets":
			return field{kind: kTargets}, true
		}
		if items, _ := p["items"].(map[string]any); items["type"] == "string" {
			if num("minItems") >= 1 {
				return field{kind: kStrings1}, true
			}
			return field{kind: kStrings}, true
		}
	case "string":
		switch {
		case p["x-fluxgit-path"] == "absolute":
			return field{kind: kAbsPath}, true
		case p["pattern"] == oidRe.String():
			return field{kind: kOID}, true
		}
		switch num("maxLength") {
		case operation.MaxText:
			return field{kind: kRef}, true
		case operation.MaxPointerMessage:
			return field{kind: kMessage}, true
		case operation.MaxCommitMessage:
			return field{kind: kCommitMsg}, true
		case operation.MaxPatch:
			return field{kind: kPatch}, true
		case 0:
			if num("minLength") >= 1 {
				return field{kind: kString}, true
			}
			return field{kind: kPathRel}, true
		}
	}
	return field{}, false
}

// IsOp reports whether op is one of Ops.
func IsOp(op string) bool { return operation.Known(op) }

var (
	safeIDRe  = regexp.MustCompile(`^[A-Za-z0-9_-]{1,128}$`)
	uuidV4Re  = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	agentIDRe = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,128}$`)
	stampRe   = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z$`)
	oidRe     = regexp.MustCompile(`^(?:[0-9a-f]{40}|[0-9a-f]{64})$`)
)

// SafeID reports whether id may be used as a previewId: 1-128 of
// [A-Za-z0-9_-].
func SafeID(id string) bool { return safeIDRe.MatchString(id) }

// IsUUIDv4 reports whether s is a lowercase UUID of version 4, RFC 4122
// variant.
func IsUUIDv4(s string) bool { return uuidV4Re.MatchString(s) }

// IsStamp reports whether s is RFC 3339 UTC with milliseconds and Z.
func IsStamp(s string) bool {
	if !stampRe.MatchString(s) {
		return false
	}
	_, err := time.Parse("2006-01-02T15:04:05.000Z", s)
	return err == nil
}

// IsAgentID reports whether id is a sanitised agent id as the handshake
// provider sends it: 1-128 of [A-Za-z0-9._:-], not starting or ending with
// '-'.
func IsAgentID(id string) bool { return agentIDRe.MatchString(id) && strings.Trim(id, "-") == id }

// IsIdempotencyKey reports whether key is one of the two forms the
// contract allows for op: "<op>:client:<1-128 of [A-Za-z0-9_-]>" or
// "<op>:call:<uuid v4>".
func IsIdempotencyKey(op, key string) bool {
	if rest, ok := strings.CutPrefix(key, op+":client:"); ok {
		return SafeID(rest)
	}
	if rest, ok := strings.CutPrefix(key, op+":call:"); ok {
		return IsUUIDv4(rest)
	}
	return false
}

// MaxDepth is how deeply a body may nest objects and arrays. The deepest
// conforming preview body nests 4 levels (a plan's steps[i].paths, a
// branchDelete's targets[i].branches), and an agent policy file in JSON
// about as deep; 64 leaves room for any honest client while keeping the
// duplicate-key walk, which is recursive, bounded before it starts.
const MaxDepth = 64

// DecodeObject parses a body that must be one JSON object with no
// duplicate keys at any depth (a duplicate makes the meaning depend on the
// parser) and no deeper than MaxDepth.
func DecodeObject(body []byte) (map[string]any, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, errors.New("the body is empty; the contract needs a JSON object")
	}
	// Bound the nesting before anything walks or decodes: one pass over
	// the bytes with a counter, so a body of 30,000 opening brackets costs
	// no more than reading it.
	if off, ok := withinDepth(body, MaxDepth); !ok {
		return nil, fmt.Errorf("the body nests objects and arrays more than %d levels deep (at byte %d); a preview body nests at most 4, so send the fields the contract lists, without wrapping them", MaxDepth, off)
	}
	if err := noDuplicateKeys(json.NewDecoder(bytes.NewReader(body))); err != nil {
		return nil, err
	}
	var m map[string]any
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	if err := d.Decode(&m); err != nil || m == nil {
		return nil, fmt.Errorf("the body is not a JSON object: %v", err)
	}
	if d.More() {
		return nil, errors.New("the body has data after its JSON object")
	}
	return m, nil
}

// withinDepth reports whether body nests '{' and '[' at most limit levels
// deep outside strings; when it does not, off is the byte offset of the
// first bracket too deep. Malformed JSON is left to the decoder: this only
// counts.
func withinDepth(body []byte, limit int) (off int, ok bool) {
	depth := 0
	inString, escaped := false, false
	for i, c := range body {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
			if depth > limit {
				return i, false
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return 0, true
}

// segment is one step of the JSON path to a value: an object key, or an
// array index when isIndex.
type segment struct {
	key     string
	index   int
	isIndex bool
}

// jsonPath renders a path as $.key[0].key, only when an error names it.
func jsonPath(path []segment) string {
	var b strings.Builder
	b.WriteString("$")
	for _, s := range path {
		if s.isIndex {
			fmt.Fprintf(&b, "[%d]", s.index)
		} else {
			b.WriteString(".")
			b.WriteString(s.key)
		}
	}
	return b.String()
}

func noDuplicateKeys(d *json.Decoder) error {
	tok, err := d.Token()
	if err != nil {
		return fmt.Errorf("the body is not valid JSON (%w); send exactly one JSON object", err)
	}
	// One path stack for the whole walk, pushed and popped per level: the
	// path is text only when a duplicate is reported.
	path := make([]segment, 0, 8)
	return walkValue(d, tok, &path)
}

func walkValue(d *json.Decoder, tok json.Token, path *[]segment) error {
	delim, ok := tok.(json.Delim)
	if !ok {
		return nil
	}
	if len(*path) >= MaxDepth {
		// withinDepth already refused this; kept so the recursion is
		// bounded by this function alone.
		return fmt.Errorf("the body nests objects and arrays more than %d levels deep", MaxDepth)
	}
	switch delim {
	case '{':
		seen := map[string]bool{}
		for d.More() {
			kt, err := d.Token()
			if err != nil {
				return fmt.Errorf("the body is not valid JSON (%w); send exactly one JSON object", err)
			}
			k := kt.(string)
			if seen[k] {
				return fmt.Errorf("the body repeats the key %q in %s; send each key once", k, jsonPath(*path))
			}
			seen[k] = true
			vt, err := d.Token()
			if err != nil {
				return fmt.Errorf("the body is not valid JSON (%w); send exactly one JSON object", err)
			}
			*path = append(*path, segment{key: k})
			err = walkValue(d, vt, path)
			*path = (*path)[:len(*path)-1]
			if err != nil {
				return err
			}
		}
	case '[':
		for i := 0; d.More(); i++ {
			vt, err := d.Token()
			if err != nil {
				return fmt.Errorf("the body is not valid JSON (%w); send exactly one JSON object", err)
			}
			*path = append(*path, segment{index: i, isIndex: true})
			err = walkValue(d, vt, path)
			*path = (*path)[:len(*path)-1]
			if err != nil {
				return err
			}
		}
	}
	_, err := d.Token() // the closing delimiter
	return err
}

// Check lists every way body breaks the contract for op, one sentence per
// violation naming the key; nil means the body conforms. body is what
// DecodeObject returns (numbers may be json.Number or float64).
func Check(op string, body map[string]any) []string {
	if !IsOp(op) {
		return []string{fmt.Sprintf("operation %q is not one of %s", op, strings.Join(Ops, ", "))}
	}
	var p []string
	fields := opFields()[op]
	for _, k := range sortedKeys(body) {
		if _, ok := fields[k]; ok {
			continue
		}
		if contains(CommonKeys, k) {
			continue
		}
		p = append(p, fmt.Sprintf("key %q is not in the %s body", k, op))
	}
	for _, k := range CommonKeys {
		if _, ok := body[k]; !ok {
			p = append(p, "missing required key "+k)
		}
	}
	if v, ok := body["previewId"]; ok {
		if s, _ := v.(string); !IsUUIDv4(s) {
			p = append(p, fmt.Sprintf("previewId %v is not a lowercase UUID v4", v))
		}
	}
	if v, ok := body["agentId"]; ok {
		if s, _ := v.(string); !IsAgentID(s) {
			p = append(p, fmt.Sprintf("agentId %v is not a sanitized agent id", v))
		}
	}
	if v, ok := body["idempotencyKey"]; ok {
		if s, _ := v.(string); !IsIdempotencyKey(op, s) {
			p = append(p, fmt.Sprintf("idempotencyKey %v is neither %s:client:<key> nor %s:call:<uuid v4>", v, op, op))
		}
	}
	if v, ok := body["operationType"]; ok && v != op {
		p = append(p, fmt.Sprintf("operationType %v on the %s endpoint", v, op))
	}
	if v, ok := body["repoPath"]; ok {
		p = append(p, checkField("repoPath", field{kind: kRepoPath}, v)...)
	}
	if v, ok := body["reason"]; ok {
		if s, ok := v.(string); !ok || s == "" || utf8.RuneCountInString(s) > operation.MaxText {
			p = append(p, "reason must be a string of 1-4,096 characters")
		}
	}
	if v, ok := body["requestedAt"]; ok {
		if s, _ := v.(string); !IsStamp(s) {
			p = append(p, fmt.Sprintf("requestedAt %v is not RFC 3339 UTC with milliseconds and Z", v))
		}
	}
	for _, k := range sortedKeys(fields) {
		f := fields[k]
		v, ok := body[k]
		if !ok {
			if f.required {
				p = append(p, "missing required key "+k)
			}
			continue
		}
		p = append(p, checkField(k, f, v)...)
	}
	if op == "submodulePointer" {
		_, has := body["message"]
		switch body["direction"] {
		case "record":
			if !has {
				p = append(p, "message is required for direction record")
			}
		case "return":
			if has {
				p = append(p, "message is not sent for direction return")
			}
		}
	}
	return p
}

// checkField checks one value against its field rule.
func checkField(name string, f field, v any) []string {
	bad := func(want string) []string {
		return []string{fmt.Sprintf("%s must be %s, got %s", name, want, short(v))}
	}
	str, isStr := v.(string)
	switch f.kind {
	case kString:
		if !isStr || str == "" {
			return bad("a non-empty string")
		}
	case kRef:
		if !isStr || str == "" || utf8.RuneCountInString(str) > operation.MaxText || strings.TrimSpace(str) == "" {
			return bad("a non-blank string of 1-4,096 characters")
		}
	case kPathRel:
		if !isStr || filepath.IsAbs(str) {
			return bad("a relative path string (may be empty)")
		}
	case kAbsPath, kRepoPath:
		if !isStr || strings.TrimSpace(str) == "" || !filepath.IsAbs(str) || utf8.RuneCountInString(str) > operation.MaxPathLen {
			return bad("a non-blank absolute path")
		}
	case kBool:
		if _, ok := v.(bool); !ok {
			return bad("a boolean")
		}
	case kFalse:
		if v != false {
			return bad("false")
		}
	case kEnum:
		if !isStr || !contains(f.enum, str) {
			return bad("one of " + strings.Join(f.enum, "|"))
		}
	case kOID:
		if !isStr || !oidRe.MatchString(str) {
			return bad("a full lowercase object id")
		}
	case kMessage:
		if !isStr || str == "" || utf8.RuneCountInString(str) > operation.MaxPointerMessage {
			return bad("a string of 1-2,000 characters")
		}
	case kCommitMsg:
		if !isStr || str == "" || utf8.RuneCountInString(str) > operation.MaxCommitMessage {
			return bad("a string of 1-65,536 characters")
		}
	case kPatch:
		if !isStr || str == "" || utf8.RuneCountInString(str) > operation.MaxPatch {
			return bad("a string of 1 to 4 Mi characters")
		}
	case kStrings, kStrings1:
		a, ok := v.([]any)
		if !ok || len(a) > operation.MaxPaths || (f.kind == kStrings1 && len(a) == 0) {
			return bad("an array of up to 10,000 paths")
		}
		for i, e := range a {
			if s, ok := e.(string); !ok || s == "" || utf8.RuneCountInString(s) > operation.MaxPathLen {
				return []string{fmt.Sprintf("%s[%d] must be a non-empty path string", name, i)}
			}
		}
	case kSteps:
		return checkSteps(v)
	case kTargets:
		return checkTargets(v)
	}
	return nil
}

func checkSteps(v any) []string {
	a, ok := v.([]any)
	if !ok || len(a) < 1 || len(a) > operation.MaxPlanSteps {
		return []string{"steps must be an array of 1-10 steps"}
	}
	var p []string
	for i, e := range a {
		at := fmt.Sprintf("steps[%d]", i)
		step, ok := e.(map[string]any)
		if !ok {
			p = append(p, at+" must be an object")
			continue
		}
		op, _ := step["operationType"].(string)
		fields, ok := stepFields()[op]
		if !ok {
			p = append(p, fmt.Sprintf("%s.operationType %s is not merge|rebase|discard|reset|patch", at, short(step["operationType"])))
			continue
		}
		for _, k := range sortedKeys(step) {
			if k == "operationType" {
				continue
			}
			f, ok := fields[k]
			if !ok {
				p = append(p, fmt.Sprintf("%s: key %q is not a %s step field", at, k, op))
				continue
			}
			p = append(p, checkField(at+"."+k, f, step[k])...)
		}
		for _, k := range sortedKeys(fields) {
			if _, ok := step[k]; !ok && fields[k].required {
				p = append(p, fmt.Sprintf("%s: missing required key %s", at, k))
			}
		}
	}
	return p
}

func checkTargets(v any) []string {
	a, ok := v.([]any)
	if !ok || len(a) < 1 || len(a) > operation.MaxDeleteRepos {
		return []string{"targets must be an array of 1-20 targets"}
	}
	var p []string
	for i, e := range a {
		at := fmt.Sprintf("targets[%d]", i)
		t, ok := e.(map[string]any)
		if !ok {
			p = append(p, at+" must be an object")
			continue
		}
		for _, k := range sortedKeys(t) {
			if k != "repoPath" && k != "branches" {
				p = append(p, fmt.Sprintf("%s: key %q is not a target field (repoPath, branches)", at, k))
			}
		}
		rp, ok := t["repoPath"]
		if !ok {
			p = append(p, at+": missing required key repoPath")
		} else {
			p = append(p, checkField(at+".repoPath", field{kind: kRepoPath}, rp)...)
		}
		br, ok := t["branches"].([]any)
		if !ok || len(br) < 1 || len(br) > operation.MaxDeleteBranches {
			p = append(p, at+".branches must be an array of 1-20 branch names")
			continue
		}
		seen := map[string]bool{}
		for j, b := range br {
			s, ok := b.(string)
			if !ok || s == "" || utf8.RuneCountInString(s) > operation.MaxText || strings.HasPrefix(s, "refs/") {
				p = append(p, fmt.Sprintf("%s.branches[%d] must be a short branch name", at, j))
				continue
			}
			if seen[s] {
				p = append(p, fmt.Sprintf("%s.branches[%d] duplicates an earlier branch", at, j))
			}
			seen[s] = true
		}
	}
	return p
}

// CheckCancel lists every way a cancel body breaks the contract: it
// carries agentId, a sanitised agent id, and nothing else.
func CheckCancel(body map[string]any) []string {
	var p []string
	for _, k := range sortedKeys(body) {
		if k != "agentId" {
			p = append(p, fmt.Sprintf("key %q is not in the cancel body (agentId only)", k))
		}
	}
	v, ok := body["agentId"]
	if !ok {
		return append(p, "missing required key agentId")
	}
	if s, _ := v.(string); !IsAgentID(s) {
		p = append(p, fmt.Sprintf("agentId %v is not a sanitized agent id", short(v)))
	}
	return p
}

// semanticKeys are the semantic diff body's keys, all always sent.
var semanticKeys = []string{"baseRef", "headRef", "paths", "repoId", "repoPath"}

// CheckSemantic lists every way a semantic diff body breaks the contract:
// exactly repoId, repoPath, baseRef, headRef and paths, all present.
func CheckSemantic(body map[string]any) []string {
	var p []string
	for _, k := range sortedKeys(body) {
		if !contains(semanticKeys, k) {
			p = append(p, fmt.Sprintf("key %q is not in the semantic diff body", k))
		}
	}
	for _, k := range semanticKeys {
		v, ok := body[k]
		if !ok {
			p = append(p, "missing required key "+k)
			continue
		}
		switch k {
		case "repoId":
			if s, ok := v.(string); !ok || s == "" {
				p = append(p, "repoId must be a non-empty string")
			}
		case "repoPath":
			p = append(p, checkField(k, field{kind: kRepoPath}, v)...)
		case "baseRef", "headRef":
			if _, ok := v.(string); !ok {
				p = append(p, k+" must be a string (empty when not given)")
			}
		case "paths":
			p = append(p, checkField(k, field{kind: kStrings}, v)...)
		}
	}
	return p
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

// short renders a value for a violation message, bounded.
func short(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 80 {
		return string(b[:77]) + "..."
	}
	return string(b)
}
