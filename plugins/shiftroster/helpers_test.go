package shiftroster

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/fluxgit/fluxgit/host/catalog"
	"github.com/fluxgit/fluxgit/internal/roster"
	"github.com/fluxgit/fluxgit/internal/roster/pgtest"
	"github.com/fluxgit/fluxgit/plugins/sdk"
	"github.com/fluxgit/fluxgit/schemas"
	"github.com/fluxgit/fluxgit/spec"
)

// realTempDir is t.TempDir with symlinks resolved.
func realTempDir(t testing.TB) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// testProvider is a provider on a private state directory with a fixed
// default workspace.
func testProvider(t testing.TB, stateDir, defaultWS string) *Provider {
	t.Helper()
	p := NewWithConfig(Config{StateDir: stateDir, DefaultWorkspace: defaultWS, Logger: slog.New(slog.DiscardHandler)})
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// backend is one roster store the provider suite runs against.
type backend struct {
	name string
	// config returns the Config of a fresh, empty roster.
	config func(t testing.TB) Config
}

// backends: SQLite, and PostgreSQL on a private cluster (pgtest; skipped
// without PostgreSQL binaries, a failure in CI).
var backends = []backend{
	{"sqlite", func(t testing.TB) Config { return Config{StateDir: realTempDir(t)} }},
	{"postgres", func(t testing.TB) Config {
		return Config{StateDir: realTempDir(t), DatabaseURL: pgtest.Shared(t).NewDatabase(t)}
	}},
}

// eachBackend runs f once per backend, as a subtest named after it.
func eachBackend(t *testing.T, f func(t *testing.T, base Config)) {
	t.Helper()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) { f(t, b.config(t)) })
	}
}

// providerOn is a provider on base's roster with a fixed default
// workspace; providers made from one base share the roster, as processes
// do.
func providerOn(t testing.TB, base Config, defaultWS string) *Provider {
	t.Helper()
	base.DefaultWorkspace = defaultWS
	base.Logger = slog.New(slog.DiscardHandler)
	p := NewWithConfig(base)
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// storeFor opens the roster a Config names, beside any provider on it.
func storeFor(t testing.TB, cfg Config) roster.Store {
	t.Helper()
	s, err := roster.OpenStore(context.Background(), cfg.StateDir, cfg.DatabaseURL, roster.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// TestMain stops the shared PostgreSQL cluster after the tests.
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

func openStore(t testing.TB, dir string, opts roster.Options) *roster.SQLite {
	t.Helper()
	s, err := roster.Open(context.Background(), dir, opts)
	if err != nil {
		t.Fatalf("Open(%s): %v", dir, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// call runs one tool call with arguments given as a Go value.
func call(t testing.TB, p *Provider, tool string, args any) *sdk.Result {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.CallTool(context.Background(), &sdk.Call{Tool: tool, Arguments: raw})
	if err != nil {
		t.Fatalf("%s(%s): %v", tool, raw, err)
	}
	checkPayload(t, tool, res)
	return res
}

func checkIn(t testing.TB, p *Provider, args map[string]any) *CheckInData {
	t.Helper()
	res := call(t, p, ToolCheckIn, args)
	if res.Error != nil {
		t.Fatalf("check-in %v failed: %+v %s", args, res.Error, res.Error.Data)
	}
	var d CheckInData
	if err := json.Unmarshal(res.Data, &d); err != nil {
		t.Fatal(err)
	}
	return &d
}

func checkOut(t testing.TB, p *Provider, args map[string]any) *CheckOutData {
	t.Helper()
	res := call(t, p, ToolCheckOut, args)
	if res.Error != nil {
		t.Fatalf("check-out %v failed: %+v %s", args, res.Error, res.Error.Data)
	}
	var d CheckOutData
	if err := json.Unmarshal(res.Data, &d); err != nil {
		t.Fatal(err)
	}
	return &d
}

var (
	catalogOnce sync.Once
	catalogVal  *catalog.Catalog
	catalogErr  error
	rowSchema   *jsonschema.Schema
)

func loadSchemas(t testing.TB) {
	t.Helper()
	catalogOnce.Do(func() {
		catalogVal, catalogErr = catalog.Load(spec.FS)
		if catalogErr != nil {
			return
		}
		raw, err := schemas.FS.ReadFile("roster-row.schema.json")
		if err != nil {
			catalogErr = err
			return
		}
		c := jsonschema.NewCompiler()
		c.Draft = jsonschema.Draft2020
		if err := c.AddResource("mem:///roster-row.schema.json", bytes.NewReader(raw)); err != nil {
			catalogErr = err
			return
		}
		rowSchema, catalogErr = c.Compile("mem:///roster-row.schema.json")
	})
	if catalogErr != nil {
		t.Fatal(catalogErr)
	}
}

// checkPayload builds the structuredContent the host sends for these
// result: plain tools (the data itself, or {"error": ...}) and validates
// it against the tool's outputSchema; every roster row in it must also
// satisfy schemas/roster-row.schema.json.
func checkPayload(t testing.TB, tool string, res *sdk.Result) {
	t.Helper()
	loadSchemas(t)
	ct, ok := catalogVal.Tool(tool)
	if !ok {
		t.Fatalf("no spec for %s", tool)
	}
	if !ct.Plain() {
		t.Fatalf("spec of %s does not say result: plain", tool)
	}
	raw := []byte(res.Data)
	if res.Error != nil {
		data := json.RawMessage("null")
		if len(res.Error.Data) > 0 {
			data = res.Error.Data
		}
		var err error
		if raw, err = json.Marshal(map[string]any{"error": map[string]any{"code": res.Error.Code, "message": res.Error.Message, "data": data}}); err != nil {
			t.Fatal(err)
		}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	if err := ct.ValidatePayload(v); err != nil {
		t.Fatalf("%s payload violates its outputSchema: %v\n%s", tool, err, raw)
	}
	var rows struct {
		ActiveWorkers []json.RawMessage `json:"activeWorkers"`
	}
	src := res.Data
	if res.Error != nil {
		src = res.Error.Data
	}
	if len(src) > 0 {
		_ = json.Unmarshal(src, &rows)
	}
	for _, r := range rows.ActiveWorkers {
		validateRow(t, r)
	}
}

func validateRow(t testing.TB, raw json.RawMessage) {
	t.Helper()
	loadSchemas(t)
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	if err := rowSchema.Validate(v); err != nil {
		t.Fatalf("roster row violates schemas/roster-row.schema.json: %v\n%s", err, raw)
	}
}

// watch collects resource changes published by p.
type watch struct {
	ch chan sdk.ResourceChange
}

func startWatch(t testing.TB, p *Provider) *watch {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w := &watch{ch: make(chan sdk.ResourceChange, 64)}
	done := make(chan struct{})
	go func() { defer close(done); _ = p.WatchResources(ctx, w.ch) }()
	t.Cleanup(func() { cancel(); <-done })
	select {
	case ev := <-w.ch:
		if !ev.Ready {
			t.Fatalf("first watch event is not Ready: %+v", ev)
		}
	case <-time.After(30 * time.Second): // a hang guard, not a timing assertion
		t.Fatal("watch never became ready")
	}
	return w
}

// take returns the events published so far and forgets them. Publish
// runs inside the tool call, before it returns, so every change of a
// finished call is already in the buffered channel: draining it without
// waiting is exact.
func (w *watch) take() []string {
	var ev []string
	for {
		select {
		case c := <-w.ch:
			ev = append(ev, c.URI)
		default:
			return ev
		}
	}
}
