package tests

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// exampleEnv registers the example provider (tests/exampleprovider, which
// uses every SDK capability) through a configuration file.
func exampleEnv(t testing.TB) []string {
	t.Helper()
	spec, err := filepath.Abs("testdata/example-spec")
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(t.TempDir(), "fluxgit.yaml")
	writeFile(t, cfg, "providers:\n  - name: example\n    command: "+exampleBin+"\n    spec: "+spec+"\n")
	return append(baseEnv(t), "FLUXGIT_CONFIG="+cfg)
}

// clientLog collects what the go-sdk client receives besides replies.
type clientLog struct {
	mu sync.Mutex
	seenEvents
}

// seenEvents is what a clientLog holds, copied out by snapshot.
type seenEvents struct {
	progress  []float64
	messages  []string // progress messages
	logLevels []string
	elicits   []string
	samples   int
}

func (c *clientLog) snapshot() seenEvents {
	c.mu.Lock()
	defer c.mu.Unlock()
	return seenEvents{progress: slices.Clone(c.progress), messages: slices.Clone(c.messages),
		logLevels: slices.Clone(c.logLevels), elicits: slices.Clone(c.elicits), samples: c.samples}
}

// exampleSession starts fluxgit with the example provider under the
// official go-sdk client, which answers elicitation and sampling requests
// and records progress and log notifications.
func exampleSession(t *testing.T, version string, decline bool) (context.Context, *mcp.ClientSession, *clientLog) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	seen := &clientLog{}
	opts := exampleClientOptions(seen, decline)
	cmd := exec.Command(fluxgitBin)
	cmd.Env = exampleEnv(t)
	client := mcp.NewClient(&mcp.Implementation{Name: "go-sdk-example", Version: "1.0.0"}, opts)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return ctx, cs, seen
}

// exampleClientOptions answers elicitation (accepting with name Ada, or
// declining) and sampling, and records what the client handled in seen.
func exampleClientOptions(seen *clientLog, decline bool) *mcp.ClientOptions {
	return &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			seen.mu.Lock()
			seen.elicits = append(seen.elicits, req.Params.Message)
			seen.mu.Unlock()
			if decline {
				return &mcp.ElicitResult{Action: "decline"}, nil
			}
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
		},
		CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			seen.mu.Lock()
			seen.samples++
			seen.mu.Unlock()
			text := ""
			if len(req.Params.Messages) > 0 {
				if tc, ok := req.Params.Messages[0].Content.(*mcp.TextContent); ok {
					text = tc.Text
				}
			}
			return &mcp.CreateMessageResult{Role: "assistant", Model: "test-model", Content: &mcp.TextContent{Text: "echo: " + text}}, nil
		},
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			seen.mu.Lock()
			seen.progress = append(seen.progress, req.Params.Progress)
			seen.messages = append(seen.messages, req.Params.Message)
			seen.mu.Unlock()
		},
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			seen.mu.Lock()
			seen.logLevels = append(seen.logLevels, string(req.Params.Level))
			seen.mu.Unlock()
		},
	}
}

func exampleData(t *testing.T, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	if res.IsError {
		t.Fatalf("tool error: %+v", res.Content)
	}
	b, _ := json.Marshal(res.StructuredContent)
	var env struct {
		Data map[string]any `json:"data"`
	}
	if err := json.Unmarshal(b, &env); err != nil || env.Data == nil {
		t.Fatalf("structuredContent without data: %s", b)
	}
	return env.Data
}

// A third-party provider built against the SDK uses every capability
// through the host, in both generations, answered by the official client.
func TestExampleProviderCapabilities(t *testing.T) {
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			ctx, cs, seen := exampleSession(t, version, false)

			// Progress: reported only for a request with a progress token.
			params := &mcp.CallToolParams{Name: "example.count", Arguments: map[string]any{"steps": 4}}
			params.SetProgressToken("count-1")
			res, err := cs.CallTool(ctx, params)
			if err != nil {
				t.Fatal(err)
			}
			if d := exampleData(t, res); d["steps"] != float64(4) {
				t.Fatalf("count data: %v", d)
			}
			got := settle(seen, func(e seenEvents) bool { return len(e.progress) >= 5 })
			if want := []float64{0, 1, 2, 3, 4}; !slices.Equal(got.progress, want) {
				t.Fatalf("progress %v, want %v", got.progress, want)
			}
			if got.messages[4] != "step 4 of 4" {
				t.Fatalf("progress messages: %q", got.messages)
			}
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "example.count", Arguments: map[string]any{"steps": 2}}); err != nil {
				t.Fatal(err)
			}
			if n := len(seen.snapshot().progress); n != 5 {
				t.Fatalf("progress sent without a token: %d notifications", n)
			}

			// Elicitation then sampling, from one blocking provider call.
			res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "example.ask", Arguments: map[string]any{"topic": "git"}})
			if err != nil {
				t.Fatal(err)
			}
			d := exampleData(t, res)
			if d["name"] != "Ada" || d["model"] != "test-model" || !strings.Contains(d["greeting"].(string), "greeting for Ada about git") {
				t.Fatalf("ask data: %v", d)
			}
			got = seen.snapshot()
			if len(got.elicits) != 1 || !strings.Contains(got.elicits[0], "about git") || got.samples != 1 {
				t.Fatalf("client saw elicitations %q and %d samplings", got.elicits, got.samples)
			}

			// A prompt the provider renders, and completions for its argument.
			pr, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "example_greet", Arguments: map[string]string{"who": "ada"}})
			if err != nil {
				t.Fatal(err)
			}
			if len(pr.Messages) != 2 || pr.Description != "A greeting for ada" {
				t.Fatalf("prompt: %+v", pr)
			}
			if er, ok := pr.Messages[1].Content.(*mcp.EmbeddedResource); !ok || er.Resource.URI != "example://notes/ada" {
				t.Fatalf("second message is not the embedded note: %#v", pr.Messages[1].Content)
			}
			comp, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "example_greet"},
				Argument: mcp.CompleteParamsArgument{Name: "who", Value: "a"}})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(comp.Completion.Values, []string{"ada", "alan"}) {
				t.Fatalf("completion: %+v", comp.Completion)
			}
			comp, err = cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/resource", URI: "example://notes/{name}"},
				Argument: mcp.CompleteParamsArgument{Name: "name", Value: "g"}})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(comp.Completion.Values, []string{"grace"}) {
				t.Fatalf("template completion: %+v", comp.Completion)
			}
		})
	}
}

