// Package catalog turns fluxgit's spec tree (tool, resource and prompt files
// kept as data, see package spec) into the catalog the host serves.
//
// Load reads one or more spec layers, checks every file against its
// metaschema (package schemas), inlines every $ref to the spec's files so
// that each tool's inputSchema and outputSchema is self-contained JSON a
// client can use as is (a schema's own $defs are kept, as written),
// and returns the tools in listing order. Schemas are compiled with
// santhosh-tekuri/jsonschema (draft 2020-12, offline) lazily, on the first
// ValidateArguments or ValidatePayload call of each tool, so that answering
// tools/list never pays for compilation.
//
// Lint applies the stricter authoring rules behind `fluxgit spec lint`.
package catalog

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/fluxgit/fluxgit/spec"
)

// Annotations are the MCP tool annotations of a tool. A nil field was not
// stated in the spec file and is omitted from tools/list.
type Annotations struct {
	ReadOnlyHint    *bool `json:"readOnlyHint,omitempty"`
	DestructiveHint *bool `json:"destructiveHint,omitempty"`
	IdempotentHint  *bool `json:"idempotentHint,omitempty"`
	OpenWorldHint   *bool `json:"openWorldHint,omitempty"`
}

// Audit labels of a tool spec (its audit field): what the audit ledger
// writes as event_type and risk for a call of the tool.
const (
	AuditToolCall       = "tool_call"
	AuditWriteProposal  = "write_proposal"
	AuditProposalCancel = "proposal_cancel"

	RiskNone   = "none"
	RiskLow    = "low"
	RiskMedium = "medium"
	RiskHigh   = "high"
)

// Audit is the spec's audit field. The ledger takes a call's labels from
// here, so a new tool brings its own risk instead of needing a table in
// Go. A tool whose spec omits the field gets DefaultAudit (lint requires
// the field on every tool that is not read-only).
type Audit struct {
	Event string `json:"event"`
	Risk  string `json:"risk"`
}

// DefaultAudit labels a tool whose spec states no audit field: a plain
// tool call with no risk, which is what a read-only tool is.
var DefaultAudit = Audit{Event: AuditToolCall, Risk: RiskNone}

// Tool is one tool of the catalog. A Tool must not be copied after first use
// (it holds the lazily compiled schemas); share *Tool.
type Tool struct {
	Name        string
	Title       string
	Description string
	Provider    string // provider process that executes the tool, e.g. "git-read"
	Tier        string // free | hybrid | fluxgit | fluxgit-write-handshake
	// Toolsets are the spec's toolsets (see Toolsets), in file order.
	Toolsets []string `json:",omitempty"`
	File     string   // spec file, relative to its layer root, e.g. "tools/repo.status.yaml"
	// Order is the listing position from the spec (>= 1), or 0 when the spec
	// gives none; unordered tools are listed after ordered ones.
	Order       int
	Annotations Annotations
	// ReadOnly is true when annotations.readOnlyHint is explicitly true.
	ReadOnly bool
	// Audit is the spec's audit field, DefaultAudit when the spec has none.
	Audit Audit
	// UI is the spec's ui field as compact JSON (resourceUri, visibility):
	// the tool's MCP Apps view, served as _meta.ui only to clients that
	// declare the io.modelcontextprotocol/ui extension. Empty: no view.
	UI json.RawMessage `json:",omitempty"`
	// InputSchema and OutputSchema are compact JSON with every $ref inlined
	// (no $ref, no $defs), in the key order of the spec file, ready to be
	// sent in tools/list; InputSchema as served leaves the informational
	// arguments out (ServedKeyword, see SpecInputSchema). A schema that declares its own $defs keeps them
	// and its #/$defs/... refs as written (see inline.go).
	InputSchema  json.RawMessage
	OutputSchema json.RawMessage
	// ReferenceOutputSchema is the spec's referenceOutputSchema (inlined
	// like OutputSchema): the reference's full result shape, which
	// tools/list serves and results are validated against when
	// FLUXGIT_MCP_RESULT_SHAPE=reference. OutputSchema is then the lean
	// shape. Empty when the tool has one shape for both modes.
	ReferenceOutputSchema json.RawMessage `json:",omitempty"`
	// SpecInputSchema is the full input schema of the spec when the served
	// InputSchema leaves arguments out (ServedKeyword); the host validates
	// calls against it. Empty when the two are the same.
	SpecInputSchema json.RawMessage `json:",omitempty"`
	// Paths are the arguments marked with PathKeyword (which InputSchema,
	// as served, no longer carries): the host canonicalises and confines
	// each of them before dispatch.
	Paths []PathArg `json:",omitempty"`
	// Result is the spec's result field: ResultPlain, or empty for the
	// default ResultEnvelope (omitted from the bundle so envelope tools
	// need no entry).
	Result string `json:",omitempty"`
	// TaskSupport is the spec's taskSupport: TaskOptional, TaskRequired,
	// or empty for forbidden (omitted from the bundle like Result).
	TaskSupport string `json:",omitempty"`
	// TaskKeeper is the spec's taskKeeper: TaskKeeperProvider, or empty
	// when the host keeps the tool's tasks.
	TaskKeeper string `json:",omitempty"`

	in, out, ref lazySchema
}

