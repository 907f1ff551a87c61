package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v5"
	"gopkg.in/yaml.v3"

	"github.com/fluxgit/fluxgit/gateway/proposal"
	"github.com/fluxgit/fluxgit/internal/operation"
	"github.com/fluxgit/fluxgit/internal/pathwithin"
	"github.com/fluxgit/fluxgit/schemas"
)

// Version is the policy format version this package reads.
const Version = 1

// maxFileSize bounds a policy file; a real one is a few kilobytes, and the
// bound keeps a mistaken path (a log, a device) from being read whole.
const maxFileSize = 4 << 20

// Policy is a loaded, validated agent policy. A nil *Policy allows every
// proposal (no FLUXGIT_MCP_AGENT_POLICY): every operation still needs a
// person, the policy only narrows what reaches one.
type Policy struct {
	file         string
	defaultAllow bool
	rules        []rule
	auto         []autoRule
}

// autoRule is one autoApprove entry: the person's decision made in advance
// (CONTRACT §10) for low-risk operations on the refs and paths it globs.
type autoRule struct {
	name       string
	agents     []string
	operations []string // low risk only, never empty
	refs       []string // never empty
	paths      []string // globs on canonical absolute paths, never empty
}

type rule struct {
	name       string
	agents     []string
	operations []string // nil: all
	refs       []string // nil: any
	prefixes   []string // canonical; nil: any
}

// File is the policy file as it was named to Load.
func (p *Policy) File() string { return p.file }

// String summarises the policy for the gateway's start-up line.
func (p *Policy) String() string {
	if p == nil {
		return "no agent policy"
	}
	def := "allow"
	if !p.defaultAllow {
		def = "deny"
	}
	if len(p.auto) > 0 {
		return fmt.Sprintf("agent policy %s (%d rules, default %s, %d auto-approve rules)", p.file, len(p.rules), def, len(p.auto))
	}
	return fmt.Sprintf("agent policy %s (%d rules, default %s)", p.file, len(p.rules), def)
}

// AutoApproves reports whether the policy has an autoApprove rule: such a
// policy approves writes without the person, so the gateway refuses to
// start while the file is where an approved write could rewrite it.
func (p *Policy) AutoApproves() bool { return p != nil && len(p.auto) > 0 }

// FromEnv loads the file FLUXGIT_MCP_AGENT_POLICY names. Unset or empty
// means no policy: (nil, nil). Any problem with a named file is an error,
// so that a gateway never starts with less protection than its user
// configured.
func FromEnv() (*Policy, error) {
	name := os.Getenv(EnvPolicy)
	if name == "" {
		return nil, nil
	}
	p, err := Load(name)
	var le *LoadError
	if errors.As(err, &le) {
		// The caller names the variable ("agent policy (FLUXGIT_MCP_AGENT_POLICY): ");
		// the file and what is wrong with it follow, said once.
		return nil, &envError{le}
	}
	if err != nil {
		return nil, err
	}
	return p, nil
}

// LoadError is a policy file that cannot be used: File as it was named,
// Detail what is wrong (it follows the file name: " does not exist; …" or
// ": at /rules/0/name: …").
type LoadError struct {
	File   string
	Detail string
	Err    error // the underlying cause, if any
}

// Error says "agent policy <file><detail>".
func (e *LoadError) Error() string { return "agent policy " + e.File + e.Detail }

// Unwrap returns the underlying cause.
func (e *LoadError) Unwrap() error { return e.Err }

// envError is a LoadError as FromEnv returns it: its callers already say
// "agent policy", so the text starts at the file name.
type envError struct{ *LoadError }

func (e *envError) Error() string { return e.File + e.Detail }

// Unwrap returns the LoadError.
func (e *envError) Unwrap() error { return e.LoadError }

func fileErr(name string, cause error, format string, args ...any) error {
	return &LoadError{File: name, Detail: fmt.Sprintf(format, args...), Err: cause}
}

// clean is a parser's message without the parser's own prefix ("yaml: "),
// which would repeat what the sentence already says.
func clean(err error) string {
	return strings.TrimPrefix(err.Error(), "yaml: ")
}

