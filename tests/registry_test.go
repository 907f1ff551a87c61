package tests

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/fluxgit/fluxgit/tests/internal/registry"
)

// The MCP Registry entry (server.json at the repository root) is what the
// official registry's publisher uploads. These tests hold it to the
// registry's published schema and to the checks the registry makes when it
// accepts an entry, and check that what the entry tells a client to run is
// what fluxgit really accepts (docs/install.md, "MCP Registry").

// The entry's types are tests/internal/registry's, shared with the release
// check.
type (
	registryEntry   = registry.Entry
	registryPackage = registry.Package
	registryInput   = registry.Input
)

func readServerJSON(t *testing.T) ([]byte, registryEntry) {
	t.Helper()
	raw, err := os.ReadFile("../server.json")
	if err != nil {
		t.Fatal(err)
	}
	var e registryEntry
	if err := json.Unmarshal(raw, &e); err != nil {
		t.Fatalf("server.json: %v", err)
	}
	return raw, e
}

// registrySchema compiles the registry's published server.json schema
// (tests/testdata/registry/README.md says where it comes from), asserting
// formats as the registry does.
func registrySchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	s, err := registry.CompileSchema("testdata/registry/server.schema.json",
		"https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func decodeAny(t *testing.T, raw []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestRegistryEntryMatchesPublishedSchema(t *testing.T) {
	raw, e := readServerJSON(t)
	schema := registrySchema(t)
	if err := schema.Validate(decodeAny(t, raw)); err != nil {
		t.Fatalf("server.json does not validate against the registry schema:\n%#v", err)
	}
	if e.Schema != "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json" {
		t.Errorf("$schema %q is not the schema version this test checks against", e.Schema)
	}
	// The schema is strict enough to catch the mistakes the registry
	// refuses: each mutation of the real entry must fail.
	for _, c := range []struct {
		name   string
		mutate func(m map[string]any)
	}{
		{"description over 100 characters", func(m map[string]any) { m["description"] = strings.Repeat("x", 101) }},
		{"name without a namespace", func(m map[string]any) { m["name"] = "fluxgit" }},
		{"name with a space", func(m map[string]any) { m["name"] = "io.github.fluxgit/flux git" }},
		{"no version", func(m map[string]any) { delete(m, "version") }},
		{"repository without source", func(m map[string]any) { delete(m["repository"].(map[string]any), "source") }},
		{"package version latest", func(m map[string]any) { pkg(m, 0)["version"] = "latest" }},
		{"package without transport", func(m map[string]any) { delete(pkg(m, 0), "transport") }},
		{"unknown transport type", func(m map[string]any) { pkg(m, 0)["transport"] = map[string]any{"type": "websocket"} }},
		{"http transport without url", func(m map[string]any) { delete(pkg(m, 1)["transport"].(map[string]any), "url") }},
		{"http url that is not http(s)", func(m map[string]any) { pkg(m, 1)["transport"].(map[string]any)["url"] = "ftp://localhost/mcp" }},
		{"environment variable without name", func(m map[string]any) {
			pkg(m, 0)["environmentVariables"] = []any{map[string]any{"description": "nameless"}}
		}},
		{"named argument without name", func(m map[string]any) {
			pkg(m, 1)["packageArguments"] = []any{map[string]any{"type": "named", "value": "http"}}
		}},
		{"positional argument without value or hint", func(m map[string]any) {
			pkg(m, 1)["packageArguments"] = []any{map[string]any{"type": "positional"}}
		}},
		{"input format outside the enum", func(m map[string]any) {
			pkg(m, 0)["environmentVariables"] = []any{map[string]any{"name": "X", "format": "path"}}
		}},
		{"websiteUrl that is not a URI", func(m map[string]any) { m["websiteUrl"] = "not a uri" }},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := decodeAny(t, raw).(map[string]any)
			c.mutate(m)
			if err := schema.Validate(m); err == nil {
				t.Fatal("the registry schema accepted a broken entry")
			}
		})
	}
}

func pkg(m map[string]any, i int) map[string]any {
	return m["packages"].([]any)[i].(map[string]any)
}