// settle waits until done holds for what the client has handled: the
// go-sdk client runs notification handlers apart from replies, so a reply
// can be returned before the notifications the server wrote ahead of it
// were handled. It returns what was seen (the caller checks it).
func settle(seen *clientLog, done func(seenEvents) bool) seenEvents {
	deadline := time.Now().Add(5 * time.Second)
	for {
		got := seen.snapshot()
		if done(got) || time.Now().After(deadline) {
			return got
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Log lines reach a legacy client only from logging/setLevel on, at and
// above the level it chose.
func TestExampleProviderLogging(t *testing.T) {
	ctx, cs, seen := exampleSession(t, "2025-11-25", false)
	call := func() {
		t.Helper()
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "example.logs", Arguments: map[string]any{}}); err != nil {
			t.Fatal(err)
		}
	}
	call()
	if n := len(seen.snapshot().logLevels); n != 0 {
		t.Fatalf("%d log messages before logging/setLevel", n)
	}
	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatal(err)
	}
	call()
	all := []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}
	if got := settle(seen, func(e seenEvents) bool { return len(e.logLevels) >= 8 }).logLevels; !slices.Equal(got, all) {
		t.Fatalf("at debug: %v", got)
	}
	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "error"}); err != nil {
		t.Fatal(err)
	}
	call()
	if got := settle(seen, func(e seenEvents) bool { return len(e.logLevels) >= 12 }).logLevels[8:]; !slices.Equal(got, all[4:]) {
		t.Fatalf("at error: %v", got)
	}
	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "loud"}); err == nil || !strings.Contains(err.Error(), "debug, info") {
		t.Fatalf("bad level: %v", err)
	}
}

// A declined elicitation is the provider's to handle; a client without
// the capability gets -32021 naming the capability to declare.
func TestExampleProviderElicitationRefused(t *testing.T) {
	ctx, cs, _ := exampleSession(t, "2025-11-25", true)
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "example.ask", Arguments: map[string]any{"topic": "git"}})
	if err != nil {
		t.Fatal(err)
	}
	if d := exampleData(t, res); d["action"] != "decline" {
		t.Fatalf("declined: %v", d)
	}

	s := startServer(t, exampleEnv(t))
	initialize(t, s) // declares no capabilities
	r := s.call(2, "tools/call", map[string]any{"name": "example.ask", "arguments": map[string]any{"topic": "git"}})
	if r.Error == nil || r.Error.Code != -32021 || !strings.Contains(string(r.Error.Data), `"requiredCapabilities":{"elicitation":{}}`) {
		t.Fatalf("want -32021 requiring elicitation, got %s", r.raw)
	}
}

// Cancelling a long call reaches the provider through the host.
func TestExampleProviderCancel(t *testing.T) {
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			ctx, cs, _ := exampleSession(t, version, false)
			marker := filepath.Join(t.TempDir(), "wait")
			cctx, cancel := context.WithCancel(ctx)
			done := make(chan error, 1)
			go func() {
				_, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: "example.wait", Arguments: map[string]any{"marker": marker}})
				done <- err
			}()
			waitFile(t, marker+".started")
			cancel()
			if err := <-done; err == nil {
				t.Fatal("cancelled call returned no error")
			}
			waitFile(t, marker)
			if b, _ := os.ReadFile(marker); string(b) != "cancelled" {
				t.Fatalf("provider saw %q, want cancelled", b)
			}
		})
	}
}