// Load reads and validates the policy file at name, YAML or JSON (a file
// whose first non-blank character is '{' is read as JSON). Every error
// names the file and, where it is about one value, its JSON pointer.
func Load(name string) (*Policy, error) {
	doc, err := readDoc(name)
	if err != nil {
		return nil, err
	}
	fail := func(ptr, format string, args ...any) error {
		if ptr == "" {
			ptr = "/"
		}
		return fileErr(name, nil, ": at %s: %s", ptr, fmt.Sprintf(format, args...))
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		return nil, fail("", "the policy must be an object with version, default and rules; see schemas/agent-policy.schema.json")
	}
	v, ok := obj["version"]
	if !ok {
		return nil, fail("", "missing required key version; write version: %d", Version)
	}
	if n, ok := v.(json.Number); !ok || !isVersion(n) {
		return nil, fail("/version", "unsupported policy version %s; this fluxgit reads version %d", short(v), Version)
	}
	// Before the schema, whose enum failure would only list the allowed
	// values: an operation the risk table does not rate low gets a
	// sentence saying why it cannot be approved in advance.
	if err := lowRiskOnly(obj, fail); err != nil {
		return nil, err
	}
	if err := validate(doc); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			leaf := deepest(ve)
			return nil, fail(leaf.InstanceLocation, "%s (see schemas/agent-policy.schema.json)", leaf.Message)
		}
		return nil, fileErr(name, err, ": %s", clean(err))
	}
	// The schema has checked every type below.
	p := &Policy{file: name, defaultAllow: obj["default"] != "deny"}
	raw, _ := obj["rules"].([]any)
	seen := map[string]int{}
	for i, r := range raw {
		m := r.(map[string]any)
		ru := rule{name: m["name"].(string)}
		at := fmt.Sprintf("/rules/%d", i)
		if j, dup := seen[ru.name]; dup {
			return nil, fail(at+"/name", "rule name %q is already used by /rules/%d; names must be unique", ru.name, j)
		}
		seen[ru.name] = i
		var err error
		if ru.agents, err = globs(m["agents"], at+"/agents", fail); err != nil {
			return nil, err
		}
		if ops, ok := m["operations"].([]any); ok {
			for _, o := range ops {
				ru.operations = append(ru.operations, o.(string))
			}
		}
		if _, ok := m["refs"]; ok {
			if ru.refs, err = globs(m["refs"], at+"/refs", fail); err != nil {
				return nil, err
			}
		}
		if pc, ok := m["pathConstraints"].([]any); ok {
			for k, e := range pc {
				s := e.(string)
				if !filepath.IsAbs(s) {
					return nil, fail(fmt.Sprintf("%s/pathConstraints/%d", at, k), "path prefix %q is not absolute; write the full path, e.g. /home/me/work", s)
				}
				ru.prefixes = append(ru.prefixes, Canonical(s))
			}
		}
		p.rules = append(p.rules, ru)
	}
	rawAuto, _ := obj["autoApprove"].([]any)
	for i, r := range rawAuto {
		m := r.(map[string]any)
		ar := autoRule{name: m["name"].(string)}
		at := fmt.Sprintf("/autoApprove/%d", i)
		if _, dup := seen[ar.name]; dup {
			return nil, fail(at+"/name", "rule name %q is already used by another rule; names must be unique across rules and autoApprove, so that \"approved by policy %s\" names one rule", ar.name, ar.name)
		}
		seen[ar.name] = i
		var err error
		if ar.agents, err = globs(m["agents"], at+"/agents", fail); err != nil {
			return nil, err
		}
		for _, o := range m["operations"].([]any) {
			ar.operations = append(ar.operations, o.(string))
		}
		if ar.refs, err = globs(m["refs"], at+"/refs", fail); err != nil {
			return nil, err
		}
		if ar.paths, err = globs(m["paths"], at+"/paths", fail); err != nil {
			return nil, err
		}
		for k, g := range ar.paths {
			if !filepath.IsAbs(g) {
				return nil, fail(fmt.Sprintf("%s/paths/%d", at, k), "path glob %q is not absolute; write the full path, e.g. /home/me/work/*", g)
			}
			ar.paths[k] = filepath.Clean(g)
		}
		p.auto = append(p.auto, ar)
	}
	return p, nil
}

// lowRiskOnly refuses an autoApprove rule naming an operation the
// gateway's risk table (internal/operation) does not rate low: a reset,
// discard, push, branch delete, rebase, merge, patch, plan or submodule
// pointer always waits for the person.
func lowRiskOnly(obj map[string]any, fail func(ptr, format string, args ...any) error) error {
	list, _ := obj["autoApprove"].([]any)
	for i, r := range list {
		m, _ := r.(map[string]any)
		ops, _ := m["operations"].([]any)
		for j, o := range ops {
			op, ok := o.(string)
			if !ok || !operation.Known(op) || operation.Risk(op) == operation.RiskLow {
				continue // the schema says what is wrong with it
			}
			return fail(fmt.Sprintf("/autoApprove/%d/operations/%d", i, j),
				"operation %s is %s risk in the gateway's risk table and can never be approved by policy; autoApprove takes only the low-risk operations %s; remove %s from this rule (a %s always waits for the person)",
				op, operation.Risk(op), strings.Join(LowRisk(), ", "), op, op)
		}
	}
	return nil
}