// OutputSchemaFor is the output schema in effect for a result shape: the
// referenceOutputSchema in reference mode when the spec has one, the
// outputSchema otherwise.
func (t *Tool) OutputSchemaFor(reference bool) json.RawMessage {
	if reference && len(t.ReferenceOutputSchema) > 0 {
		return t.ReferenceOutputSchema
	}
	return t.OutputSchema
}

// referenceOutputKey is the tool spec key of the reference's result shape
// (see Tool.ReferenceOutputSchema).
const referenceOutputKey = "referenceOutputSchema"

// Result shapes a tool spec can ask for.
const (
	// ResultEnvelope (the default) wraps the provider's data or error in
	// the FluxGit envelope (tool, readOnly, source, data | error) and
	// sends that envelope as structuredContent and as the first text item.
	ResultEnvelope = "envelope"
	// ResultPlain sends the provider's data itself as structuredContent
	// (an error as {"error": {code, message, data}}) and the provider's
	// text alone as the text content, for tools that keep the result
	// shape of the server they reimplement.
	ResultPlain = "plain"
)

// Task support levels and keepers a tool spec can name (taskSupport,
// taskKeeper); see schemas/tool.schema.json.
const (
	TaskForbidden      = "forbidden"
	TaskOptional       = "optional"
	TaskRequired       = "required"
	TaskKeeperProvider = "provider"
)

// Tasks reports whether a call of the tool may run as a task.
func (t *Tool) Tasks() bool { return t.TaskSupport == TaskOptional || t.TaskSupport == TaskRequired }

// HostTasks reports whether the host itself runs the tool's task calls
// in the background (rather than relaying the provider's own tasks).
func (t *Tool) HostTasks() bool { return t.Tasks() && t.TaskKeeper != TaskKeeperProvider }

// Plain reports whether the tool's results skip the envelope.
func (t *Tool) Plain() bool { return t.Result == ResultPlain }

// Resource is one resource (URI set) or resource template (URITemplate set).
type Resource struct {
	URI         string
	URITemplate string
	Name        string
	Title       string
	Description string
	MimeType    string
	Provider    string
	File        string // spec file, relative to its layer root
	// Complete lists the variables of URITemplate whose values the
	// provider completes (completion/complete with ref/resource).
	Complete []string `json:",omitempty"`
	// UI is the spec's ui field as compact JSON ("{}" when it has no
	// members): the resource belongs to an MCP Apps view, so it is listed
	// only to clients that declare the io.modelcontextprotocol/ui
	// extension, and a non-empty UI is sent as _meta.ui. Empty: an
	// ordinary resource.
	UI json.RawMessage `json:",omitempty"`
}

// AppOnly reports whether r belongs to an MCP Apps view (its spec has a ui
// field).
func (r *Resource) AppOnly() bool { return len(r.UI) > 0 }