// The built-in prompts' completions come from the real providers: branch
// names and unmerged paths of the repository named in the context (which
// the host confines first), and the roster's workspaces.
func TestBuiltinCompletions(t *testing.T) {
	repo := fixtureRepo(t)
	mergeConflict(t, repo, "clash.txt")
	state := canonicalTempDir(t)
	env := append(baseEnv(t), "SHIFT_STATE_DIR="+state, "FLUXGIT_MCP_ALLOWED_ROOTS="+filepath.Dir(repo))
	s := startServer(t, env)
	initialize(t, s)
	values := func(id int, prompt, arg, value string, ctx map[string]any) []string {
		t.Helper()
		p := map[string]any{"ref": map[string]any{"type": "ref/prompt", "name": prompt}, "argument": map[string]any{"name": arg, "value": value}}
		if ctx != nil {
			p["context"] = map[string]any{"arguments": ctx}
		}
		r := s.call(id, "completion/complete", p)
		if r.Error != nil {
			t.Fatalf("%s.%s: %s", prompt, arg, r.raw)
		}
		var out struct {
			Completion struct {
				Values []string `json:"values"`
			} `json:"completion"`
		}
		_ = json.Unmarshal(r.Result, &out)
		return out.Completion.Values
	}
	if got := values(1, "review_branch", "base", "", map[string]any{"repoPath": repo}); !slices.Equal(got, []string{"feature/cart", "main", "side"}) {
		t.Fatalf("branches: %v", got)
	}
	if got := values(2, "review_branch", "base", "fe", map[string]any{"repoPath": repo}); !slices.Equal(got, []string{"feature/cart"}) {
		t.Fatalf("branches by prefix: %v", got)
	}
	if got := values(3, "explain_conflict", "path", "", map[string]any{"repoPath": repo}); !slices.Equal(got, []string{"clash.txt"}) {
		t.Fatalf("unmerged paths: %v", got)
	}
	if got := values(4, "review_branch", "base", "", nil); len(got) != 0 {
		t.Fatalf("no repository, yet values: %v", got)
	}
	outside := s.call(5, "completion/complete", map[string]any{"ref": map[string]any{"type": "ref/prompt", "name": "review_branch"},
		"argument": map[string]any{"name": "base", "value": ""}, "context": map[string]any{"arguments": map[string]any{"repoPath": canonicalTempDir(t)}}})
	if outside.Error == nil || outside.Error.Code != -32011 {
		t.Fatalf("a repository outside the roots: %s", outside.raw)
	}
	if r := s.call(6, "tools/call", map[string]any{"name": "shift_check_in", "arguments": map[string]any{"workspace": "alpha-team", "gist": "completions"}}); r.Error != nil || strings.Contains(string(r.Result), `"isError":true`) {
		t.Fatalf("check in: %s", r.raw)
	}
	if got := values(7, "team_status", "workspace", "al", nil); !slices.Contains(got, "alpha-team") {
		t.Fatalf("workspaces: %v", got)
	}
}

// Cancelling a tool call whose provider waits for the client's answer
// withdraws the question: the client gets notifications/cancelled for the
// request the server sent it, and a late answer changes nothing.
func TestCancelWithdrawsClientRequest(t *testing.T) {
	s := startServer(t, exampleEnv(t))
	r := s.call(0, "initialize", map[string]any{"protocolVersion": "2025-11-25",
		"capabilities": map[string]any{"elicitation": map[string]any{}}, "clientInfo": map[string]any{"name": "c", "version": "1"}})
	if r.Error != nil {
		t.Fatal(r.raw)
	}
	s.sendJSON(map[string]any{"jsonrpc": "2.0", "id": "ask", "method": "tools/call",
		"params": map[string]any{"name": "example.ask", "arguments": map[string]any{"topic": "git"}}})
	var asked struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if err := json.Unmarshal([]byte(s.next(20*time.Second)), &asked); err != nil || asked.Method != "elicitation/create" {
		t.Fatalf("expected elicitation/create, got %+v %v", asked, err)
	}
	s.sendJSON(map[string]any{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": map[string]any{"requestId": "ask"}})
	var withdrawn struct {
		Method string `json:"method"`
		Params struct {
			RequestID json.RawMessage `json:"requestId"`
			Reason    string          `json:"reason"`
		} `json:"params"`
	}
	if err := json.Unmarshal([]byte(s.next(20*time.Second)), &withdrawn); err != nil || withdrawn.Method != "notifications/cancelled" ||
		string(withdrawn.Params.RequestID) != string(asked.ID) || withdrawn.Params.Reason == "" {
		t.Fatalf("expected the question withdrawn, got %+v %v", withdrawn, err)
	}
	// A late answer is dropped; the session goes on, and the cancelled
	// call gets no reply.
	s.sendJSON(map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(asked.ID), "result": map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}}})
	if p := s.call(1, "ping", nil); p.Error != nil {
		t.Fatal(p.raw)
	}
	for _, raw := range s.stray {
		if strings.Contains(raw, `"id":"ask"`) {
			t.Fatalf("the cancelled call was answered: %s", raw)
		}
	}
}
