package catalog

import (
	"encoding/json"
	"errors"
	"io/fs"
	"reflect"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/fluxgit/fluxgit/schemas"
)

// basePrompt is a minimal, lint-clean prompt spec that the fixtures mutate.
const basePrompt = `name: demo_prompt
title: Demo Prompt
description: Reviews a repository; used by tests.
provider: git-read
arguments:
  - name: repoPath
    description: absolute path of a git work tree
    required: true
    path: repository
  - name: base
    title: Base
    description: the base branch
    required: false
    complete: true
messages:
  - role: user
    text: "Review {{.repoPath}}{{if .base}} against {{.base}}{{end}}."
  - role: assistant
    text: "{{if .base}}I will compare with {{$.base}}.{{end}}"
`

const promptFile = "prompts/demo_prompt.yaml"

// mutatePrompt applies old→new replacements to basePrompt and fails the test
// when one does not apply, so fixtures cannot silently rot.
func mutatePrompt(t *testing.T, pairs ...string) []byte {
	t.Helper()
	s := basePrompt
	for i := 0; i+1 < len(pairs); i += 2 {
		if !strings.Contains(s, pairs[i]) {
			t.Fatalf("fixture: %q not found in basePrompt", pairs[i])
		}
		s = strings.Replace(s, pairs[i], pairs[i+1], 1)
	}
	return []byte(s)
}

func mustPrompt(t testing.TB, c *Catalog, name string) *Prompt {
	t.Helper()
	p, ok := c.Prompt(name)
	if !ok {
		t.Fatalf("prompt %s not in catalog", name)
	}
	return p
}

func TestEmbeddedPrompts(t *testing.T) {
	c := mustLoad(t)
	var names []string
	for _, p := range c.Prompts {
		names = append(names, p.Name)
		if !p.HostRendered() || p.Description == "" || p.Title == "" {
			t.Errorf("%s: incomplete: %+v", p.Name, p)
		}
	}
	if got := strings.Join(names, " "); got != "explain_conflict review_branch team_status" {
		t.Errorf("Prompts = %s (sorted by name)", got)
	}
	tests := []struct {
		prompt      string
		provider    string
		paths       map[string]string
		completable []string
		args        map[string]string
		rendered    []string // substrings of the first message
	}{
		{"review_branch", "git-read", map[string]string{"repoPath": PathRepository}, []string{"base"},
			map[string]string{"repoPath": "/r/my app", "base": "main"},
			[]string{`"/r/my app"`, "repo.branchStack", "repo.conflictPreflight", `currentRef "main"`, "diff.text", "proposals"}},
		{"explain_conflict", "git-read", map[string]string{"repoPath": PathRepository, "path": PathRelative}, []string{"path"},
			map[string]string{"repoPath": "/r", "path": "src/a.go"},
			[]string{"conflict.read", `concentrating on "src/a.go"`, "proposal"}},
		{"team_status", "shift-roster", map[string]string{}, []string{"workspace"},
			map[string]string{"workspace": "my proj/x"},
			[]string{"shift://status?workspace=my+proj%2Fx", `workspace "my proj/x"`, "shift_check_out"}},
	}
	for _, tt := range tests {
		t.Run(tt.prompt, func(t *testing.T) {
			p := mustPrompt(t, c, tt.prompt)
			if p.Provider != tt.provider {
				t.Errorf("provider = %s, want %s", p.Provider, tt.provider)
			}
			if got := p.PathArgs(); !reflect.DeepEqual(got, tt.paths) {
				t.Errorf("PathArgs = %v, want %v", got, tt.paths)
			}
			var completable []string
			for _, a := range p.Arguments {
				if p.Completable(a.Name) {
					completable = append(completable, a.Name)
				}
			}
			if !reflect.DeepEqual(completable, tt.completable) {
				t.Errorf("completable = %v, want %v", completable, tt.completable)
			}
			msgs, err := p.Render(tt.args)
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range tt.rendered {
				if !strings.Contains(msgs[0].Text, want) {
					t.Errorf("rendered text lacks %q:\n%s", want, msgs[0].Text)
				}
			}
		})
	}
	if _, ok := c.Prompt("nope"); ok {
		t.Error("found a prompt that does not exist")
	}
	tmpl, ok := c.Template("shift://status{?workspace}")
	if !ok || !tmpl.Completable("workspace") || tmpl.Completable("other") {
		t.Errorf("shift-status template completion: %+v %v", tmpl, ok)
	}
	if _, ok := c.Template("shift://status"); ok {
		t.Error("Template found a fixed-URI resource")
	}
}

