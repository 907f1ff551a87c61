package catalog

import (
	"encoding/json"
	"io/fs"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/fluxgit/fluxgit/schemas"
)

// TestLintPathMark feeds small bad spec trees to the path-mark rule; each
// must give exactly one finding, in the named file, saying what is wrong.
func TestLintPathMark(t *testing.T) {
	const file = "tools/demo.echo.yaml"
	tool := func(b []byte) fstest.MapFS { return fstest.MapFS{file: {Data: b}} }
	str := func(name, desc, extra string) string {
		return "    " + name + ": {type: string, minLength: 1, maxLength: 64, description: '" + desc + "'" + extra + "}\n    count:\n"
	}
	tests := []struct {
		name  string
		files func(t *testing.T) fstest.MapFS
		file  string
		msg   string
	}{
		{"unmarked repoPath", func(t *testing.T) fstest.MapFS {
			return tool(mutate(t, "      x-fluxgit-path: repository\n", ""))
		}, file, "arguments.repoPath looks like a filesystem path"},
		{"unmarked runDir", func(t *testing.T) fstest.MapFS {
			return tool(mutate(t, "    count:\n", str("runDir", "where FluxGit keeps its state", "")))
		}, file, "arguments.runDir looks like a filesystem path"},
		{"unmarked *Dir suffix", func(t *testing.T) fstest.MapFS {
			return tool(mutate(t, "    count:\n", str("cacheDir", "a cache", "")))
		}, file, "arguments.cacheDir looks like"},
		{"unmarked snake_case path", func(t *testing.T) fstest.MapFS {
			return tool(mutate(t, "    count:\n", str("target_path", "a target", "")))
		}, file, "arguments.target_path looks like"},
		{"unmarked cwd", func(t *testing.T) fstest.MapFS {
			return tool(mutate(t, "    count:\n", str("cwd", "working place", "")))
		}, file, "arguments.cwd looks like"},
		{"unusual name, path description", func(t *testing.T) fstest.MapFS {
			return tool(mutate(t, "    count:\n", str("where", "Absolute path of the checkout to read", "")))
		}, file, "arguments.where looks like"},
		{"unusual name, directory description", func(t *testing.T) fstest.MapFS {
			return tool(mutate(t, "    count:\n", str("spot", "The directory to list", "")))
		}, file, "arguments.spot looks like"},
		{"array of paths: items unmarked", func(t *testing.T) fstest.MapFS {
			return tool(mutate(t, "    count:\n", "    paths: {type: array, maxItems: 3, description: files, items: {type: string, maxLength: 9}}\n    count:\n"))
		}, file, "arguments.paths[] looks like"},
		{"nested target path in an array of objects", func(t *testing.T) fstest.MapFS {
			return tool(mutate(t, "    count:\n", "    targets:\n      type: array\n      maxItems: 3\n      description: what to read\n"+
				"      items:\n        type: object\n        description: one target\n        properties:\n"+
				"          worktree: {type: string, maxLength: 9, description: a checkout}\n    count:\n"))
		}, file, "arguments.targets[].worktree looks like"},
		{"nested path in an object", func(t *testing.T) fstest.MapFS {
			return tool(mutate(t, "    count:\n", "    opts:\n      type: object\n      description: options\n      properties:\n"+
				"        outputPath: {type: string, maxLength: 9, description: where}\n    count:\n"))
		}, file, "arguments.opts.outputPath looks like"},
		{"unknown kind", func(t *testing.T) fstest.MapFS {
			return tool(mutate(t, "x-fluxgit-path: repository", "x-fluxgit-path: repo"))
		}, file, "arguments.repoPath: x-fluxgit-path must be one of repository, runDir, directory, file, relative, destination, none, not \"repo\""},
		{"mark on an integer", func(t *testing.T) fstest.MapFS {
			return tool(mutate(t, "      description: how many\n", "      description: how many\n      x-fluxgit-path: file\n"))
		}, file, "arguments.count: x-fluxgit-path is only allowed on string schemas"},
		{"mark on an array instead of its items", func(t *testing.T) fstest.MapFS {
			return tool(mutate(t, "    count:\n", "    paths: {type: array, maxItems: 3, description: files, x-fluxgit-path: file, items: {type: string, maxLength: 9, x-fluxgit-path: file}}\n    count:\n"))
		}, file, "arguments.paths: x-fluxgit-path is only allowed on string schemas"},
		{"mark in an outputSchema", func(t *testing.T) fstest.MapFS {
			return tool(mutate(t, "          description: echoed text\n", "          description: echoed text\n          x-fluxgit-path: file\n"))
		}, file, "outputSchema: x-fluxgit-path marks arguments only; remove it from payload.data.echo"},
		{"fragment with an unknown kind", func(t *testing.T) fstest.MapFS {
			return fstest.MapFS{file: {Data: []byte(baseTool)},
				"fragments/f.yaml": {Data: []byte("$defs:\n  dir: {type: string, maxLength: 9, x-fluxgit-path: folder}\n")}}
		}, "fragments/f.yaml", "$defs/dir: x-fluxgit-path must be one of"},
		{"fragment mark on an object", func(t *testing.T) fstest.MapFS {
			return fstest.MapFS{file: {Data: []byte(baseTool)},
				"fragments/f.yaml": {Data: []byte("$defs:\n  where: {type: object, x-fluxgit-path: directory}\n")}}
		}, "fragments/f.yaml", "$defs/where: x-fluxgit-path is only allowed on string schemas"},
		{"fragment used unmarked is reported on the tool", func(t *testing.T) fstest.MapFS {
			return fstest.MapFS{
				file:               {Data: mutate(t, "    count:\n", "    dest: {$ref: ../fragments/f.yaml#/$defs/dest}\n    count:\n")},
				"fragments/f.yaml": {Data: []byte("$defs:\n  dest: {type: string, maxLength: 9, description: Absolute path of the destination}\n")},
			}
		}, file, "arguments.dest looks like"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Lint(tt.files(t), knownProviders)
			if len(got) != 1 {
				t.Fatalf("want exactly one %s finding, got %d:\n%s", RulePathMark, len(got), joinFindings(got))
			}
			f := got[0]
			if f.Rule != RulePathMark || f.File != tt.file || !strings.Contains(f.Message, tt.msg) {
				t.Errorf("finding = %s\nwant %s: %s: …%s…", f, tt.file, RulePathMark, tt.msg)
			}
			if !strings.HasPrefix(f.String(), tt.file+": "+RulePathMark+": ") {
				t.Errorf("not FILE: RULE: message: %s", f)
			}
		})
	}
}

