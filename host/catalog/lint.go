package catalog

import (
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// Finding is one problem reported by Lint.
type Finding struct {
	File    string // path relative to the linted tree, e.g. "tools/repo.status.yaml"
	Rule    string // rule id, e.g. "description"
	Message string
}

// String formats the finding as "FILE: RULE: message".
func (f Finding) String() string { return f.File + ": " + f.Rule + ": " + f.Message }

// Lint rule ids.
const (
	// RuleParse: a spec or fragment file is not valid YAML/JSON data.
	RuleParse = "parse"
	// RuleMetaschema: a tool, resource or prompt file does not match
	// schemas/tool.schema.json, schemas/resource.schema.json or
	// schemas/prompt.schema.json.
	RuleMetaschema = "metaschema"
	// RuleSchemaCompile: an input, output or reference output schema has a $ref that does not
	// resolve within the tree (or is cyclic), or does not compile offline.
	RuleSchemaCompile = "schema-compile"
	// RuleNamePattern: a tool name does not match ToolNamePattern, or a
	// prompt name PromptNamePattern.
	RuleNamePattern = "name-pattern"
	// RuleNameUnique: two tools or two prompts share a name, two resources
	// a URI, or two arguments of one prompt a name.
	RuleNameUnique = "name-unique"
	// RuleFileName: a tool or prompt file is not named <name>.yaml.
	RuleFileName = "file-name"
	// RuleDescription: a tool, a resource, a prompt, a prompt argument, or a
	// property of an input or output schema (at any depth) has no
	// description.
	RuleDescription = "description"
	// RuleReadOnlyHint: a tool does not state annotations.readOnlyHint.
	RuleReadOnlyHint = "read-only-hint"
	// RuleToolsets: a tool of a provider passed to RequireToolsets names
	// no toolsets, so --toolsets could not select it (a tool in no set is
	// served only with all or --tools). Third-party tools may omit them.
	RuleToolsets = "toolsets"
	// RuleReadOnlyDestructive: a read-only tool states destructiveHint.
	RuleReadOnlyDestructive = "read-only-destructive"
	// RuleAudit: a tool that is not read-only does not state audit
	// (event and risk of its ledger entries), or a read-only tool states
	// labels other than event tool_call with risk none.
	RuleAudit = "audit"
	// RuleProviderUnknown: a tool, resource or prompt names a provider that
	// is not in the known list.
	RuleProviderUnknown = "provider-unknown"
	// RuleInputClosed: an inputSchema does not set additionalProperties:
	// false at its top level.
	RuleInputClosed = "input-closed"
	// RuleStringBounds: a string in an inputSchema has no maxLength, or a
	// required string property allows the empty string (minLength < 1).
	RuleStringBounds = "string-bounds"
	// RuleResultShape: a tool with result: plain declares the envelope
	// fields tool or readOnly in its outputSchema, or does not declare the
	// error object its tool errors are sent as.
	RuleResultShape = "result-shape"
	// RuleExampleInvalid: an example's arguments fail the inputSchema, or
	// its payload fails the output schema it is checked against: the
	// referenceOutputSchema for an example with shape: reference (when the
	// tool has one), otherwise the outputSchema, both as written and, for
	// envelope tools, as the lean host sends it (LeanEnvelope).
	RuleExampleInvalid = "example-invalid"
	// RuleLeanEnvelope: the outputSchema of an envelope tool requires
	// tier, repoPath or source at the envelope level; lean results leave
	// them out (only referenceOutputSchema may require them).
	RuleLeanEnvelope = "lean-envelope"
	// RulePathMark: an input argument that looks like a filesystem path (by
	// its name — path, paths, cwd, dir, worktree, repoPath, runDir, …Path,
	// …Dir — or its description) has no x-fluxgit-path mark, at any depth;
	// or a mark names an unknown kind, sits on a non-string schema, or
	// appears in an outputSchema. Fragment $defs are held to the same rule.
	// A prompt argument that looks like a path needs a path kind.
	RulePathMark = "path-mark"
	// RuleServedMark: an x-fluxgit-served mark (ServedKeyword) is not
	// false, sits elsewhere than on the schema of a named input property,
	// hides a required property, or appears in an outputSchema; or the
	// inputSchema as served without the marked arguments does not compile.
	RuleServedMark = "served-mark"
	// RulePromptTemplate: a prompt message template does not parse,
	// references something other than a declared argument ({{.name}} or
	// {{$.name}}), fails to execute, or renders no message at all when only
	// the required arguments are given.
	RulePromptTemplate = "prompt-template"
	// RuleComplete: a prompt argument is marked complete: true but the
	// prompt names no provider to answer the completion; or a resource's
	// complete list is set on a fixed uri, or names a variable its
	// uriTemplate does not have.
	RuleComplete = "complete"
)

// ToolNamePattern is the pattern every tool name must match.
const ToolNamePattern = `^[a-z][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)*$`

var toolNameRE = regexp.MustCompile(ToolNamePattern)

// Lint checks one spec tree (the layout Load reads) and returns its findings
// sorted by file, then rule, then message. An empty result means clean.
// knownProviders lists the providers that exist; nil skips the
// provider-unknown rule.
func Lint(fsys fs.FS, knownProviders []string, opts ...LintOption) []Finding {
	l := &linter{fsys: fsys, src: newDocSource(fsys), known: knownProviders}
	for _, o := range opts {
		o(l)
	}
	l.in = newInliner(l.src)
	l.tools()
	l.resources()
	l.views()
	l.prompts()
	l.fragments()
	sort.SliceStable(l.findings, func(i, j int) bool {
		a, b := l.findings[i], l.findings[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Rule != b.Rule {
			return a.Rule < b.Rule
		}
		return a.Message < b.Message
	})
	return l.findings
}

// LintOption adjusts Lint.
type LintOption func(*linter)

// RequireToolsets makes RuleToolsets apply to the tools of providers: the
// built-in ones, whose tools --toolsets must be able to select.
func RequireToolsets(providers []string) LintOption {
	return func(l *linter) { l.toolsetProviders = providers }
}

type linter struct {
	toolsetProviders []string
	fsys             fs.FS
	src              *docSource
	in               *inliner
	known            []string
	findings         []Finding
}

func (l *linter) add(file, rule, format string, args ...any) {
	l.findings = append(l.findings, Finding{File: file, Rule: rule, Message: fmt.Sprintf(format, args...)})
}

func (l *linter) listing(dir string) []string {
	files, err := specFiles(l.fsys, dir)
	if err != nil {
		l.add(dir, RuleParse, "cannot list directory: %v", err)
	}
	return files
}

func (l *linter) knownProvider(p string) bool {
	if l.known == nil || p == "" {
		return true
	}
	for _, k := range l.known {
		if k == p {
			return true
		}
	}
	return false
}

func (l *linter) tools() {
	names := map[string][]string{}
	for _, file := range l.listing("tools") {
		doc, err := l.src.doc(file)
		if err != nil {
			l.add(file, RuleParse, "%v", err)
			continue
		}
		if err := toolMeta.check(doc); err != nil {
			l.add(file, RuleMetaschema, "%v", err)
		}
		o, ok := doc.(*object)
		if !ok {
			continue
		}
		l.tool(file, o)
		if name := o.str("name"); name != "" {
			names[name] = append(names[name], file)
		}
	}
	for name, files := range names {
		for _, f := range files[1:] {
			l.add(f, RuleNameUnique, "tool name %s is already used by %s", name, files[0])
		}
	}
}

func (l *linter) tool(file string, doc *object) {
	name := doc.str("name")
	if name != "" {
		if !toolNameRE.MatchString(name) {
			l.add(file, RuleNamePattern, "tool name %q does not match %s", name, ToolNamePattern)
		}
		if baseName(file) != name+".yaml" {
			l.add(file, RuleFileName, "file of tool %s must be named %s.yaml", name, name)
		}
	}
	if strings.TrimSpace(doc.str("description")) == "" {
		l.add(file, RuleDescription, "tool has no description")
	}
	if sets, _ := doc.get("toolsets"); sets == nil && slices.Contains(l.toolsetProviders, doc.str("provider")) {
		l.add(file, RuleToolsets, "tool names no toolsets: add toolsets: [%s] (one or more of those)", strings.Join(Toolsets, ", "))
	}

	ann := doc.obj("annotations")
	ro, ok := ann.get("readOnlyHint")
	if _, isBool := ro.(bool); !ok || !isBool {
		l.add(file, RuleReadOnlyHint, "annotations.readOnlyHint must be stated explicitly (true or false)")
	}
	if b, _ := ro.(bool); b {
		if _, ok := ann.get("destructiveHint"); ok {
			l.add(file, RuleReadOnlyDestructive, "read-only tool must not set annotations.destructiveHint")
		}
	}
	if b, isBool := ro.(bool); isBool {
		l.audit(file, doc, b) // without a stated class, read-only-hint reports
	}
	if p := doc.str("provider"); !l.knownProvider(p) {
		l.add(file, RuleProviderUnknown, "provider %q is not one of %s", p, strings.Join(l.known, ", "))
	}

	// Schemas: inline, compile, then the structural rules on the inlined form.
	t := &Tool{Name: name, File: file}
	var input, output any
	// The rules walk the expanded form, in which a schema's own $defs are
	// substituted where they are referenced; the served form is compiled.
	if _, ok := doc.get("inputSchema"); ok {
		_, v, err := inlineInto(l.in, file, "inputSchema", &t.InputSchema)
		input = l.compiled(file, "inputSchema", v, err, func() error { _, _, err := t.in.get("mem:///lint/input.json", t.InputSchema); return err })
	}
	if _, ok := doc.get("outputSchema"); ok {
		_, v, err := inlineInto(l.in, file, "outputSchema", &t.OutputSchema)
		output = l.compiled(file, "outputSchema", v, err, func() error { _, _, err := t.out.get("mem:///lint/output.json", t.OutputSchema); return err })
	}
	// referenceOutputSchema (the reference's full shape) is held to the
	// same rules as outputSchema, except that it may require the envelope
	// fields the reference always sends.
	var reference any
	_, hasReference := doc.get(referenceOutputKey)
	if hasReference {
		_, v, err := inlineInto(l.in, file, referenceOutputKey, &t.ReferenceOutputSchema)
		reference = l.compiled(file, referenceOutputKey, v, err, func() error {
			_, _, err := t.ref.get("mem:///lint/reference-output.json", t.ReferenceOutputSchema)
			return err
		})
	}
	if in, ok := input.(*object); ok {
		if v, _ := in.get("additionalProperties"); v != false {
			l.add(file, RuleInputClosed, "inputSchema must set additionalProperties: false")
		}
		l.describedProperties(file, in, "arguments")
		l.stringBounds(file, in)
		for _, m := range pathMarkFindings(in) {
			l.add(file, RulePathMark, "%s", m)
		}
		for _, m := range paramHeaderFindings(in) {
			l.add(file, RuleParamHeader, "%s", m)
		}
		l.servedMarks(file, t)
	}
	plain := doc.str("result") == ResultPlain
	for _, s := range []struct {
		key    string
		schema any
	}{{"outputSchema", output}, {referenceOutputKey, reference}} {
		out, ok := s.schema.(*object)
		if !ok {
			continue
		}
		l.describedProperties(file, out, "payload")
		if hasServedMark(out) {
			l.add(file, RuleServedMark, "outputSchema: %s marks input arguments only; remove it", ServedKeyword)
		}
		if hasParamHeader(out) {
			l.add(file, RuleParamHeader, "%s: %s marks input arguments only; remove it", s.key, ParamHeaderKeyword)
		}
		if args := pathArgs(out); len(args) > 0 {
			l.add(file, RulePathMark, "%s: %s marks arguments only; remove it from %s",
				s.key, PathKeyword, strings.Replace(args[0].String(), "arguments", "payload", 1))
		}
		if plain {
			l.plainShape(file, s.key, out)
		} else if s.key == "outputSchema" {
			l.leanEnvelope(file, out)
		}
	}
	l.examples(file, doc, t, input != nil, output != nil, hasReference, reference != nil, plain)
}

// leanEnvelope reports an outputSchema that requires an envelope field
// the lean result shape leaves out (LeanOmits): the host would then fail
// its own results. Only the envelope level is looked at — the root and
// the allOf/anyOf/oneOf/if/then/else variants below it — since data may
// have members of the same names.
func (l *linter) leanEnvelope(file string, out *object) {
	var visit func(s *object)
	visit = func(s *object) {
		for _, k := range stringList(toPlain(s.vals["required"])) {
			if slices.Contains(LeanOmits, k) {
				l.add(file, RuleLeanEnvelope, "outputSchema requires the envelope field %s, which lean results leave out (%s); declare it as optional, or require it in referenceOutputSchema only", k, strings.Join(LeanOmits, ", "))
			}
		}
		for _, k := range []string{"allOf", "anyOf", "oneOf"} {
			list, _ := s.vals[k].([]any)
			for _, m := range list {
				if mo, ok := m.(*object); ok {
					visit(mo)
				}
			}
		}
		for _, k := range []string{"if", "then", "else"} {
			if mo, ok := s.vals[k].(*object); ok {
				visit(mo)
			}
		}
	}
	visit(out)
}

// servedMarks checks the ServedKeyword marks of t's inlined inputSchema
// and that the schema tools/list would serve without the marked arguments
// still compiles (as JSON Schema 2020-12).
func (l *linter) servedMarks(file string, t *Tool) {
	v, err := parseJSON(t.InputSchema)
	if err != nil || !hasServedMark(v) {
		return
	}
	for _, m := range servedMarkFindings(v) {
		l.add(file, RuleServedMark, "inputSchema: %s", m)
	}
	served, err := marshal(servedSchema(v, true))
	if err == nil {
		_, _, err = compileJSON("mem:///lint/served-input.json", served)
	}
	if err != nil {
		l.add(file, RuleServedMark, "inputSchema as served (without the %s: false arguments): %v", ServedKeyword, err)
	}
}

// audit checks the audit field against the tool's read-only class: the
// ledger labels every call from it, so a write tool must say what it is,
// and a read-only tool cannot claim to be a proposal or carry a risk.
func (l *linter) audit(file string, doc *object, readOnly bool) {
	_, stated := doc.get("audit")
	a := auditOf(doc)
	switch {
	case !readOnly && !stated:
		l.add(file, RuleAudit, "tool is not read-only, so it must state audit: {event: %s|%s|%s, risk: %s|%s|%s|%s} (the labels of its audit ledger entries)",
			AuditToolCall, AuditWriteProposal, AuditProposalCancel, RiskNone, RiskLow, RiskMedium, RiskHigh)
	case readOnly && validAudit(a) && (a.Event != AuditToolCall || a.Risk != RiskNone):
		l.add(file, RuleAudit, "read-only tool must have audit event %s and risk %s (or omit audit), not %s/%s",
			AuditToolCall, RiskNone, a.Event, a.Risk)
	}
}

// validAudit reports whether both labels are values the metaschema allows
// (which reports the others).
func validAudit(a Audit) bool {
	switch a.Event {
	case AuditToolCall, AuditWriteProposal, AuditProposalCancel:
	default:
		return false
	}
	switch a.Risk {
	case RiskNone, RiskLow, RiskMedium, RiskHigh:
		return true
	}
	return false
}

// compiled reports inlining and compile errors and returns the inlined
// schema when it compiles.
func (l *linter) compiled(file, which string, v any, inlineErr error, compile func() error) any {
	if inlineErr != nil {
		l.add(file, RuleSchemaCompile, "%s: %v", which, inlineErr)
		return nil
	}
	if err := compile(); err != nil {
		l.add(file, RuleSchemaCompile, "%s: %v", which, err)
		return nil
	}
	return v
}

// examples validates each example: its arguments against inputSchema;
// its payload against referenceOutputSchema when the example says
// shape: reference and the tool has one, against outputSchema otherwise.
// A payload checked against outputSchema of an envelope tool must also
// pass as the lean host sends it (LeanEnvelope), so an example written
// with tier, source and repoPath proves both shapes.
func (l *linter) examples(file string, doc *object, t *Tool, inputOK, outputOK, hasReference, referenceOK, plain bool) {
	list, _ := doc.vals["examples"].([]any)
	for i, e := range list {
		ex, ok := e.(*object)
		if !ok {
			continue // the metaschema reports it
		}
		label := fmt.Sprintf("examples[%d]", i)
		if n := ex.str("name"); n != "" {
			label += " (" + n + ")"
		}
		if args, ok := ex.get("arguments"); ok && inputOK {
			if err := t.ValidateArguments(toPlain(args)); err != nil {
				l.add(file, RuleExampleInvalid, "%s: %v", label, err)
			}
		}
		payload, ok := ex.get("payload")
		if !ok {
			continue
		}
		if ex.str("shape") == ShapeReference && hasReference {
			if referenceOK {
				if err := t.ValidatePayloadFor(toPlain(payload), true); err != nil {
					l.add(file, RuleExampleInvalid, "%s: %s: %v", label, referenceOutputKey, err)
				}
			}
			continue
		}
		if !outputOK {
			continue
		}
		if err := t.ValidatePayload(toPlain(payload)); err != nil {
			l.add(file, RuleExampleInvalid, "%s: %v", label, err)
			continue
		}
		if m, isMap := toPlain(payload).(map[string]any); isMap && !plain {
			if err := t.ValidatePayload(LeanEnvelope(m)); err != nil {
				l.add(file, RuleExampleInvalid, "%s: as a lean result (without %s): %v", label, strings.Join(LeanOmits, ", "), err)
			}
		}
	}
}

// plainShape checks the outputSchema of a result: plain tool: the host
// sends the provider's object as is, so envelope fields there would
// promise data that never arrives, and tool errors arrive as an error
// property the schema must describe.
func (l *linter) plainShape(file, key string, out *object) {
	props := out.obj("properties")
	for _, k := range []string{"tool", "readOnly"} {
		if _, ok := props.get(k); ok {
			l.add(file, RuleResultShape, "%s declares the envelope field %s, but result: plain results carry no envelope", key, k)
		}
	}
	if _, ok := props.get("error"); !ok {
		l.add(file, RuleResultShape, "%s must declare the error property: tool errors of a result: plain tool are sent as {\"error\": {code, message, data}}", key)
	}
}

// describedProperties reports every property, at any depth, without a
// description.
func (l *linter) describedProperties(file string, schema *object, root string) {
	walkSchema(schema, root, func(s any, where string, isProperty bool) {
		if isProperty && !hasDescription(s) {
			l.add(file, RuleDescription, "%s has no description", where)
		}
	})
}

// stringBounds reports input strings without maxLength and required string
// properties without minLength >= 1.
func (l *linter) stringBounds(file string, schema *object) {
	walkSchema(schema, "arguments", func(s any, where string, _ bool) {
		o, ok := s.(*object)
		if !ok {
			return
		}
		if isBoundedString(o) {
			if _, ok := effective(o, "maxLength"); !ok {
				l.add(file, RuleStringBounds, "%s: string has no maxLength", where)
			}
		}
		props := o.obj("properties")
		for _, k := range stringList(toPlain(o.vals["required"])) {
			p, ok := props.get(k)
			po, isObj := p.(*object)
			if !ok || !isObj || !isBoundedString(po) {
				continue
			}
			v, _ := effective(po, "minLength")
			if n, ok := intValue(v); !ok || n < 1 {
				l.add(file, RuleStringBounds, "%s.%s is required, so it needs minLength >= 1", where, k)
			}
		}
	})
}

// isBoundedString reports whether o accepts arbitrary strings, i.e. is typed
// string and is not limited to fixed values by const or enum.
func isBoundedString(o *object) bool {
	t, _ := effective(o, "type")
	isString := t == "string"
	if l, ok := t.([]any); ok {
		for _, e := range l {
			if e == "string" {
				isString = true
			}
		}
	}
	if !isString {
		return false
	}
	_, hasConst := effective(o, "const")
	_, hasEnum := effective(o, "enum")
	return !hasConst && !hasEnum
}

// effective looks a keyword up in s or, failing that, in the members of its
// allOf (which is how a $ref with sibling assertions is inlined).
func effective(s *object, key string) (any, bool) {
	if v, ok := s.get(key); ok {
		return v, true
	}
	all, _ := s.vals["allOf"].([]any)
	for _, m := range all {
		if mo, ok := m.(*object); ok {
			if v, ok := effective(mo, key); ok {
				return v, true
			}
		}
	}
	return nil, false
}

func hasDescription(s any) bool {
	o, ok := s.(*object)
	if !ok {
		return false
	}
	d, _ := effective(o, "description")
	str, _ := d.(string)
	return strings.TrimSpace(str) != ""
}

// walkSchema calls fn for every subschema that describes part of an instance,
// with a path in arguments notation ("arguments.targets[].path"). isProperty
// is true for the values of properties. Negated and conditional-test schemas
// (not, if) and property-name schemas are skipped: they describe no data.
func walkSchema(s any, where string, fn func(s any, where string, isProperty bool)) {
	var walk func(s any, where string, isProperty bool)
	walk = func(s any, where string, isProperty bool) {
		fn(s, where, isProperty)
		o, ok := s.(*object)
		if !ok {
			return
		}
		if props := o.obj("properties"); props != nil {
			for _, k := range props.keys {
				walk(props.vals[k], where+"."+k, true)
			}
		}
		if pp := o.obj("patternProperties"); pp != nil {
			for _, k := range pp.keys {
				walk(pp.vals[k], where+".*", false)
			}
		}
		if ap, ok := o.vals["additionalProperties"].(*object); ok {
			walk(ap, where+".*", false)
		}
		switch items := o.vals["items"].(type) {
		case *object:
			walk(items, where+"[]", false)
		case []any:
			for i, it := range items {
				walk(it, fmt.Sprintf("%s[%d]", where, i), false)
			}
		}
		if pi, ok := o.vals["prefixItems"].([]any); ok {
			for i, it := range pi {
				walk(it, fmt.Sprintf("%s[%d]", where, i), false)
			}
		}
		for _, k := range []string{"allOf", "anyOf", "oneOf"} {
			if l, ok := o.vals[k].([]any); ok {
				for _, m := range l {
					walk(m, where, false)
				}
			}
		}
		for _, k := range []string{"then", "else"} {
			if m, ok := o.vals[k].(*object); ok {
				walk(m, where, false)
			}
		}
		if ds := o.obj("dependentSchemas"); ds != nil {
			for _, k := range ds.keys {
				walk(ds.vals[k], where, false)
			}
		}
	}
	walk(s, where, false)
}

func (l *linter) resources() {
	uris := map[string][]string{}
	for _, file := range l.listing("resources") {
		doc, err := l.src.doc(file)
		if err != nil {
			l.add(file, RuleParse, "%v", err)
			continue
		}
		if err := resourceMeta.check(doc); err != nil {
			l.add(file, RuleMetaschema, "%v", err)
		}
		o, ok := doc.(*object)
		if !ok {
			continue
		}
		r := buildResource(file, o)
		if strings.TrimSpace(r.Description) == "" {
			l.add(file, RuleDescription, "resource has no description")
		}
		if !l.knownProvider(r.Provider) {
			l.add(file, RuleProviderUnknown, "provider %q is not one of %s", r.Provider, strings.Join(l.known, ", "))
		}
		l.resourceComplete(file, r)
		if r.URI != "" || r.URITemplate != "" {
			key := resourceKey(r)
			uris[key] = append(uris[key], file)
		}
	}
	for key, files := range uris {
		for _, f := range files[1:] {
			l.add(f, RuleNameUnique, "resource %s is already defined by %s", key, files[0])
		}
	}
}

// fragments reports fragment files that do not parse (tools referring to
// them also get schema-compile findings).
func (l *linter) fragments() {
	err := fs.WalkDir(l.fsys, "fragments", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !(strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml") || strings.HasSuffix(p, ".json")) {
			return nil
		}
		doc, err := l.src.doc(p)
		if err != nil {
			l.add(p, RuleParse, "%v", err)
			return nil
		}
		l.fragmentPathMarks(p, doc)
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		l.add("fragments", RuleParse, "cannot list directory: %v", err)
	}
}

// fragmentPathMarks checks the marks a fragment's $defs carry (known kind,
// string schema) at their source, where most path arguments get their mark.
func (l *linter) fragmentPathMarks(file string, doc any) {
	defs := func() *object { o, _ := doc.(*object); return o.obj("$defs") }()
	if defs == nil {
		return
	}
	for _, k := range defs.keys {
		wrapper := newObject(1)
		props := newObject(1)
		props.set(k, defs.vals[k])
		wrapper.set("properties", props)
		for _, m := range pathMarkFindings(wrapper) {
			if strings.Contains(m, "has no "+PathKeyword+" mark") {
				// A fragment may describe output too; a missing mark is
				// reported on each tool whose inputSchema uses it.
				continue
			}
			l.add(file, RulePathMark, "%s", strings.Replace(m, "arguments."+k, "$defs/"+k, 1))
		}
	}
}