// Every built-in prompt with only its required arguments still names the
// tools it is about and nothing of an absent optional argument leaks in.
func TestEmbeddedPromptsRenderWithRequiredOnly(t *testing.T) {
	c := mustLoad(t)
	for _, p := range c.Prompts {
		args := map[string]string{}
		for _, a := range p.Arguments {
			if a.Required {
				args[a.Name] = "/r"
			}
		}
		msgs, err := p.Render(args)
		if err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		for _, m := range msgs {
			if strings.Contains(m.Text, `""`) || strings.Contains(m.Text, "<no value>") {
				t.Errorf("%s: an absent argument shows up in the text:\n%s", p.Name, m.Text)
			}
		}
	}
}

func TestPromptLoad(t *testing.T) {
	p := mustPrompt(t, mustLoad(t, fstest.MapFS{promptFile: {Data: []byte(basePrompt)}}), "demo_prompt")
	want := []PromptArgument{
		{Name: "repoPath", Description: "absolute path of a git work tree", Required: true, Path: PathRepository},
		{Name: "base", Title: "Base", Description: "the base branch", Complete: true},
	}
	if !reflect.DeepEqual(p.Arguments, want) || p.File != promptFile || p.Provider != "git-read" || len(p.Messages) != 2 || p.Messages[1].Role != RoleAssistant {
		t.Errorf("loaded %+v", p)
	}
	if got := p.PathMarks(); !reflect.DeepEqual(got, []PathArg{{Pointer: []string{".repoPath"}, Kind: PathRepository}}) {
		t.Errorf("PathMarks = %v", got)
	}

	// A later layer replaces a prompt of the same name.
	over := fstest.MapFS{"prompts/x.yaml": {Data: mutatePrompt(t, "title: Demo Prompt", "title: Override")}}
	c := mustLoad(t, fstest.MapFS{promptFile: {Data: []byte(basePrompt)}}, over)
	if len(c.Prompts) != 1 || mustPrompt(t, c, "demo_prompt").Title != "Override" {
		t.Errorf("override: %+v", c.Prompts)
	}

	bad := []struct {
		name  string
		files fstest.MapFS
		msg   string
	}{
		{"metaschema", fstest.MapFS{promptFile: {Data: mutatePrompt(t, "role: user", "role: system")}}, "messages[0].role must be one of"},
		{"argument without required", fstest.MapFS{promptFile: {Data: mutatePrompt(t, "    required: false\n", "")}}, "arguments[1].required is required"},
		{"unmarked path", fstest.MapFS{promptFile: {Data: mutatePrompt(t, "    path: repository\n", "")}}, "arguments.repoPath looks like a filesystem path"},
		{"template", fstest.MapFS{promptFile: {Data: mutatePrompt(t, "{{end}}.", ".")}}, "messages[0]"},
		{"duplicate", fstest.MapFS{promptFile: {Data: []byte(basePrompt)}, "prompts/b/demo_prompt.yaml": {Data: []byte(basePrompt)}}, "prompt demo_prompt is also defined in"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(tt.files)
			if err == nil || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("Load error = %v, want …%s…", err, tt.msg)
			}
		})
	}
}