// TestLintPathMarkAccepts lists path-free or correctly marked arguments the
// rule must leave alone.
func TestLintPathMarkAccepts(t *testing.T) {
	for name, prop := range map[string]string{
		"integer named like a path":    "    maxPaths: {type: integer, minimum: 1, maximum: 9, description: Maximum number of paths}\n",
		"label mentioning a directory": "    label: {type: string, maxLength: 9, description: Display label (default the directory name)}\n",
		"id whose text says path":      "    repoId: {type: string, maxLength: 9, description: the registry entry whose path equals repoPath}\n",
		"marked unusual name":          "    where: {type: string, maxLength: 9, description: Absolute path of a checkout, x-fluxgit-path: directory}\n",
		"marked items":                 "    paths: {type: array, maxItems: 3, description: files, items: {type: string, maxLength: 9, x-fluxgit-path: file}}\n",
		"mark next to a $ref":          "    dest: {$ref: '#/inputSchema/properties/repoPath', x-fluxgit-path: directory}\n",
		"none for a path-like label":   "    workdir: {type: string, maxLength: 9, description: a name, x-fluxgit-path: none}\n",
	} {
		t.Run(name, func(t *testing.T) {
			fsys := fstest.MapFS{"tools/demo.echo.yaml": {Data: mutate(t, "    count:\n", prop+"    count:\n")}}
			if got := Lint(fsys, knownProviders); len(got) != 0 {
				t.Errorf("findings:\n%s", joinFindings(got))
			}
		})
	}
}

// TestPathMarksServedStripped proves the marks reach Tool.Paths (also
// through fragments, $ref siblings, arrays and nested objects) and never
// the schema tools/list serves, which still validates the same arguments.
func TestPathMarksServedStripped(t *testing.T) {
	files := fstest.MapFS{
		"tools/demo.echo.yaml": {Data: mutate(t, "    count:\n",
			"    spot: {$ref: ../fragments/f.yaml#/$defs/dir, description: where to look}\n"+
				"    also: {type: array, maxItems: 3, description: more, items: {$ref: ../fragments/f.yaml#/$defs/dir}}\n"+
				"    targets:\n      type: array\n      maxItems: 3\n      description: what to read\n"+
				"      items:\n        type: object\n        description: one target\n        properties:\n"+
				"          place: {type: string, maxLength: 9, description: a file, x-fluxgit-path: file}\n"+
				"          x-fluxgit-path: {type: string, maxLength: 9, description: a property that happens to have the keyword's name, x-fluxgit-path: none}\n"+
				"    count:\n")},
		"fragments/f.yaml": {Data: []byte("$defs:\n  dir: {type: string, maxLength: 90, description: Absolute path of a directory, x-fluxgit-path: directory}\n")},
	}
	if got := Lint(files, knownProviders); len(got) != 0 {
		t.Fatalf("lint:\n%s", joinFindings(got))
	}
	tool := mustTool(t, mustLoad(t, files), "demo.echo")
	want := []PathArg{
		{Pointer: []string{".repoPath"}, Kind: PathRepository},
		{Pointer: []string{".spot"}, Kind: PathDirectory},
		{Pointer: []string{".also", "[]"}, Kind: PathDirectory},
		{Pointer: []string{".targets", "[]", ".place"}, Kind: PathFile},
		{Pointer: []string{".targets", "[]", ".x-fluxgit-path"}, Kind: PathNone},
	}
	if !reflect.DeepEqual(tool.Paths, want) {
		t.Fatalf("Paths = %+v\nwant %+v", tool.Paths, want)
	}
	if got := tool.Paths[3].String(); got != "arguments.targets[].place" {
		t.Errorf("String() = %q", got)
	}
	in := string(tool.InputSchema)
	if strings.Contains(in, `"x-fluxgit-path":"`) {
		t.Errorf("served inputSchema keeps the mark: %s", in)
	}
	if !strings.Contains(in, `"x-fluxgit-path":{"type":"string"`) {
		t.Errorf("a property named like the keyword was stripped: %s", in)
	}
	if err := tool.ValidateArguments(decode(t, `{"repoPath":"/r","spot":"/s","also":["/a"],"targets":[{"place":"/p"}]}`)); err != nil {
		t.Errorf("valid arguments refused: %v", err)
	}
	checkDetails(t, tool.ValidateArguments(decode(t, `{"repoPath":"/r","spot":5}`)), "arguments.spot must be of type string, got integer")
	// The mark survives the bundle round trip.
	b, err := Bundle(files)
	if err != nil {
		t.Fatal(err)
	}
	layer := fstest.MapFS{BundleFile: {Data: b}}
	for k, v := range files {
		layer[k] = v
	}
	l, err := loadLayerFast(layer)
	if err != nil || len(l.Tools) != 1 || !reflect.DeepEqual(l.Tools[0].Paths, want) {
		t.Fatalf("bundle: %v %+v", err, l)
	}
}

