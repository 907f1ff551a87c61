package catalog

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"text/template/parse"
)

var promptNameRE = regexp.MustCompile(PromptNamePattern)

// promptSampleValue is what every argument is set to when lint executes a
// template: any non-empty string exercises the {{if .arg}} branches.
const promptSampleValue = "sample"

func (l *linter) prompts() {
	names := map[string][]string{}
	for _, file := range l.listing("prompts") {
		doc, err := l.src.doc(file)
		if err != nil {
			l.add(file, RuleParse, "%v", err)
			continue
		}
		metaOK := true
		if err := promptMeta.check(doc); err != nil {
			l.add(file, RuleMetaschema, "%v", err)
			metaOK = false
		}
		o, ok := doc.(*object)
		if !ok {
			continue
		}
		p := promptFromDoc(file, o)
		l.prompt(file, p, metaOK)
		if p.Name != "" {
			names[p.Name] = append(names[p.Name], file)
		}
	}
	for name, files := range names {
		for _, f := range files[1:] {
			l.add(f, RuleNameUnique, "prompt name %s is already used by %s", name, files[0])
		}
	}
}

func (l *linter) prompt(file string, p *Prompt, metaOK bool) {
	if p.Name != "" {
		if !promptNameRE.MatchString(p.Name) {
			l.add(file, RuleNamePattern, "prompt name %q does not match %s (prompts are snake_case, e.g. review_branch)", p.Name, PromptNamePattern)
		}
		if baseName(file) != p.Name+".yaml" {
			l.add(file, RuleFileName, "file of prompt %s must be named %s.yaml", p.Name, p.Name)
		}
	}
	if strings.TrimSpace(p.Description) == "" {
		l.add(file, RuleDescription, "prompt has no description")
	}
	if !l.knownProvider(p.Provider) {
		l.add(file, RuleProviderUnknown, "provider %q is not one of %s", p.Provider, strings.Join(l.known, ", "))
	}
	seen := map[string]bool{}
	for _, a := range p.Arguments {
		if a.Name == "" {
			continue // the metaschema reports it
		}
		if seen[a.Name] {
			l.add(file, RuleNameUnique, "argument %s is declared twice", a.Name)
		}
		seen[a.Name] = true
		if strings.TrimSpace(a.Description) == "" {
			l.add(file, RuleDescription, "arguments.%s has no description", a.Name)
		}
		if a.Complete && p.Provider == "" {
			l.add(file, RuleComplete, "arguments.%s is marked complete: true, but the prompt names no provider to answer completion/complete; add provider", a.Name)
		}
	}
	for _, m := range promptPathFindings(p) {
		l.add(file, RulePathMark, "%s", m)
	}
	l.promptTemplates(file, p, metaOK)
}

// promptTemplates parses every message, checks what it references and, when
// all of that is clean and the file matched its metaschema, executes the
// messages twice: with every argument set, and with only the required ones.
func (l *linter) promptTemplates(file string, p *Prompt, metaOK bool) {
	declared := map[string]bool{}
	for _, a := range p.Arguments {
		declared[a.Name] = true
	}
	clean := true
	for i, m := range p.Messages {
		t, err := parsePromptTemplate(fmt.Sprintf("messages[%d]", i), m.Text)
		if err != nil {
			l.add(file, RulePromptTemplate, "%v", err)
			clean = false
			continue
		}
		for _, tmpl := range t.Templates() {
			if tmpl.Tree == nil {
				continue
			}
			for _, problem := range templateRefProblems(tmpl.Tree.Root, declared) {
				l.add(file, RulePromptTemplate, "messages[%d]: %s", i, problem)
				clean = false
			}
		}
	}
	if !clean || !metaOK || !p.HostRendered() {
		return
	}
	all, required := map[string]string{}, map[string]string{}
	for _, a := range p.Arguments {
		all[a.Name] = promptSampleValue
		if a.Required {
			required[a.Name] = promptSampleValue
		}
	}
	for _, run := range []struct {
		label string
		args  map[string]string
	}{{"with every argument", all}, {"with only the required arguments", required}} {
		if _, err := p.render(run.args); err != nil {
			l.add(file, RulePromptTemplate, "rendering %s: %v", run.label, strings.TrimPrefix(err.Error(), "catalog: "))
		}
	}
}

