package providers

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/fluxgit/fluxgit/internal/wire"
)

var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

// binaries builds the test providers once: the old-style echoprovider of
// the end-to-end tests (no Describer) and descprovider (declares all).
func binaries(t *testing.T) (echo, desc string) {
	t.Helper()
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "providers-test-")
		if buildErr != nil {
			return
		}
		for _, pkg := range []string{"../../tests/echoprovider", "./testdata/descprovider"} {
			out, err := exec.Command("go", "build", "-o", binDir, pkg).CombinedOutput()
			if err != nil {
				buildErr = errors.New(string(out))
				return
			}
		}
	})
	if buildErr != nil {
		t.Fatalf("build test providers: %v", buildErr)
	}
	return filepath.Join(binDir, "echoprovider"), filepath.Join(binDir, "descprovider")
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

func manager(t *testing.T, specs ...Spec) *Manager {
	t.Helper()
	m := New(specs, hclog.NewNullLogger())
	t.Cleanup(m.Shutdown)
	return m
}

func TestDescribeCheckAtLaunch(t *testing.T) {
	echo, desc := binaries(t)
	tests := []struct {
		name    string
		spec    Spec
		missing []string // nil: the provider starts
	}{
		{"undeclared old-style provider: only capabilities are checked",
			Spec{Name: "echo", Command: echo, Expect: &Expectation{Tools: []string{"echo.say", "echo.anything"}, Resources: []string{"echo://counter"}, Needs: wire.Capabilities{Resources: true}}}, nil},
		{"old-style provider lacking a needed capability",
			Spec{Name: "echo", Command: echo, Expect: &Expectation{Tools: []string{"echo.say"}, Needs: wire.Capabilities{Prompts: true, Completion: true}}},
			[]string{"capability prompts (implement sdk.PromptProvider)", "capability completion (implement sdk.Completer)"}},
		{"declared provider serving everything",
			Spec{Name: "d", Command: desc, Expect: &Expectation{Tools: []string{"d.ask"}, Resources: []string{"d://r"}, Needs: wire.Capabilities{Resources: true}}}, nil},
		{"declared provider missing a tool, a resource and a prompt",
			Spec{Name: "d", Command: desc, Expect: &Expectation{Tools: []string{"d.ask", "d.gone"}, Resources: []string{"d://r", "d://{x}"}, Prompts: []string{"review"}}},
			[]string{"tool d.gone", "resource d://{x}", "prompt review"}},
		{"no expectation", Spec{Name: "d", Command: desc}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := manager(t, tc.spec)
			err := m.Start(tc.spec.Name)
			var mm *MismatchError
			if tc.missing == nil {
				if err != nil {
					t.Fatalf("start: %v", err)
				}
				return
			}
			if !errors.As(err, &mm) || !reflect.DeepEqual(mm.Missing, tc.missing) || mm.Provider != tc.spec.Name {
				t.Fatalf("want a mismatch of %s missing %q, got %v", tc.spec.Name, tc.missing, err)
			}
			if !strings.Contains(err.Error(), "provider "+tc.spec.Name+" does not serve what the spec gives it") {
				t.Fatalf("error does not name the provider: %v", err)
			}
			// Calls fail with the same message, without starting the
			// process again.
			_, cerr := m.CallTool(context.Background(), tc.spec.Name, &wire.Call{Tool: "x", Arguments: json.RawMessage(`{}`)}, true, nil)
			if cerr == nil || cerr.Error() != err.Error() {
				t.Fatalf("call after refusal: %v, want %v", cerr, err)
			}
			if m.Running(tc.spec.Name) {
				t.Fatal("a refused provider is left running")
			}
		})
	}
}