// TestPathKindsMatchMetaschema keeps the Go list and the enum in
// schemas/tool.schema.json in step.
func TestPathKindsMatchMetaschema(t *testing.T) {
	raw, err := fs.ReadFile(schemas.FS, "tool.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Defs struct {
			PathKind struct {
				Enum []string `json:"enum"`
			} `json:"pathKind"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(doc.Defs.PathKind.Enum, PathKinds) {
		t.Fatalf("metaschema enum %v, Go %v", doc.Defs.PathKind.Enum, PathKinds)
	}
}

// TestEmbeddedPathArguments pins the marks of the embedded spec that the
// host's confinement depends on.
func TestEmbeddedPathArguments(t *testing.T) {
	c := mustLoad(t)
	for name, want := range map[string]string{
		"repo.status":        "arguments.repoPath=repository",
		"diff.text":          "arguments.repoPath=repository arguments.path=relative arguments.paths[]=relative",
		"fleet.radar":        "arguments.repoPaths[]=repository arguments.repositories[].repoPath=repository",
		"fleet.digest":       "arguments.repoPaths[]=repository",
		"flux.restorePoints": "arguments.repoPath=repository arguments.runDir=runDir",
		"safety.timeline":    "arguments.repoPath=repository arguments.runDir=runDir",
	} {
		tool := mustTool(t, c, name)
		var got []string
		for _, p := range tool.Paths {
			got = append(got, p.String()+"="+p.Kind)
		}
		if strings.Join(got, " ") != want {
			t.Errorf("%s: %s, want %s", name, strings.Join(got, " "), want)
		}
		if strings.Contains(string(tool.InputSchema), PathKeyword) {
			t.Errorf("%s: served schema carries %s", name, PathKeyword)
		}
	}
}

// TestLoadRefusesUnmarkedPaths: the host confines by mark only, so a spec
// layer with an unmarked path-like argument does not load at all (a
// third-party provider cannot get an unconfined path by forgetting it).
func TestLoadRefusesUnmarkedPaths(t *testing.T) {
	files := fstest.MapFS{"tools/demo.echo.yaml": {Data: mutate(t, "    count:\n", "    outDir: {type: string, maxLength: 9, description: where}\n    count:\n")}}
	_, err := Load(files)
	if err == nil || !strings.Contains(err.Error(), "arguments.outDir looks like a filesystem path") || !strings.Contains(err.Error(), RulePathMark) {
		t.Fatalf("Load = %v, want a path-mark refusal naming arguments.outDir", err)
	}
	// Control: the same tree with the mark loads.
	files["tools/demo.echo.yaml"] = &fstest.MapFile{Data: mutate(t, "    count:\n", "    outDir: {type: string, maxLength: 9, description: where, x-fluxgit-path: directory}\n    count:\n")}
	if _, err := Load(files); err != nil {
		t.Fatalf("marked tree: %v", err)
	}
}

// TestVendorKeywordIgnoredByValidation: the jsonschema compiler accepts
// the mark and validation ignores it (the lint compiles schemas with the
// marks still in place).
func TestVendorKeywordIgnoredByValidation(t *testing.T) {
	sch, doc, err := compileJSON("mem:///marked.json", []byte(`{"type":"object","properties":{"p":{"type":"string","x-fluxgit-path":"repository"}}}`))
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	if err := validateWith(sch, doc, map[string]any{"p": "relative/not/checked"}, "arguments"); err != nil {
		t.Fatalf("the mark took part in validation: %v", err)
	}
	if err := validateWith(sch, doc, map[string]any{"p": 5}, "arguments"); err == nil {
		t.Fatal("type no longer checked")
	}
}