// Completable reports whether the provider completes the template variable
// arg.
func (r *Resource) Completable(arg string) bool {
	for _, c := range r.Complete {
		if c == arg {
			return true
		}
	}
	return false
}

// Catalog is the merged result of all spec layers.
type Catalog struct {
	// Tools in listing order: read-only tools first, then by Order (tools
	// without an order last), then by Name.
	Tools []*Tool
	// Resources with a fixed URI, sorted by URI.
	Resources []*Resource
	// Templates are resources with a URITemplate, sorted by URITemplate.
	Templates []*Resource
	// Prompts sorted by Name.
	Prompts []*Prompt

	byName       map[string]*Tool
	promptByName map[string]*Prompt
}

// Tool returns the tool called name.
func (c *Catalog) Tool(name string) (*Tool, bool) {
	if c.byName != nil {
		t, ok := c.byName[name]
		return t, ok
	}
	for _, t := range c.Tools {
		if t.Name == name {
			return t, true
		}
	}
	return nil, false
}

// Prompt returns the prompt called name.
func (c *Catalog) Prompt(name string) (*Prompt, bool) {
	if c.promptByName != nil {
		p, ok := c.promptByName[name]
		return p, ok
	}
	for _, p := range c.Prompts {
		if p.Name == name {
			return p, true
		}
	}
	return nil, false
}

// Template returns the resource template whose URITemplate is exactly
// uriTemplate (what completion/complete names in ref/resource).
func (c *Catalog) Template(uriTemplate string) (*Resource, bool) {
	i := sort.Search(len(c.Templates), func(i int) bool { return c.Templates[i].URITemplate >= uriTemplate })
	if i < len(c.Templates) && c.Templates[i].URITemplate == uriTemplate {
		return c.Templates[i], true
	}
	for _, r := range c.Templates { // a hand-built, unsorted catalog
		if r.URITemplate == uriTemplate {
			return r, true
		}
	}
	return nil, false
}

// Restrict removes, in place, every tool for which keep returns false (for
// example tools whose provider is not installed), preserving listing order.
// Prompts follow their provider: a prompt is removed when keep refuses a
// stand-in tool that carries only the prompt's Provider (and File), which is
// what a filter by provider — the use Restrict exists for — decides on. Use
// RestrictPrompts to filter prompts by other criteria. Resources are not
// affected.
func (c *Catalog) Restrict(keep func(*Tool) bool) {
	kept := c.Tools[:0]
	for _, t := range c.Tools {
		if keep(t) {
			kept = append(kept, t)
		} else if c.byName != nil {
			delete(c.byName, t.Name)
		}
	}
	clear(c.Tools[len(kept):])
	c.Tools = kept
	c.RestrictPrompts(func(p *Prompt) bool { return keep(&Tool{Provider: p.Provider, File: p.File}) })
}

// RestrictPrompts removes, in place, every prompt for which keep returns
// false, preserving name order.
func (c *Catalog) RestrictPrompts(keep func(*Prompt) bool) {
	kept := c.Prompts[:0]
	for _, p := range c.Prompts {
		if keep(p) {
			kept = append(kept, p)
		} else if c.promptByName != nil {
			delete(c.promptByName, p.Name)
		}
	}
	clear(c.Prompts[len(kept):])
	c.Prompts = kept
}