func TestPromptBundleRoundTrip(t *testing.T) {
	files := fstest.MapFS{
		promptFile:                   {Data: []byte(basePrompt)},
		"resources/t.yaml":           {Data: []byte("uriTemplate: demo://x{?a,b}\nname: t\ndescription: d\nprovider: git-read\ncomplete: [b]\n")},
		"prompts/provider_only.yaml": {Data: []byte("name: provider_only\ntitle: P\ndescription: d\nprovider: git-read\n")},
	}
	b, err := Bundle(files)
	if err != nil {
		t.Fatal(err)
	}
	layer := fstest.MapFS{BundleFile: {Data: b}}
	for k, v := range files {
		layer[k] = v
	}
	fromBundle, err := loadLayerFast(layer)
	if err != nil {
		t.Fatal(err)
	}
	fromYAML, err := loadLayer(files)
	if err != nil {
		t.Fatal(err)
	}
	fromBundle.Digest = ""
	fromYAML.Tools = []*Tool{} // Bundle writes [] for no tools
	x, _ := json.Marshal(fromBundle)
	y, _ := json.Marshal(fromYAML)
	if string(x) != string(y) {
		t.Fatalf("bundle and sources disagree:\n%s\n%s", x, y)
	}
	if !strings.Contains(string(b), `"prompts"`) || len(fromBundle.Prompts) != 2 || fromBundle.Resources[0].Complete[0] != "b" {
		t.Fatalf("bundle lacks prompts or complete: %s", b)
	}
	// A prompt from the bundle renders (its templates are parsed lazily).
	c := mustLoad(t, layer)
	msgs, err := mustPrompt(t, c, "demo_prompt").Render(map[string]string{"repoPath": "/r"})
	if err != nil || len(msgs) != 1 || msgs[0].Text != "Review /r." {
		t.Errorf("render from bundle: %v %v", msgs, err)
	}
	if mustPrompt(t, c, "provider_only").HostRendered() {
		t.Error("a prompt without messages is rendered by its provider")
	}
}

func TestPromptValidateArguments(t *testing.T) {
	p := mustPrompt(t, mustLoad(t, fstest.MapFS{promptFile: {Data: []byte(basePrompt)}}), "demo_prompt")
	noArgs := &Prompt{Name: "bare"}
	tests := []struct {
		name   string
		prompt *Prompt
		args   map[string]string
		want   string // "" = valid
	}{
		{"required only", p, map[string]string{"repoPath": "/r"}, ""},
		{"all", p, map[string]string{"repoPath": "/r", "base": "main"}, ""},
		{"optional empty", p, map[string]string{"repoPath": "/r", "base": ""}, ""},
		{"nil map", noArgs, nil, ""},
		{"unknown", p, map[string]string{"repoPath": "/r", "head": "x"},
			"arguments.head is not allowed: prompt demo_prompt takes repoPath, base"},
		{"unknown on a prompt without arguments", noArgs, map[string]string{"x": "1"},
			"arguments.x is not allowed: prompt bare takes no arguments"},
		{"missing required", p, map[string]string{},
			"arguments.repoPath is required: absolute path of a git work tree"},
		{"empty required", p, map[string]string{"repoPath": ""},
			"arguments.repoPath must not be empty: absolute path of a git work tree"},
		{"too long", p, map[string]string{"repoPath": "/r", "base": strings.Repeat("b", PromptArgumentMaxBytes+1)},
			"arguments.base is 4097 bytes long; at most 4096 are allowed"},
		{"not UTF-8", p, map[string]string{"repoPath": "/r\xff"},
			"arguments.repoPath must be valid UTF-8"},
		{"every problem at once", p, map[string]string{"z": "1", "a": "2"},
			"arguments.a is not allowed: prompt demo_prompt takes repoPath, base; " +
				"arguments.z is not allowed: prompt demo_prompt takes repoPath, base; " +
				"arguments.repoPath is required: absolute path of a git work tree"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkDetails(t, tt.prompt.ValidateArguments(tt.args), tt.want)
		})
	}
}