// templateRefProblems walks a template's parse tree and reports every
// reference that is not a declared argument. The data is the argument map,
// so {{.name}} and {{$.name}} must name an argument; inside with and range
// the dot is that pipeline's value (the tree is walked with argsDot false
// there, and execution checks such uses), so only $.name is checked.
func templateRefProblems(root parse.Node, declared map[string]bool) []string {
	var out []string
	known := func() string {
		names := make([]string, 0, len(declared))
		for n := range declared {
			names = append(names, n)
		}
		sort.Strings(names)
		if len(names) == 0 {
			return "the prompt declares no arguments"
		}
		return "declared arguments: " + strings.Join(names, ", ")
	}
	reported := map[string]bool{}
	ref := func(name, as string) {
		if !declared[name] && !reported[as] {
			reported[as] = true
			out = append(out, fmt.Sprintf("%s references %s, which is not a declared argument (%s)", as, name, known()))
		}
	}
	var walk func(n parse.Node, argsDot bool)
	walkList := func(l *parse.ListNode, argsDot bool) {
		if l == nil {
			return
		}
		for _, n := range l.Nodes {
			walk(n, argsDot)
		}
	}
	walkPipe := func(p *parse.PipeNode, argsDot bool) {
		if p == nil {
			return
		}
		for _, c := range p.Cmds {
			walk(c, argsDot)
		}
	}
	walk = func(n parse.Node, argsDot bool) {
		switch n := n.(type) {
		case *parse.ListNode:
			walkList(n, argsDot)
		case *parse.ActionNode:
			walkPipe(n.Pipe, argsDot)
		case *parse.IfNode:
			walkPipe(n.Pipe, argsDot)
			walkList(n.List, argsDot)
			walkList(n.ElseList, argsDot)
		case *parse.WithNode:
			walkPipe(n.Pipe, argsDot)
			walkList(n.List, false)
			walkList(n.ElseList, argsDot)
		case *parse.RangeNode:
			walkPipe(n.Pipe, argsDot)
			walkList(n.List, false)
			walkList(n.ElseList, argsDot)
		case *parse.TemplateNode:
			walkPipe(n.Pipe, argsDot)
		case *parse.PipeNode:
			walkPipe(n, argsDot)
		case *parse.CommandNode:
			for _, a := range n.Args {
				walk(a, argsDot)
			}
		case *parse.ChainNode:
			walk(n.Node, argsDot)
		case *parse.FieldNode:
			if argsDot {
				ref(n.Ident[0], "{{."+strings.Join(n.Ident, ".")+"}}")
			}
		case *parse.VariableNode:
			if n.Ident[0] == "$" && len(n.Ident) > 1 {
				ref(n.Ident[1], "{{"+strings.Join(n.Ident, ".")+"}}")
			}
		case *parse.DotNode:
			if argsDot {
				out = append(out, fmt.Sprintf("{{.}} prints the whole argument map; name one argument, e.g. {{.name}} (%s)", known()))
			}
		}
	}
	walk(root, true)
	return out
}

// resourceComplete checks a resource's complete list against its URI
// template.
func (l *linter) resourceComplete(file string, r *Resource) {
	if len(r.Complete) == 0 {
		return
	}
	if r.URITemplate == "" {
		l.add(file, RuleComplete, "complete applies to resource templates only; this resource has a fixed uri")
		return
	}
	vars := uriTemplateVars(r.URITemplate)
	have := map[string]bool{}
	for _, v := range vars {
		have[v] = true
	}
	for _, c := range r.Complete {
		if !have[c] {
			l.add(file, RuleComplete, "complete names %s, which is not a variable of %s (variables: %s)", c, r.URITemplate, strings.Join(vars, ", "))
		}
	}
}

var uriExprRE = regexp.MustCompile(`\{([^{}]*)\}`)

// uriTemplateVars lists the variable names of an RFC 6570 URI template, in
// order, each once: the operator (+ # . / ; ? &) and the modifiers (* and
// :N) are not part of a name.
func uriTemplateVars(tmpl string) []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range uriExprRE.FindAllStringSubmatch(tmpl, -1) {
		expr := strings.TrimLeft(m[1], "+#./;?&=,!@|")
		for _, spec := range strings.Split(expr, ",") {
			name := strings.TrimSuffix(spec, "*")
			if i := strings.IndexByte(name, ':'); i >= 0 {
				name = name[:i]
			}
			if name != "" && !seen[name] {
				seen[name] = true
				out = append(out, name)
			}
		}
	}
	return out
}
