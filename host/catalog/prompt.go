package catalog

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"text/template"
	"unicode/utf8"
)

// PromptNamePattern is the pattern every prompt name must match: prompts are
// conventionally snake_case (review_branch), unlike dotted tool names.
const PromptNamePattern = `^[a-z][a-z0-9_]*$`

// PromptArgumentMaxBytes bounds every prompt argument value. Prompt
// arguments are short (a path, a branch name); the bound keeps a client from
// making the host render megabytes into a message.
const PromptArgumentMaxBytes = 4096

// Message roles of a prompt.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// PromptPathKinds are the PathKinds a prompt argument may carry in its path
// field. runDir is left out: no prompt works on the FluxGit run directory.
var PromptPathKinds = []string{PathRepository, PathDirectory, PathFile, PathRelative, PathNone}

func validPromptPathKind(k string) bool {
	for _, v := range PromptPathKinds {
		if v == k {
			return true
		}
	}
	return false
}

// PromptArgument is one argument of a prompt. Every value is a string (MCP
// prompts/get sends {name: string}).
type PromptArgument struct {
	Name        string
	Title       string `json:",omitempty"`
	Description string
	// Required arguments must be present and non-empty in prompts/get.
	Required bool
	// Path is one of PromptPathKinds when the value is a filesystem path:
	// the host canonicalises and confines it as it does the x-fluxgit-path
	// marks of tool arguments (see PathMarks).
	Path string `json:",omitempty"`
	// Complete is true when the owning provider answers completion/complete
	// for this argument.
	Complete bool `json:",omitempty"`
}

// PromptMessage is one message of a prompt: in a Prompt's Messages, Text is
// a text/template; in the result of Render, it is the rendered text.
type PromptMessage struct {
	Role string
	Text string
}

// Prompt is one prompt of the catalog. A Prompt must not be copied after
// first use (it holds the lazily parsed templates); share *Prompt.
type Prompt struct {
	Name        string
	Title       string
	Description string
	// Provider owns the prompt: it completes the arguments marked Complete
	// and renders the prompt when Messages is empty.
	Provider  string
	File      string           // spec file, relative to its layer root, e.g. "prompts/review_branch.yaml"
	Arguments []PromptArgument `json:",omitempty"`
	// Messages are the templates the host renders; empty for prompts the
	// provider renders.
	Messages []PromptMessage `json:",omitempty"`

	tmpl struct {
		once sync.Once
		list []*template.Template
		err  error
	}
}

// HostRendered reports whether the host renders the prompt from its
// Messages (otherwise prompts/get is forwarded to the provider).
func (p *Prompt) HostRendered() bool { return len(p.Messages) > 0 }

// Argument returns the declared argument called name.
func (p *Prompt) Argument(name string) (PromptArgument, bool) {
	for _, a := range p.Arguments {
		if a.Name == name {
			return a, true
		}
	}
	return PromptArgument{}, false
}

// Completable reports whether the owning provider completes argument arg
// (completion/complete with ref/prompt is routed to it only then).
func (p *Prompt) Completable(arg string) bool {
	a, ok := p.Argument(arg)
	return ok && a.Complete
}

// PathArgs maps each path argument's name to its kind (one of
// PromptPathKinds).
func (p *Prompt) PathArgs() map[string]string {
	out := map[string]string{}
	for _, a := range p.Arguments {
		if a.Path != "" {
			out[a.Name] = a.Path
		}
	}
	return out
}

// PathMarks returns the path arguments in declaration order in the form
// Tool.Paths uses, so the confinement written for tool arguments (which
// walks a map[string]any by PathArg pointers) applies unchanged.
func (p *Prompt) PathMarks() []PathArg {
	var out []PathArg
	for _, a := range p.Arguments {
		if a.Path != "" {
			out = append(out, PathArg{Pointer: []string{"." + a.Name}, Kind: a.Path})
		}
	}
	return out
}

func (p *Prompt) argumentNames() []string {
	names := make([]string, len(p.Arguments))
	for i, a := range p.Arguments {
		names[i] = a.Name
	}
	return names
}