func TestPromptRender(t *testing.T) {
	load := func(t *testing.T, src []byte) *Prompt {
		return mustPrompt(t, mustLoad(t, fstest.MapFS{promptFile: {Data: src}}), "demo_prompt")
	}
	tests := []struct {
		name string
		src  func(t *testing.T) []byte
		args map[string]string
		want []PromptMessage
		err  string
	}{
		{"optional absent: empty, and an empty message is left out", func(*testing.T) []byte { return []byte(basePrompt) },
			map[string]string{"repoPath": "/r"},
			[]PromptMessage{{RoleUser, "Review /r."}}, ""},
		{"optional present", func(*testing.T) []byte { return []byte(basePrompt) },
			map[string]string{"repoPath": "/r", "base": "main"},
			[]PromptMessage{{RoleUser, "Review /r against main."}, {RoleAssistant, "I will compare with main."}}, ""},
		{"values are data, not template text", func(*testing.T) []byte { return []byte(basePrompt) },
			map[string]string{"repoPath": "{{.base}}", "base": "main"},
			[]PromptMessage{{RoleUser, "Review {{.base}} against main."}, {RoleAssistant, "I will compare with main."}}, ""},
		{"quoting with printf", func(t *testing.T) []byte {
			return mutatePrompt(t, `"Review {{.repoPath}}`, `'Review {{printf "%q" .repoPath}}`, `{{end}}."`, `{{end}}.'`)
		}, map[string]string{"repoPath": "/my dir\nIgnore this"},
			[]PromptMessage{{RoleUser, `Review "/my dir\nIgnore this".`}}, ""},
		{"with rebinds dot", func(t *testing.T) []byte {
			return mutatePrompt(t, "{{if .base}} against {{.base}}{{end}}", "{{with .base}} against {{.}}{{end}}")
		}, map[string]string{"repoPath": "/r", "base": "dev"},
			[]PromptMessage{{RoleUser, "Review /r against dev."}, {RoleAssistant, "I will compare with dev."}}, ""},
		{"invalid arguments", func(*testing.T) []byte { return []byte(basePrompt) },
			map[string]string{"base": "main"}, nil, "arguments.repoPath is required"},
		{"every message empty", func(t *testing.T) []byte {
			return mutatePrompt(t, `"Review {{.repoPath}}{{if .base}} against {{.base}}{{end}}."`, `"{{if .base}}x{{end}}"`)
		}, map[string]string{"repoPath": "/r"}, nil, "every message rendered empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := load(t, tt.src(t)).Render(tt.args)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want …%s…", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}

	provider := &Prompt{Name: "p", Provider: "git-read"}
	if _, err := provider.Render(nil); !errors.Is(err, ErrProviderRendered) {
		t.Errorf("provider-rendered prompt: %v", err)
	}
	var ve *ValidationError
	if _, err := load(t, []byte(basePrompt)).Render(map[string]string{"x": "1", "repoPath": "/r"}); !errors.As(err, &ve) {
		t.Errorf("bad arguments must be a *ValidationError: %v", err)
	}
}

// Templates are parsed once, on first use, from any number of goroutines.
func TestPromptConcurrentRender(t *testing.T) {
	p := mustPrompt(t, mustLoad(t), "review_branch")
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if msgs, err := p.Render(map[string]string{"repoPath": "/r"}); err != nil || len(msgs) != 1 {
				t.Errorf("%v %v", msgs, err)
			}
		}()
	}
	wg.Wait()
}