// LowRisk lists the operations an autoApprove rule may name: those the
// risk table (internal/operation) rates low, in its order.
func LowRisk() []string {
	var out []string
	for _, o := range operation.All {
		if o.Risk == operation.RiskLow {
			out = append(out, o.Name)
		}
	}
	return out
}

// AutoApprove returns the name of the autoApprove rule that approves r in
// the person's stead, and true; or "", false when r must wait for the
// person. The first rule whose agents match r is the only one consulted
// (as with rules), and it approves only when it names r's operation, the
// operation is low risk, r names or moves at least one ref and every ref
// matches one of the rule's refs, and r touches at least one path and
// every path, canonical, matches one of the rule's paths. Call it after
// Check allowed r.
func (p *Policy) AutoApprove(r Request) (string, bool) {
	if p == nil {
		return "", false
	}
	for i := range p.auto {
		ar := &p.auto[i]
		if !anyMatch(ar.agents, r.AgentID) {
			continue
		}
		if !slices.Contains(ar.operations, r.OperationType) || operation.Risk(r.OperationType) != operation.RiskLow {
			return "", false
		}
		if len(r.Refs) == 0 || len(r.RepoPaths) == 0 {
			return "", false
		}
		for _, ref := range r.Refs {
			if !anyMatch(ar.refs, ref) {
				return "", false
			}
		}
		for _, rp := range r.RepoPaths {
			c := Canonical(rp)
			// filepath.Match: the path's own separators (Windows too).
			if !slices.ContainsFunc(ar.paths, func(g string) bool { ok, _ := filepath.Match(g, c); return ok }) {
				return "", false
			}
		}
		return ar.name, true
	}
	return "", false
}

// readDoc reads name and decodes it to the JSON data model (json.Number
// numbers, map[string]any objects) the schema validator takes.
func readDoc(name string) (any, error) {
	f, err := os.Open(name)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fileErr(name, nil, " does not exist; create it or unset %s", EnvPolicy)
		}
		return nil, fileErr(name, err, " cannot be read: %s", clean(err))
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return nil, fileErr(name, nil, " is a directory; name the policy file")
	}
	data, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		return nil, fileErr(name, err, " cannot be read: %s", clean(err))
	}
	if len(data) > maxFileSize {
		return nil, fileErr(name, nil, " is larger than %d bytes; is it the right file?", maxFileSize)
	}
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, fileErr(name, nil, " is empty; it needs at least version: %d", Version)
	}
	if trimmed[0] == '{' {
		m, err := proposal.DecodeObject(trimmed)
		if err != nil {
			return nil, fileErr(name, err, ": %s", strings.Replace(strings.Replace(err.Error(), "the body", "the file", 1), "send exactly one JSON object", "write exactly one JSON object", 1))
		}
		return m, nil
	}
	// YAML: decode to a node first so that a second document is refused
	// rather than silently ignored; yaml.v3 refuses duplicate keys itself.
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var node yaml.Node
	if err := dec.Decode(&node); err != nil {
		return nil, fileErr(name, err, " is not valid YAML: %s", clean(err))
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, fileErr(name, nil, " holds more than one YAML document; keep one")
	}
	var v any
	if err := node.Decode(&v); err != nil {
		return nil, fileErr(name, err, " is not valid YAML: %s", clean(err))
	}
	// Round-trip through JSON to reach the JSON data model; a mapping
	// with a non-string key has no JSON form and is refused here.
	j, err := json.Marshal(v)
	if err != nil {
		return nil, fileErr(name, err, " has a value JSON cannot represent (keys must be strings): %s", clean(err))
	}
	d := json.NewDecoder(bytes.NewReader(j))
	d.UseNumber()
	var out any
	if err := d.Decode(&out); err != nil {
		return nil, fileErr(name, err, ": %s", clean(err))
	}
	return out, nil
}