// The checks the registry makes beyond its schema when it accepts an
// entry, and the ties between the entry and this repository.
func TestRegistryEntryIsPublishable(t *testing.T) {
	_, e := readServerJSON(t)

	// The io.github.<owner> namespace is proven by GitHub login as
	// <owner>; the repository and the Go module must be that owner's.
	ns, _, _ := strings.Cut(e.Name, "/")
	owner, ok := strings.CutPrefix(ns, "io.github.")
	if !ok || owner == "" {
		t.Fatalf("name %q: want io.github.<owner>/<name>", e.Name)
	}
	if !registryNameRE.MatchString(e.Name) {
		t.Errorf("name %q: each part must start and end with a letter or digit", e.Name)
	}
	if e.Repository.Source != "github" || !strings.EqualFold(e.Repository.URL, "https://github.com/"+owner+"/fluxgit") {
		t.Errorf("repository %+v: want github, https://github.com/%s/fluxgit", e.Repository, owner)
	}
	gomod, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(gomod), "module github.com/"+owner+"/") {
		t.Errorf("go.mod's module is not under github.com/%s", owner)
	}

	// The version is one exact version — the one the source releases as.
	checkExactVersion(t, "version", e.Version)
	canonical := canonicalVersion(t)
	if e.Version != canonical {
		t.Errorf("server.json version %q is not cmd/fluxgit/VERSION %q (scripts/release.sh --set-version moves both)", e.Version, canonical)
	}

	// An OCI package is accepted only when the image carries the entry's
	// name in the io.modelcontextprotocol.server.name label.
	dockerfile, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	label := fmt.Sprintf(`LABEL io.modelcontextprotocol.server.name="%s"`, e.Name)
	if !strings.Contains(string(dockerfile), label) {
		t.Errorf("Dockerfile lacks %s", label)
	}
	// Every variable fluxgit reads is listed in the configuration reference.
	readme, err := os.ReadFile("../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	transports := map[string]bool{}
	for i, p := range e.Packages {
		where := fmt.Sprintf("packages[%d]", i)
		transports[p.Transport.Type] = true
		if p.RegistryType == "npm" {
			checkNPMPackage(t, where, e, p, string(readme))
			continue
		}
		if p.RegistryType != "oci" {
			t.Errorf("%s: registryType %q; fluxgit publishes its container image and its npm package", where, p.RegistryType)
			continue
		}
		image, tag, ok := strings.Cut(p.Identifier, ":")
		if !ok || image != "ghcr.io/"+owner+"/fluxgit" || tag != e.Version {
			t.Errorf("%s: identifier %q, want ghcr.io/%s/fluxgit:%s", where, p.Identifier, owner, e.Version)
		}
		if strings.ContainsAny(p.Identifier, " \t") {
			t.Errorf("%s: identifier has spaces", where)
		}
		if p.Version != "" {
			checkExactVersion(t, where+".version", p.Version)
		}
		if p.RuntimeHint != "docker" {
			t.Errorf("%s: runtimeHint %q, want docker", where, p.RuntimeHint)
		}
		var declared []string
		for _, group := range [][]registryInput{p.RuntimeArguments, p.PackageArguments} {
			for j, a := range group {
				checkArgument(t, fmt.Sprintf("%s argument %d", where, j), a)
				declared = append(declared, a.Name, a.ValueHint)
			}
		}
		for _, v := range p.EnvironmentVariables {
			declared = append(declared, v.Name)
			if !strings.Contains(string(readme), "`"+v.Name+"`") {
				t.Errorf("%s: environment variable %s is not documented in docs/configuration.md", where, v.Name)
			}
		}
		switch p.Transport.Type {
		case "stdio":
			if p.Transport.URL != "" {
				t.Errorf("%s: a stdio transport has no url", where)
			}
		case "streamable-http":
			u, err := url.Parse(p.Transport.URL)
			if err != nil || u.Hostname() != "localhost" || u.Path != "/mcp" {
				t.Errorf("%s: url %q, want http://localhost:<port>/mcp (the container publishes on loopback)", where, p.Transport.URL)
			}
			for _, ref := range templateRefs(p.Transport.URL) {
				if !slices.Contains(declared, ref) {
					t.Errorf("%s: url references {%s}, which no argument or environment variable declares", where, ref)
				}
			}
			for _, h := range p.Transport.Headers {
				for _, ref := range templateRefs(h.Value) {
					if _, ok := h.Variables[ref]; !ok && !slices.Contains(declared, ref) {
						t.Errorf("%s: header %s references {%s}, declared nowhere", where, h.Name, ref)
					}
				}
			}
		default:
			t.Errorf("%s: transport %q", where, p.Transport.Type)
		}
	}
	if !transports["stdio"] || !transports["streamable-http"] {
		t.Errorf("transports %v: the entry must offer stdio and streamable-http", transports)
	}
}

// canonicalVersion is cmd/fluxgit/VERSION, the one version of the source.
func canonicalVersion(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile("../cmd/fluxgit/VERSION")
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(raw))
}