func TestCallToolRoutesEventsAndAnswers(t *testing.T) {
	_, desc := binaries(t)
	m := manager(t, Spec{Name: "d", Command: desc})
	ctx := context.Background()
	var seen []string
	call := &wire.Call{Tool: "d.ask", Arguments: json.RawMessage(`{}`), Meta: wire.Meta{Progress: true, Client: wire.ClientCaps{Elicitation: true}}}
	res, err := m.CallTool(ctx, "d", call, true, func(ev wire.Event, answer func(context.Context, *wire.Answer) error) {
		switch {
		case ev.Progress != nil:
			seen = append(seen, "progress "+ev.Progress.Message)
		case ev.Request != nil:
			seen = append(seen, "request "+ev.Request.Method)
			// No CallID: the manager fills it in.
			go func() {
				if err := answer(ctx, &wire.Answer{RequestID: ev.Request.ID, Result: json.RawMessage(`{"action":"accept","content":{"name":"Ada"}}`)}); err != nil {
					t.Errorf("answer: %v", err)
				}
			}()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"progress asking", "request " + wire.MethodElicitation}; !reflect.DeepEqual(seen, want) {
		t.Fatalf("events %q, want %q", seen, want)
	}
	var out struct {
		Action  string         `json:"action"`
		Content map[string]any `json:"content"`
	}
	if err := json.Unmarshal(res.Data, &out); err != nil || out.Action != "accept" || out.Content["name"] != "Ada" {
		t.Fatalf("result %s (%v)", res.Data, err)
	}
	first := call.ID
	if first == 0 {
		t.Fatal("the manager assigned no call id")
	}
	// Without an event sink nobody can answer: the provider is told the
	// client cannot elicit, instead of waiting forever.
	var f *wire.Failure
	if _, err := m.CallTool(ctx, "d", call, true, nil); !errors.As(err, &f) || f.Kind != wire.KindClientCapability {
		t.Fatalf("an elicitation without events: want a client_capability failure, got %v", err)
	}
	if call.ID == first {
		t.Fatal("two calls got the same id")
	}
}

func TestRetryOnlyBeforeEvents(t *testing.T) {
	_, desc := binaries(t)
	tests := []struct {
		name     string
		retry    bool
		progress bool
		attempts int
	}{
		{"idempotent, nothing delivered: replayed once", true, false, 2},
		{"idempotent, progress delivered: not replayed", true, true, 1},
		{"not idempotent: not replayed", false, false, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := manager(t, Spec{Name: "d", Command: desc})
			marker := filepath.Join(t.TempDir(), "attempts")
			args, _ := json.Marshal(map[string]any{"marker": marker, "progress": tc.progress})
			events := 0
			_, err := m.CallTool(context.Background(), "d", &wire.Call{Tool: "d.crash", Arguments: args, Meta: wire.Meta{Progress: true}}, tc.retry,
				func(wire.Event, func(context.Context, *wire.Answer) error) {
					events++
					// The provider dies after the client saw its progress.
					if p, err := os.FindProcess(m.Pid("d")); err == nil {
						p.Kill()
					}
				})
			if err == nil {
				t.Fatal("a crashing call must fail")
			}
			b, _ := os.ReadFile(marker)
			if got := strings.Count(string(b), "\n"); got != tc.attempts {
				t.Fatalf("%d attempts, want %d (events %d)", got, tc.attempts, events)
			}
		})
	}
}

func TestOptionalCapabilitiesThroughTheManager(t *testing.T) {
	echo, desc := binaries(t)
	m := manager(t, Spec{Name: "echo", Command: echo}, Spec{Name: "d", Command: desc})
	ctx := context.Background()
	if _, err := m.GetPrompt(ctx, "echo", &wire.PromptRequest{Name: "p"}); !errors.Is(err, wire.ErrNotImplemented) {
		t.Fatalf("GetPrompt on a provider without prompts: %v", err)
	}
	if _, err := m.Complete(ctx, "d", &wire.CompleteRequest{Prompt: "p", Argument: "a"}); !errors.Is(err, wire.ErrNotImplemented) {
		t.Fatalf("Complete on a provider without completion: %v", err)
	}
	if r, err := m.ReadResource(ctx, "d", "d://r", wire.Meta{}); err != nil || r.Text != "r" {
		t.Fatalf("ReadResource: %+v %v", r, err)
	}
	var f *wire.Failure
	if _, err := m.ReadResource(ctx, "echo", "echo://nope", wire.Meta{}); !errors.As(err, &f) || f.Kind != wire.KindNotFound {
		t.Fatalf("unknown resource: want not_found, got %v", err)
	}
	d, err := m.Description("d")
	if err != nil || !d.Declared || !d.Capabilities.Resources || d.Capabilities.Watch {
		t.Fatalf("description %+v %v", d, err)
	}
}