// ValidateArguments checks prompts/get arguments: only declared names, every
// required one present and non-empty, every value valid UTF-8 and at most
// PromptArgumentMaxBytes long. A failure is a *ValidationError whose Details
// lists every problem at once ("; "-separated), each rooted at "arguments"
// and saying what to send instead, so a model can fix all of them in one
// retry.
func (p *Prompt) ValidateArguments(args map[string]string) error {
	var problems []string
	var unknown []string
	for k := range args {
		if _, ok := p.Argument(k); !ok {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	for _, k := range unknown {
		if len(p.Arguments) == 0 {
			problems = append(problems, fmt.Sprintf("arguments.%s is not allowed: prompt %s takes no arguments", k, p.Name))
			continue
		}
		problems = append(problems, fmt.Sprintf("arguments.%s is not allowed: prompt %s takes %s", k, p.Name, strings.Join(p.argumentNames(), ", ")))
	}
	for _, a := range p.Arguments {
		v, ok := args[a.Name]
		switch {
		case a.Required && !ok:
			problems = append(problems, fmt.Sprintf("arguments.%s is required: %s", a.Name, a.Description))
		case a.Required && v == "":
			problems = append(problems, fmt.Sprintf("arguments.%s must not be empty: %s", a.Name, a.Description))
		case !utf8.ValidString(v):
			problems = append(problems, fmt.Sprintf("arguments.%s must be valid UTF-8", a.Name))
		case len(v) > PromptArgumentMaxBytes:
			problems = append(problems, fmt.Sprintf("arguments.%s is %d bytes long; at most %d are allowed", a.Name, len(v), PromptArgumentMaxBytes))
		}
	}
	if len(problems) == 0 {
		return nil
	}
	return &ValidationError{Details: strings.Join(problems, "; ")}
}

// ErrProviderRendered is returned by Render for a prompt without Messages:
// its provider renders it.
var ErrProviderRendered = errors.New("catalog: prompt is rendered by its provider")

// Render validates args (see ValidateArguments) and executes the message
// templates over them. Declared arguments that are absent render as empty
// strings, so {{if .base}} tests for presence. Surrounding white space is
// trimmed, and a message that renders empty is left out (a whole message can
// be conditional). A failure to execute is an error of the spec, which
// `fluxgit spec lint` checks for.
func (p *Prompt) Render(args map[string]string) ([]PromptMessage, error) {
	if !p.HostRendered() {
		return nil, fmt.Errorf("%w: prompt %s, provider %s", ErrProviderRendered, p.Name, p.Provider)
	}
	if err := p.ValidateArguments(args); err != nil {
		return nil, err
	}
	return p.render(args)
}

// render executes the templates without validating args.
func (p *Prompt) render(args map[string]string) ([]PromptMessage, error) {
	tmpls, err := p.templates()
	if err != nil {
		return nil, err
	}
	data := make(map[string]string, len(p.Arguments))
	for _, a := range p.Arguments {
		data[a.Name] = args[a.Name]
	}
	out := make([]PromptMessage, 0, len(tmpls))
	var b strings.Builder
	for i, t := range tmpls {
		b.Reset()
		if err := t.Execute(&b, data); err != nil {
			return nil, fmt.Errorf("catalog: prompt %s: messages[%d]: %w", p.Name, i, err)
		}
		if text := strings.TrimSpace(b.String()); text != "" {
			out = append(out, PromptMessage{Role: p.Messages[i].Role, Text: text})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("catalog: prompt %s: every message rendered empty", p.Name)
	}
	return out, nil
}

// templates parses the message templates once.
func (p *Prompt) templates() ([]*template.Template, error) {
	p.tmpl.once.Do(func() {
		for i, m := range p.Messages {
			t, err := parsePromptTemplate(fmt.Sprintf("%s messages[%d]", p.Name, i), m.Text)
			if err != nil {
				p.tmpl.err = fmt.Errorf("catalog: prompt %s: messages[%d]: %w", p.Name, i, err)
				p.tmpl.list = nil
				return
			}
			p.tmpl.list = append(p.tmpl.list, t)
		}
	})
	return p.tmpl.list, p.tmpl.err
}

// parsePromptTemplate parses one message template. missingkey=zero makes a
// name that is not in the argument map render as "" instead of "<no value>".
func parsePromptTemplate(name, text string) (*template.Template, error) {
	return template.New(name).Option("missingkey=zero").Parse(text)
}

// buildPrompt fills a Prompt from a parsed prompt file that matched the
// metaschema. It fails when a path-like argument has no path kind (the host
// confines by the kind only, so an unmarked path would reach the provider
// unconfined) or a template does not parse.
func buildPrompt(file string, doc *object) (*Prompt, error) {
	p := promptFromDoc(file, doc)
	if problems := promptPathFindings(p); len(problems) > 0 {
		return nil, fmt.Errorf("path arguments must be marked (fluxgit spec lint, rule %s): %s", RulePathMark, strings.Join(problems, "; "))
	}
	if _, err := p.templates(); err != nil {
		return nil, err
	}
	return p, nil
}

// promptFromDoc reads the fields of a prompt file without checking them
// (lint also reads files that fail their metaschema).
func promptFromDoc(file string, doc *object) *Prompt {
	p := &Prompt{
		Name:        doc.str("name"),
		Title:       doc.str("title"),
		Description: doc.str("description"),
		Provider:    doc.str("provider"),
		File:        file,
	}
	args, _ := doc.get("arguments")
	list, _ := args.([]any)
	for _, v := range list {
		o, _ := v.(*object)
		a := PromptArgument{
			Name:        o.str("name"),
			Title:       o.str("title"),
			Description: o.str("description"),
			Path:        o.str("path"),
		}
		req, _ := o.get("required")
		a.Required, _ = req.(bool)
		c, _ := o.get("complete")
		a.Complete, _ = c.(bool)
		p.Arguments = append(p.Arguments, a)
	}
	msgs, _ := doc.get("messages")
	list, _ = msgs.([]any)
	for _, v := range list {
		o, _ := v.(*object)
		p.Messages = append(p.Messages, PromptMessage{Role: o.str("role"), Text: o.str("text")})
	}
	return p
}

// promptPathFindings checks the path fields of a prompt's arguments: a
// known kind, and a kind on every argument that looks like a path (the
// heuristics of the tool rule, looksLikePath).
func promptPathFindings(p *Prompt) []string {
	var out []string
	for _, a := range p.Arguments {
		where := "arguments." + a.Name
		switch {
		case a.Path != "" && !validPromptPathKind(a.Path):
			out = append(out, fmt.Sprintf("%s: path must be one of %s, not %q", where, strings.Join(PromptPathKinds, ", "), a.Path))
		case a.Path == "" && looksLikePath(a.Name, a.Description):
			out = append(out, fmt.Sprintf("%s looks like a filesystem path (by its name or description) but has no path kind; add path: %s",
				where, strings.Join(PromptPathKinds, " | ")))
		}
	}
	return out
}