// checkNPMPackage: the npm package is the launcher scripts/release.sh packs
// (packaging/npm/fluxgit), at the entry's version, on the public registry,
// run by npx over stdio; the registry accepts it only when its package.json
// carries the entry's name as mcpName.
func checkNPMPackage(t *testing.T, where string, e registryEntry, p registryPackage, readme string) {
	t.Helper()
	raw, err := os.ReadFile("../packaging/npm/fluxgit/package.json")
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct {
		Name    string `json:"name"`
		MCPName string `json:"mcpName"`
	}
	if err := json.Unmarshal(raw, &pkg); err != nil {
		t.Fatalf("packaging/npm/fluxgit/package.json: %v", err)
	}
	if p.Identifier != pkg.Name || p.Version != e.Version {
		t.Errorf("%s: %s@%s, want %s@%s", where, p.Identifier, p.Version, pkg.Name, e.Version)
	}
	if pkg.MCPName != e.Name {
		t.Errorf("%s: package.json mcpName %q, want the entry's name %q", where, pkg.MCPName, e.Name)
	}
	if p.RegistryBaseURL != "https://registry.npmjs.org" || p.RuntimeHint != "npx" || p.Transport.Type != "stdio" {
		t.Errorf("%s: registryBaseUrl %q runtimeHint %q transport %q, want https://registry.npmjs.org, npx, stdio", where, p.RegistryBaseURL, p.RuntimeHint, p.Transport.Type)
	}
	if len(p.PackageArguments)+len(p.RuntimeArguments) != 0 {
		t.Errorf("%s: `npx fluxgit` serves stdio with no arguments", where)
	}
	for _, v := range p.EnvironmentVariables {
		if !strings.Contains(readme, "`"+v.Name+"`") {
			t.Errorf("%s: environment variable %s is not documented in README.md", where, v.Name)
		}
		if v.Name == "FLUXGIT_TOOLSETS" && v.Default != "" {
			t.Errorf("%s: FLUXGIT_TOOLSETS default %q; unset is the cheapest catalog (core)", where, v.Default)
		}
	}
}

// Every file that names the version literally (a host reads it from the
// repository, not from a release) names cmd/fluxgit/VERSION, and no plugin
// file carries a secret.
func TestLiteralVersionsAgree(t *testing.T) {
	v := canonicalVersion(t)
	for _, tc := range []struct{ file, want string }{
		{"../packaging/claude-plugin/.claude-plugin/plugin.json", `"version": "` + v + `"`},
		{"../packaging/claude-plugin/.claude-plugin/plugin.json", `"fluxgit@` + v + `"`},
		{"../packaging/codex/.codex-plugin/plugin.json", `"version": "` + v + `"`},
		{"../packaging/codex/.mcp.json", `"fluxgit@` + v + `"`},
		{"../packaging/codex/config.toml", `"fluxgit@` + v + `"`},
		{"../server.json", `"ghcr.io/fluxgit/fluxgit:` + v + `"`},
	} {
		raw, err := os.ReadFile(tc.file)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(raw), tc.want) {
			t.Errorf("%s lacks %s (cmd/fluxgit/VERSION is %s; scripts/release.sh --set-version moves every file)", tc.file, tc.want, v)
		}
		for _, secret := range []string{"SHIFT_DATABASE_URL", "SIGN_KEY", "SECRET", "TOKEN"} {
			if strings.Contains(string(raw), secret) && !strings.HasSuffix(tc.file, "server.json") {
				t.Errorf("%s names %s: plugin files never carry secrets", tc.file, secret)
			}
		}
	}
	dockerfile, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	if regexp.MustCompile(`(?m)^ARG VERSION=.+`).Match(dockerfile) {
		t.Error("the Dockerfile names a version; leave ARG VERSION empty so the image reports cmd/fluxgit/VERSION")
	}
}