// Providers returns the sorted, de-duplicated providers named by the tools,
// resources, templates and prompts of the catalog.
func (c *Catalog) Providers() []string {
	seen := map[string]bool{}
	var out []string
	add := func(p string) {
		if p != "" && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, t := range c.Tools {
		add(t.Provider)
	}
	for _, r := range c.Resources {
		add(r.Provider)
	}
	for _, r := range c.Templates {
		add(r.Provider)
	}
	for _, p := range c.Prompts {
		add(p.Provider)
	}
	sort.Strings(out)
	return out
}

// Load builds the catalog from spec layers. Each layer is the root of a spec
// tree (tools/, fragments/, resources/, prompts/; any of them may be
// missing). With no layers, the embedded spec.FS is loaded.
//
// A tool or prompt in a later layer replaces the tool or prompt of the same
// name from earlier layers; a resource replaces the one with the same URI or
// URI template.
// $refs resolve within the layer of the referring file. Every file must
// match its metaschema and every $ref must resolve without cycles; all
// problems found are returned together. Load does not apply the authoring
// rules of Lint and does not compile the schemas.
func Load(layers ...fs.FS) (*Catalog, error) {
	if len(layers) == 0 {
		layers = []fs.FS{spec.FS}
	}
	tools := map[string]*Tool{}
	resources := map[string]*Resource{}
	prompts := map[string]*Prompt{}
	var errs []error
	for i, layer := range layers {
		l, err := loadLayerFast(layer)
		if err != nil {
			errs = append(errs, fmt.Errorf("spec layer %d: %w", i, err))
			continue
		}
		for _, t := range l.Tools {
			tools[t.Name] = t
		}
		for _, r := range l.Resources {
			resources[resourceKey(r)] = r
		}
		for _, p := range l.Prompts {
			prompts[p.Name] = p
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}

	c := &Catalog{byName: make(map[string]*Tool, len(tools))}
	for _, t := range tools {
		c.Tools = append(c.Tools, t)
		c.byName[t.Name] = t
	}
	sort.Slice(c.Tools, func(i, j int) bool { return toolLess(c.Tools[i], c.Tools[j]) })
	for _, r := range resources {
		if r.URITemplate != "" {
			c.Templates = append(c.Templates, r)
		} else {
			c.Resources = append(c.Resources, r)
		}
	}
	sort.Slice(c.Resources, func(i, j int) bool { return c.Resources[i].URI < c.Resources[j].URI })
	sort.Slice(c.Templates, func(i, j int) bool { return c.Templates[i].URITemplate < c.Templates[j].URITemplate })
	c.promptByName = make(map[string]*Prompt, len(prompts))
	for _, p := range prompts {
		c.Prompts = append(c.Prompts, p)
		c.promptByName[p.Name] = p
	}
	sort.Slice(c.Prompts, func(i, j int) bool { return c.Prompts[i].Name < c.Prompts[j].Name })
	return c, nil
}

func toolLess(a, b *Tool) bool {
	if a.ReadOnly != b.ReadOnly {
		return a.ReadOnly
	}
	if (a.Order > 0) != (b.Order > 0) {
		return a.Order > 0
	}
	if a.Order != b.Order {
		return a.Order < b.Order
	}
	return a.Name < b.Name
}

func resourceKey(r *Resource) string {
	if r.URITemplate != "" {
		return "template " + r.URITemplate
	}
	return "uri " + r.URI
}

// loadLayer loads the tools, resources and prompts of one spec tree (the
// result has no Digest).
func loadLayer(fsys fs.FS) (*bundle, error) {
	src := newDocSource(fsys)
	in := newInliner(src)
	var errs []error
	fail := func(file string, err error) { errs = append(errs, fmt.Errorf("%s: %w", file, err)) }

	toolFiles, err := specFiles(fsys, "tools")
	if err != nil {
		return nil, err
	}
	resFiles, err := specFiles(fsys, "resources")
	if err != nil {
		return nil, err
	}
	fragFiles, err := specFiles(fsys, "fragments")
	if err != nil {
		return nil, err
	}
	promptFiles, err := specFiles(fsys, "prompts")
	if err != nil {
		return nil, err
	}
	src.prefetch(append(append(append(append([]string{}, toolFiles...), resFiles...), fragFiles...), promptFiles...))

	var tools []*Tool
	seen := map[string]string{}
	for _, file := range toolFiles {
		doc, err := src.doc(file)
		if err != nil {
			fail(file, err)
			continue
		}
		if err := toolMeta.check(doc); err != nil {
			fail(file, err)
			continue
		}
		t, inErr, outErr := buildTool(file, doc.(*object), in)
		if inErr != nil || outErr != nil {
			fail(file, errors.Join(inErr, outErr))
			continue
		}
		if prev, dup := seen[t.Name]; dup {
			fail(file, fmt.Errorf("tool %s is also defined in %s", t.Name, prev))
			continue
		}
		seen[t.Name] = file
		tools = append(tools, t)
	}

	var resources []*Resource
	seenRes := map[string]string{}
	for _, file := range resFiles {
		doc, err := src.doc(file)
		if err != nil {
			fail(file, err)
			continue
		}
		if err := resourceMeta.check(doc); err != nil {
			fail(file, err)
			continue
		}
		r := buildResource(file, doc.(*object))
		key := resourceKey(r)
		if prev, dup := seenRes[key]; dup {
			fail(file, fmt.Errorf("resource %s is also defined in %s", key, prev))
			continue
		}
		seenRes[key] = file
		resources = append(resources, r)
	}

	var prompts []*Prompt
	seenPrompt := map[string]string{}
	for _, file := range promptFiles {
		doc, err := src.doc(file)
		if err != nil {
			fail(file, err)
			continue
		}
		if err := promptMeta.check(doc); err != nil {
			fail(file, err)
			continue
		}
		p, err := buildPrompt(file, doc.(*object))
		if err != nil {
			fail(file, err)
			continue
		}
		if prev, dup := seenPrompt[p.Name]; dup {
			fail(file, fmt.Errorf("prompt %s is also defined in %s", p.Name, prev))
			continue
		}
		seenPrompt[p.Name] = file
		prompts = append(prompts, p)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return &bundle{Tools: tools, Resources: resources, Prompts: prompts}, nil
}

// specFiles lists the *.yaml and *.yml files below dir (recursively), sorted.
// A missing dir is an empty list.
func specFiles(fsys fs.FS, dir string) ([]string, error) {
	var files []string
	err := fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == dir && errors.Is(err, fs.ErrNotExist) {
				return fs.SkipDir
			}
			return err
		}
		if !d.IsDir() && (strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml")) {
			files = append(files, p)
		}
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	sort.Strings(files)
	return files, nil
}

// buildTool fills a Tool from a parsed tool file and inlines its schemas.
// Errors from inlining the input and output schema are returned separately.
func buildTool(file string, doc *object, in *inliner) (t *Tool, inErr, outErr error) {
	t = &Tool{
		Name:        doc.str("name"),
		Title:       doc.str("title"),
		Description: doc.str("description"),
		Provider:    doc.str("provider"),
		Tier:        doc.str("tier"),
		File:        file,
	}
	if sets, ok := doc.vals["toolsets"].([]any); ok {
		for _, v := range sets {
			if s, ok := v.(string); ok {
				t.Toolsets = append(t.Toolsets, s)
			}
		}
	}
	if doc.str("result") == ResultPlain {
		t.Result = ResultPlain
	}
	if ts := doc.str("taskSupport"); ts == TaskOptional || ts == TaskRequired {
		t.TaskSupport = ts
	}
	if doc.str("taskKeeper") == TaskKeeperProvider {
		t.TaskKeeper = TaskKeeperProvider
	}
	if n, ok := intValue(doc.vals["order"]); ok {
		t.Order = n
	}
	a := doc.obj("annotations")
	t.Annotations = Annotations{
		ReadOnlyHint:    boolPtr(a, "readOnlyHint"),
		DestructiveHint: boolPtr(a, "destructiveHint"),
		IdempotentHint:  boolPtr(a, "idempotentHint"),
		OpenWorldHint:   boolPtr(a, "openWorldHint"),
	}
	t.ReadOnly = t.Annotations.ReadOnlyHint != nil && *t.Annotations.ReadOnlyHint
	t.Audit = auditOf(doc)
	t.UI = uiField(doc)
	if served, expanded, err := inlineInto(in, file, "inputSchema", &t.InputSchema); err != nil {
		inErr = fmt.Errorf("inputSchema: %w", err)
	} else if inErr = t.servePathMarks(served, expanded); inErr != nil {
		inErr = fmt.Errorf("inputSchema: %w", inErr)
	} else if inErr = t.serveInformational(); inErr != nil {
		inErr = fmt.Errorf("inputSchema: %w", inErr)
	}
	if _, _, outErr = inlineInto(in, file, "outputSchema", &t.OutputSchema); outErr != nil {
		outErr = fmt.Errorf("outputSchema: %w", outErr)
	}
	if _, ok := doc.get(referenceOutputKey); ok {
		if _, _, err := inlineInto(in, file, referenceOutputKey, &t.ReferenceOutputSchema); err != nil {
			outErr = errors.Join(outErr, fmt.Errorf("%s: %w", referenceOutputKey, err))
		}
	}
	return t, inErr, outErr
}

// servePathMarks records the PathKeyword marks of the input schema in
// t.Paths and re-renders t.InputSchema without them: clients ignore
// unknown keywords, so serving them would only make tools/list larger.
// Marks are found in expanded (every local ref replaced by its target), so
// an argument described in the schema's own $defs is confined too; they
// are stripped from served, $defs included.
//
// A path-like argument without a mark (or with a bad one) fails the load:
// the host confines paths by their marks only, so an unmarked path would
// reach the provider unconfined.
func (t *Tool) servePathMarks(served, expanded any) error {
	if problems := pathMarkFindings(expanded); len(problems) > 0 {
		return fmt.Errorf("path arguments must be marked (fluxgit spec lint, rule %s): %s", RulePathMark, strings.Join(problems, "; "))
	}
	t.Paths = pathArgs(expanded)
	stripped := stripPathMarks(served)
	if sameValue(stripped, served) {
		return nil
	}
	b, err := marshal(stripped)
	if err != nil {
		return err
	}
	t.InputSchema = b
	return nil
}

// inlineInto serves the schema under key of file into dst and returns it
// as served and as expanded (see inlineSchema).
func inlineInto(in *inliner, file, key string, dst *json.RawMessage) (served, expanded any, err error) {
	served, expanded, raw, err := inlineSchema(in, file, "/"+escapeToken(key))
	if err != nil {
		return nil, nil, err
	}
	*dst = raw
	return served, expanded, nil
}

// auditOf reads the audit field of a tool file; fields it lacks take
// DefaultAudit's values (the metaschema requires both when it is present).
func auditOf(doc *object) Audit {
	a := DefaultAudit
	o := doc.obj("audit")
	if e := o.str("event"); e != "" {
		a.Event = e
	}
	if r := o.str("risk"); r != "" {
		a.Risk = r
	}
	return a
}

func buildResource(file string, doc *object) *Resource {
	r := &Resource{
		URI:         doc.str("uri"),
		URITemplate: doc.str("uriTemplate"),
		Name:        doc.str("name"),
		Title:       doc.str("title"),
		Description: doc.str("description"),
		MimeType:    doc.str("mimeType"),
		Provider:    doc.str("provider"),
		File:        file,
	}
	if l := stringList(toPlain(doc.vals["complete"])); len(l) > 0 {
		r.Complete = l
	}
	r.UI = uiField(doc)
	return r
}

// uiField is the ui field of a tool or resource file as compact JSON, in
// file key order; nil when the file has none.
func uiField(doc *object) json.RawMessage {
	v, ok := doc.get("ui")
	if !ok {
		return nil
	}
	b, err := marshal(v)
	if err != nil {
		return nil // the metaschema admitted it, so it is plain JSON data
	}
	return b
}

func boolPtr(o *object, key string) *bool {
	v, ok := o.get(key)
	if !ok {
		return nil
	}
	b, ok := v.(bool)
	if !ok {
		return nil
	}
	return &b
}

func intValue(v any) (int, bool) {
	switch t := v.(type) {
	case int64:
		return int(t), true
	case json.Number:
		n, err := strconv.Atoi(t.String())
		return n, err == nil
	case float64:
		if t == float64(int(t)) {
			return int(t), true
		}
	}
	return 0, false
}

// baseName is the file name of a slash path.
func baseName(p string) string { return path.Base(p) }