func globs(v any, at string, fail func(ptr, format string, args ...any) error) ([]string, error) {
	var out []string
	for i, e := range v.([]any) {
		g := e.(string)
		if _, err := path.Match(g, ""); err != nil {
			return nil, fail(fmt.Sprintf("%s/%d", at, i), "%q is not a valid glob (path.Match syntax: * ? [...] and \\ escapes)", g)
		}
		out = append(out, g)
	}
	return out, nil
}

var (
	schemaOnce sync.Once
	schema     *jsonschema.Schema
	schemaErr  error
)

func validate(doc any) error {
	schemaOnce.Do(func() {
		const url = "mem:///schemas/agent-policy.schema.json"
		raw, err := fs.ReadFile(schemas.FS, "agent-policy.schema.json")
		if err != nil {
			schemaErr = err
			return
		}
		c := jsonschema.NewCompiler()
		c.Draft = jsonschema.Draft2020
		c.LoadURL = func(u string) (io.ReadCloser, error) {
			return nil, fmt.Errorf("refusing to load %s: the policy schema is self-contained", u)
		}
		if err := c.AddResource(url, bytes.NewReader(raw)); err != nil {
			schemaErr = err
			return
		}
		schema, schemaErr = c.Compile(url)
	})
	if schemaErr != nil {
		return fmt.Errorf("compile the embedded policy schema: %w", schemaErr)
	}
	return schema.Validate(doc)
}

// deepest is the most specific failure: the first leaf of the cause tree.
func deepest(ve *jsonschema.ValidationError) *jsonschema.ValidationError {
	for len(ve.Causes) > 0 {
		ve = ve.Causes[0]
	}
	return ve
}

func isVersion(n json.Number) bool {
	f, err := n.Float64()
	return err == nil && f == Version
}

func short(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 40 {
		return string(b[:37]) + "..."
	}
	return string(b)
}

// Check decides whether r may become a proposal at all: nil, or a
// *Violation whose reason says what the applying rule allows. A nil
// policy allows everything. r.RepoPaths are canonicalised here as the
// prefixes were, so a symbolic link can neither smuggle a path in nor
// shut a legitimate one out.
func (p *Policy) Check(r Request) error {
	if p == nil {
		return nil
	}
	ru := p.match(r.AgentID)
	if ru == nil {
		if p.defaultAllow {
			return nil
		}
		return &Violation{Rule: "default", Reason: fmt.Sprintf("agent %s matches no rule of the policy and its default is deny; no operation is allowed for it", r.AgentID)}
	}
	if ru.operations != nil && !slices.Contains(ru.operations, r.OperationType) {
		return &Violation{Rule: ru.name, Reason: fmt.Sprintf("operation %s is not allowed for agent %s; allowed: %s", r.OperationType, r.AgentID, strings.Join(ru.operations, ", "))}
	}
	if ru.refs != nil {
		for _, ref := range r.Refs {
			if !anyMatch(ru.refs, ref) {
				return &Violation{Rule: ru.name, Reason: fmt.Sprintf("ref %q is not allowed for agent %s; every ref must match one of: %s", ref, r.AgentID, strings.Join(ru.refs, ", "))}
			}
		}
	}
	if ru.prefixes != nil {
		for _, rp := range r.RepoPaths {
			c := Canonical(rp)
			if !slices.ContainsFunc(ru.prefixes, func(pre string) bool { return pathwithin.Within(pre, c) }) {
				shown := rp
				if c != filepath.Clean(rp) {
					shown = fmt.Sprintf("%s (resolves to %s)", rp, c)
				}
				return &Violation{Rule: ru.name, Reason: fmt.Sprintf("path %s is outside the paths allowed for agent %s: %s", shown, r.AgentID, strings.Join(ru.prefixes, ", "))}
			}
		}
	}
	return nil
}

func (p *Policy) match(agent string) *rule {
	for i := range p.rules {
		if anyMatch(p.rules[i].agents, agent) {
			return &p.rules[i]
		}
	}
	return nil
}

func anyMatch(globs []string, s string) bool {
	for _, g := range globs {
		if ok, _ := path.Match(g, s); ok {
			return true
		}
	}
	return false
}

// Canonical is p as the policy compares paths: cleaned, with symbolic
// links resolved as far as the path exists (a worktree's new path does
// not exist yet, but its parent may be a link), so two spellings of one
// directory compare equal.
func Canonical(p string) string {
	p = filepath.Clean(p)
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	} else if !errors.Is(err, fs.ErrNotExist) {
		return p
	}
	dir := filepath.Dir(p)
	if dir == p {
		return p
	}
	return filepath.Join(Canonical(dir), filepath.Base(p))
}