func TestRestrictPrompts(t *testing.T) {
	c := mustLoad(t)
	c.Restrict(func(tool *Tool) bool { return tool.Provider == "git-read" })
	var names []string
	for _, p := range c.Prompts {
		names = append(names, p.Name)
	}
	if got := strings.Join(names, " "); got != "explain_conflict review_branch" {
		t.Errorf("after Restrict to git-read: %s", got)
	}
	if _, ok := c.Prompt("team_status"); ok {
		t.Error("prompt of a removed provider still found by name")
	}
	c.RestrictPrompts(func(p *Prompt) bool { return p.Name != "review_branch" })
	if _, ok := c.Prompt("review_branch"); ok || len(c.Prompts) != 1 {
		t.Errorf("RestrictPrompts: %v", c.Prompts)
	}
	// Providers() counts the providers of prompts too.
	only := &Catalog{Prompts: []*Prompt{{Name: "x", Provider: "third-party"}}}
	if got := only.Providers(); !reflect.DeepEqual(got, []string{"third-party"}) {
		t.Errorf("Providers = %v", got)
	}
	if _, ok := only.Prompt("x"); !ok {
		t.Error("literal catalog prompt lookup failed")
	}
}

func TestURITemplateVars(t *testing.T) {
	tests := []struct {
		tmpl string
		want []string
	}{
		{"shift://status{?workspace}", []string{"workspace"}},
		{"demo://{+path}/x{?a,b*}{&c:3}", []string{"path", "a", "b", "c"}},
		{"demo://{id}/{id}", []string{"id"}},
		{"demo://fixed", nil},
	}
	for _, tt := range tests {
		if got := uriTemplateVars(tt.tmpl); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: %v, want %v", tt.tmpl, got, tt.want)
		}
	}
}

func TestLintPromptFixturesAreClean(t *testing.T) {
	for name, src := range map[string][]byte{
		"base":          []byte(basePrompt),
		"with rebinds":  mutatePrompt(t, "{{if .base}} against {{.base}}{{end}}", "{{with .base}} against {{.}}{{end}}"),
		"printf":        mutatePrompt(t, `"Review {{.repoPath}}`, `'Review {{printf "%q" .repoPath}}`, `{{end}}."`, `{{end}}.'`),
		"no messages":   mutatePrompt(t, "messages:\n", "", "  - role: user\n    text: \"Review {{.repoPath}}{{if .base}} against {{.base}}{{end}}.\"\n  - role: assistant\n    text: \"{{if .base}}I will compare with {{$.base}}.{{end}}\"\n", ""),
		"no complete":   mutatePrompt(t, "    complete: true\n", ""),
		"relative path": mutatePrompt(t, "    description: the base branch\n", "    description: a file path inside the repository\n    path: relative\n"),
	} {
		fsys := fstest.MapFS{
			promptFile:         {Data: src},
			"resources/t.yaml": {Data: []byte("uriTemplate: demo://x{?a,b}\nname: t\ndescription: d\nprovider: git-read\ncomplete: [a, b]\n")},
		}
		for _, f := range Lint(fsys, knownProviders) {
			t.Errorf("%s: %s", name, f)
		}
	}
}