var (
	// registryNameRE: each part of a server name starts and ends with a
	// letter or digit.
	registryNameRE = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9.-]*[a-zA-Z0-9]/[a-zA-Z0-9][a-zA-Z0-9._-]*[a-zA-Z0-9]$`)
	// exactVersionRE is one semantic version; "latest", ranges (^ ~ >= …)
	// and wildcards (1.x, 1.*) cannot match it.
	exactVersionRE = regexp.MustCompile(`^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$`)
	templateRefRE  = regexp.MustCompile(`\{([^{}]+)\}`)
)

// checkExactVersion refuses what the registry refuses: "latest" and ranges.
func checkExactVersion(t *testing.T, where, v string) {
	t.Helper()
	if !exactVersionRE.MatchString(v) {
		t.Errorf("%s %q is not one exact semantic version", where, v)
	}
}

// checkArgument applies the registry's rules for named arguments: a bare
// flag name, and a value that does not repeat it.
func checkArgument(t *testing.T, where string, a registryInput) {
	t.Helper()
	if a.Type != "named" {
		return
	}
	if a.Name == "" || strings.ContainsAny(a.Name, "<> $") {
		t.Errorf("%s: named argument name %q must be a bare flag", where, a.Name)
	}
	if a.Value != "" && strings.HasPrefix(a.Value, a.Name) {
		t.Errorf("%s: value %q repeats the flag name", where, a.Value)
	}
	for _, ref := range templateRefs(a.Value) {
		if _, ok := a.Variables[ref]; !ok {
			t.Errorf("%s: value references {%s} without declaring it in variables", where, ref)
		}
	}
}

func templateRefs(s string) []string {
	var out []string
	for _, m := range templateRefRE.FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	return out
}

// packageArgv is the command line a client passes to the image's
// entrypoint (fluxgit) for p.
func packageArgv(p registryPackage) []string {
	var argv []string
	for _, a := range p.PackageArguments {
		switch a.Type {
		case "positional":
			argv = append(argv, a.Value)
		case "named":
			argv = append(argv, a.Name)
			if a.Value != "" {
				argv = append(argv, a.Value)
			}
		}
	}
	return argv
}

// What the entry tells a client to run works: with the stdio package's
// defaults fluxgit passes its start-up checks and serves tools, and the HTTP package's
// command line, with its required authentication, serves MCP to a client
// holding a token — and refuses to start without the authentication the
// entry marks as required.
func TestRegistryEntryRuns(t *testing.T) {
	_, e := readServerJSON(t)
	var stdio, httpPkg *registryPackage
	for i := range e.Packages {
		switch e.Packages[i].Transport.Type {
		case "stdio":
			stdio = &e.Packages[i]
		case "streamable-http":
			httpPkg = &e.Packages[i]
		}
	}
	if stdio == nil || httpPkg == nil {
		t.Fatal("server.json lacks a stdio or a streamable-http package")
	}

	// stdio: the image's default command is `serve`; with every variable
	// the entry lists at its default, the start-up checks pass.
	if argv := packageArgv(*stdio); len(argv) != 0 {
		t.Errorf("stdio package arguments %q: the image's default command already serves stdio", argv)
	}
	env := baseEnv(t)
	for _, v := range stdio.EnvironmentVariables {
		if v.Default != "" {
			env = append(env, v.Name+"="+v.Default)
		}
	}
	if out, errOut, code := runCLI(t, env, "doctor"); code != 0 {
		t.Errorf("doctor with the stdio package's defaults: exit %d\n%s%s", code, out, errOut)
	}
	srv := startServer(t, env)
	initialize(t, srv)
	var list struct {
		Tools []struct{ Name string } `json:"tools"`
	}
	if r := srv.call(1, "tools/list", map[string]any{}); r.Error != nil || json.Unmarshal(r.Result, &list) != nil || len(list.Tools) == 0 {
		t.Errorf("tools/list with the stdio package's defaults: %.300s", r.raw)
	}

	argv := packageArgv(*httpPkg)
	if len(argv) < 3 || argv[0] != "serve" || argv[1] != "--transport" || argv[2] != "http" {
		t.Fatalf("HTTP package arguments %q do not start with serve --transport http", argv)
	}
	// Without the authentication the entry requires, fluxgit refuses the
	// non-loopback listener the entry asks for.
	cmd := exec.Command(fluxgitBin, append(argv, "--http-port", "0")...)
	cmd.Env = baseEnv(t)
	done := make(chan struct{})
	var out []byte
	go func() { out, _ = cmd.CombinedOutput(); close(done) }()
	select {
	case <-done:
		if cmd.ProcessState.Success() || !strings.Contains(strings.ToLower(string(out)), "auth") {
			t.Errorf("the HTTP package without MCP_AUTH_MODE: exit %v, want a refusal naming authentication:\n%s", cmd.ProcessState, out)
		}
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("fluxgit served a non-loopback address without authentication:\n%s", out)
	}
	required := false
	for _, v := range httpPkg.EnvironmentVariables {
		required = required || (v.Name == "MCP_AUTH_MODE" && v.IsRequired)
	}
	if !required {
		t.Error("the HTTP package does not mark MCP_AUTH_MODE as required, yet fluxgit needs it")
	}

	// With jwt, the entry's command line serves MCP at the entry's path
	// to a client sending the Authorization header the entry declares.
	s := startHTTP(t, jwtEnv(t, baseEnv(t)), argv[3:]...)
	u, err := url.Parse(s.url)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := url.Parse(httpPkg.Transport.URL)
	endpoint := "http://localhost:" + u.Port() + want.Path
	initMsg := []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"registry-test","version":"1"}}}`)
	resp, body := post(t, endpoint, initMsg, nil)
	if resp.StatusCode != 401 {
		t.Fatalf("initialize without a token: %d %s", resp.StatusCode, body)
	}
	header := strings.ReplaceAll(httpPkg.Transport.Headers[0].Value, "{token}", mint(t, "agent-alice", jwtAudience, time.Now().Add(time.Hour)))
	resp, body = post(t, endpoint, initMsg, map[string]string{httpPkg.Transport.Headers[0].Name: header})
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"protocolVersion":"2025-11-25"`) {
		t.Fatalf("initialize with the entry's header at %s: %d %s", endpoint, resp.StatusCode, body)
	}
}