func TestLintPromptRules(t *testing.T) {
	const resFile = "resources/t.yaml"
	const okTemplate = "uriTemplate: demo://x{?a}\nname: t\ndescription: d\nprovider: git-read\n"
	one := func(b []byte) fstest.MapFS { return fstest.MapFS{promptFile: {Data: b}} }
	tests := []struct {
		name  string
		files func(t *testing.T) fstest.MapFS
		want  []string // "FILE: RULE: " prefix plus a substring of the message, one per finding
	}{
		{"parse", func(t *testing.T) fstest.MapFS { return one([]byte("name: x\n  title: [\n")) },
			[]string{promptFile + ": parse: yaml:"}},
		{"metaschema unknown key", func(t *testing.T) fstest.MapFS {
			return one(mutatePrompt(t, "provider: git-read", "provider: git-read\ncolour: red"))
		},
			[]string{promptFile + ": metaschema: colour is not allowed"}},
		{"metaschema required stated", func(t *testing.T) fstest.MapFS { return one(mutatePrompt(t, "    required: false\n", "")) },
			[]string{promptFile + ": metaschema: arguments[1].required is required"}},
		{"metaschema path kind", func(t *testing.T) fstest.MapFS { return one(mutatePrompt(t, "path: repository", "path: runDir")) },
			[]string{promptFile + ": metaschema: arguments[0].path must be one of", promptFile + ": path-mark: arguments.repoPath: path must be one of repository, directory, file, relative, none"}},
		{"metaschema role", func(t *testing.T) fstest.MapFS { return one(mutatePrompt(t, "role: assistant", "role: system")) },
			[]string{promptFile + ": metaschema: messages[1].role must be one of"}},
		{"name-pattern", func(t *testing.T) fstest.MapFS {
			return fstest.MapFS{"prompts/demoPrompt.yaml": {Data: mutatePrompt(t, "name: demo_prompt", "name: demoPrompt")}}
		}, []string{"prompts/demoPrompt.yaml: name-pattern: prompt name \"demoPrompt\" does not match " + PromptNamePattern}},
		{"file-name", func(t *testing.T) fstest.MapFS { return fstest.MapFS{"prompts/demo.yaml": {Data: []byte(basePrompt)}} },
			[]string{"prompts/demo.yaml: file-name: file of prompt demo_prompt must be named demo_prompt.yaml"}},
		{"name-unique prompts", func(t *testing.T) fstest.MapFS {
			return fstest.MapFS{"prompts/a/demo_prompt.yaml": {Data: []byte(basePrompt)}, "prompts/b/demo_prompt.yaml": {Data: []byte(basePrompt)}}
		}, []string{"prompts/b/demo_prompt.yaml: name-unique: prompt name demo_prompt is already used by prompts/a/demo_prompt.yaml"}},
		{"name-unique arguments", func(t *testing.T) fstest.MapFS {
			return one(mutatePrompt(t, "messages:\n", "  - name: base\n    description: again\n    required: false\nmessages:\n"))
		}, []string{promptFile + ": name-unique: argument base is declared twice"}},
		{"description prompt", func(t *testing.T) fstest.MapFS {
			return one(mutatePrompt(t, "description: Reviews a repository; used by tests.", "description: '  '"))
		}, []string{promptFile + ": description: prompt has no description"}},
		{"description argument", func(t *testing.T) fstest.MapFS {
			return one(mutatePrompt(t, "description: the base branch", "description: ' '"))
		}, []string{promptFile + ": description: arguments.base has no description"}},
		{"provider-unknown", func(t *testing.T) fstest.MapFS { return one(mutatePrompt(t, "provider: git-read", "provider: nobody")) },
			[]string{promptFile + `: provider-unknown: provider "nobody" is not one of`}},
		{"complete without provider", func(t *testing.T) fstest.MapFS { return one(mutatePrompt(t, "provider: git-read\n", "")) },
			[]string{promptFile + ": complete: arguments.base is marked complete: true, but the prompt names no provider", promptFile + ": metaschema: provider is required"}},
		{"path-mark", func(t *testing.T) fstest.MapFS { return one(mutatePrompt(t, "    path: repository\n", "")) },
			[]string{promptFile + ": path-mark: arguments.repoPath looks like a filesystem path"}},
		{"prompt-template parse", func(t *testing.T) fstest.MapFS { return one(mutatePrompt(t, "{{end}}.", ".")) },
			[]string{promptFile + ": prompt-template: template: messages[0]"}},
		{"prompt-template unknown function", func(t *testing.T) fstest.MapFS { return one(mutatePrompt(t, "{{.repoPath}}", "{{shout .repoPath}}")) },
			[]string{promptFile + `: prompt-template: template: messages[0]:1: function "shout" not defined`}},
		{"prompt-template undeclared field", func(t *testing.T) fstest.MapFS { return one(mutatePrompt(t, "against {{.base}}", "against {{.head}}")) },
			[]string{promptFile + ": prompt-template: messages[0]: {{.head}} references head, which is not a declared argument (declared arguments: base, repoPath)"}},
		{"prompt-template undeclared variable", func(t *testing.T) fstest.MapFS { return one(mutatePrompt(t, "{{$.base}}", "{{$.head}}")) },
			[]string{promptFile + ": prompt-template: messages[1]: {{$.head}} references head"}},
		{"prompt-template undeclared in an if", func(t *testing.T) fstest.MapFS {
			return one(mutatePrompt(t, "{{if .base}}I will", "{{if .Base}}I will"))
		},
			[]string{promptFile + ": prompt-template: messages[1]: {{.Base}} references Base"}},
		{"prompt-template whole map", func(t *testing.T) fstest.MapFS { return one(mutatePrompt(t, "Review {{.repoPath}}", "Review {{.}}")) },
			[]string{promptFile + ": prompt-template: messages[0]: {{.}} prints the whole argument map"}},
		{"prompt-template execution", func(t *testing.T) fstest.MapFS {
			return one(mutatePrompt(t, "against {{.base}}", "against {{.base.name}}"))
		},
			[]string{promptFile + ": prompt-template: rendering with every argument: prompt demo_prompt: messages[0]"}},
		{"prompt-template renders nothing", func(t *testing.T) fstest.MapFS {
			return one(mutatePrompt(t, `"Review {{.repoPath}}{{if .base}} against {{.base}}{{end}}."`, `"{{if .base}}x{{end}}"`))
		}, []string{promptFile + ": prompt-template: rendering with only the required arguments: prompt demo_prompt: every message rendered empty"}},
		{"complete on a fixed uri", func(t *testing.T) fstest.MapFS {
			return fstest.MapFS{resFile: {Data: []byte("uri: demo://x\nname: t\ndescription: d\nprovider: git-read\ncomplete: [a]\n")}}
		}, []string{resFile + ": complete: complete applies to resource templates only"}},
		{"complete names no variable", func(t *testing.T) fstest.MapFS {
			return fstest.MapFS{resFile: {Data: []byte(okTemplate + "complete: [a, workspace]\n")}}
		}, []string{resFile + ": complete: complete names workspace, which is not a variable of demo://x{?a} (variables: a)"}},
		{"complete metaschema", func(t *testing.T) fstest.MapFS {
			return fstest.MapFS{resFile: {Data: []byte(okTemplate + "complete: []\n")}}
		}, []string{resFile + ": metaschema: complete"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Lint(tt.files(t), knownProviders)
			if len(got) != len(tt.want) {
				t.Fatalf("want %d finding(s), got %d:\n%s", len(tt.want), len(got), joinFindings(got))
			}
			for _, w := range tt.want {
				found := false
				for _, f := range got {
					if strings.HasPrefix(f.String(), w[:strings.Index(w, ": ")+2]) && strings.Contains(f.String(), w) {
						found = true
					}
				}
				if !found {
					t.Errorf("no finding %q in:\n%s", w, joinFindings(got))
				}
			}
		})
	}
}

// TestPromptPathKindsMatchMetaschema keeps PromptPathKinds and the enum of
// arguments[].path in schemas/prompt.schema.json in step.
func TestPromptPathKindsMatchMetaschema(t *testing.T) {
	raw, err := fs.ReadFile(schemas.FS, "prompt.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Properties struct {
			Arguments struct {
				Items struct {
					Properties struct {
						Path struct {
							Enum []string `json:"enum"`
						} `json:"path"`
					} `json:"properties"`
				} `json:"items"`
			} `json:"arguments"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if got := doc.Properties.Arguments.Items.Properties.Path.Enum; !reflect.DeepEqual(got, PromptPathKinds) {
		t.Errorf("schema enum %v, Go list %v", got, PromptPathKinds)
	}
}
