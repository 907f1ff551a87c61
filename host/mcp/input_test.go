package mcp

import (
	"context"
	"encoding/json"
	"sort"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/fluxgit/fluxgit/host/catalog"
	"github.com/fluxgit/fluxgit/host/repopath"
	"github.com/fluxgit/fluxgit/internal/wire"
	"github.com/fluxgit/fluxgit/spec"
)

// batchDispatcher asks the client a batch of questions at once, as
// sdk.Call.Ask does (every request but the last marked More), and answers
// the call with the answers, by key, once all have arrived.
type batchDispatcher struct {
	fixedDispatcher
	batch []wire.ClientRequest
	// prompt is what GetPrompt asks before it renders: key → method.
	prompt map[string]string
	// promptInputs records the Inputs of each GetPrompt.
	promptInputs []map[string]json.RawMessage
}

func (d *batchDispatcher) CallTool(ctx context.Context, _ string, _ *wire.Call, _ bool, events wire.EventFunc) (*wire.Result, error) {
	answers := make(chan *wire.Answer, len(d.batch))
	for i, q := range d.batch {
		q.ID = uint64(i + 1)
		q.More = i < len(d.batch)-1
		events(wire.Event{Request: &q}, func(_ context.Context, a *wire.Answer) error { answers <- a; return nil })
	}
	got := map[string]json.RawMessage{}
	for range d.batch {
		select {
		case a := <-answers:
			if a.Failure != nil {
				return nil, a.Failure
			}
			got[d.batch[a.RequestID-1].Key] = a.Result
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if len(got) != len(d.batch) {
		return nil, &wire.Failure{Kind: wire.KindInternal, Message: "answers went missing"}
	}
	return &wire.Result{Source: "local-git", Data: json.RawMessage(`{"commits":[]}`)}, nil
}

func (d *batchDispatcher) GetPrompt(_ context.Context, _ string, req *wire.PromptRequest) (*wire.PromptResult, error) {
	d.promptInputs = append(d.promptInputs, req.Inputs)
	asks := map[string]wire.InputRequest{}
	for k, m := range d.prompt {
		if _, ok := req.Inputs[k]; !ok {
			asks[k] = wire.InputRequest{Method: m, Params: json.RawMessage(`{}`)}
		}
	}
	if len(asks) > 0 {
		return &wire.PromptResult{InputRequests: asks}, nil
	}
	return &wire.PromptResult{Messages: []wire.PromptMessage{{Role: "user", Content: json.RawMessage(`{"type":"text","text":"rendered with every answer"}`)}}}, nil
}

var allCaps = map[string]any{"elicitation": map[string]any{}, "sampling": map[string]any{}, "roots": map[string]any{}}

const (
	okElicit = `{"action":"accept","content":{"name":"Ada"}}`
	okSample = `{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m"}`
	okRoots  = `{"roots":[{"uri":"file:///r"}]}`
)

// callTool sends a modern tools/call of repo.history with extra params
// and decodes the reply.
func callTool(t *testing.T, s *Session, caps map[string]any, extra map[string]any) (map[string]json.RawMessage, error) {
	t.Helper()
	p := map[string]any{"name": "repo.history", "arguments": map[string]any{"repoPath": t.TempDir()}, "_meta": modernWith(caps)}
	for k, v := range extra {
		p[k] = v
	}
	raw, err := send(t, s, "tools/call", p)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m, nil
}

func inputKeys(t *testing.T, m map[string]json.RawMessage) []string {
	t.Helper()
	var reqs map[string]json.RawMessage
	if err := json.Unmarshal(m["inputRequests"], &reqs); err != nil {
		t.Fatalf("inputRequests: %v in %v", err, m)
	}
	keys := make([]string, 0, len(reqs))
	for k := range reqs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Questions carry the provider's keys, a batch arrives in one round,
// answers sent with the first call answer named questions at once, and
// malformed inputResponses are refused.
func TestInputQuestions(t *testing.T) {
	elicit := wire.ClientRequest{Method: wire.MethodElicitation, Params: json.RawMessage(`{"message":"name?"}`), Key: "user_name"}
	sample := wire.ClientRequest{Method: wire.MethodSampling, Params: json.RawMessage(`{"messages":[],"maxTokens":5}`), Key: "greeting"}
	roots := wire.ClientRequest{Method: wire.MethodListRoots, Params: json.RawMessage(`{}`)}
	tests := []struct {
		name     string
		batch    []wire.ClientRequest
		extra    map[string]any
		wantKeys []string // the round's keys; nil: the call completes
		wantErr  string   // a refusal's details
	}{
		{"one named question", []wire.ClientRequest{elicit}, nil, []string{"user_name"}, ""},
		{"a batch in one round, an unnamed one keyed by id", []wire.ClientRequest{elicit, sample, roots}, nil, []string{"greeting", "q3", "user_name"}, ""},
		{"answered up front", []wire.ClientRequest{elicit},
			map[string]any{"inputResponses": map[string]any{"user_name": json.RawMessage(okElicit)}}, nil, ""},
		{"answered up front with extra keys ignored", []wire.ClientRequest{elicit},
			map[string]any{"inputResponses": map[string]any{"user_name": json.RawMessage(okElicit), "other": map[string]any{"x": 1}}}, nil, ""},
		{"part of a batch answered up front", []wire.ClientRequest{elicit, sample},
			map[string]any{"inputResponses": map[string]any{"greeting": json.RawMessage(okSample)}}, []string{"user_name"}, ""},
		{"a wrong key is asked again", []wire.ClientRequest{elicit},
			map[string]any{"inputResponses": map[string]any{"wrong_key": json.RawMessage(okElicit)}}, []string{"user_name"}, ""},
		{"an answer of the wrong shape is asked again", []wire.ClientRequest{elicit},
			map[string]any{"inputResponses": map[string]any{"user_name": json.RawMessage(okRoots)}}, []string{"user_name"}, ""},
		{"a number for an answer is refused", []wire.ClientRequest{elicit},
			map[string]any{"inputResponses": map[string]any{"user_name": 12345}}, nil, `inputResponses["user_name"] must be the client's result object`},
		{"null inputResponses is refused", []wire.ClientRequest{elicit},
			map[string]any{"inputResponses": nil}, nil, "params.inputResponses must be an object"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, _, _ := testServer(t, repopath.Policy{})
			s.srv.opts.Providers = &batchDispatcher{batch: tc.batch}
			m, err := callTool(t, s, allCaps, tc.extra)
			if tc.wantErr != "" {
				re, ok := err.(*rpcError)
				if !ok || re.Code != codeInvalidParams || !strings.Contains(re.Message, tc.wantErr) {
					t.Fatalf("want -32602 with %q, got %v", tc.wantErr, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantKeys == nil {
				if string(m["resultType"]) != `"complete"` {
					t.Fatalf("want a complete result, got %v", m)
				}
				return
			}
			if got := inputKeys(t, m); strings.Join(got, ",") != strings.Join(tc.wantKeys, ",") {
				t.Fatalf("round asks %v, want %v", got, tc.wantKeys)
			}
		})
	}
}

// A roots/list question needs the roots capability.
func TestInputRootsCapability(t *testing.T) {
	s, _, _ := testServer(t, repopath.Policy{})
	s.srv.opts.Providers = &batchDispatcher{batch: []wire.ClientRequest{{Method: wire.MethodListRoots, Params: json.RawMessage(`{}`), Key: "r"}}}
	_, err := callTool(t, s, map[string]any{"sampling": map[string]any{}}, nil)
	re, ok := err.(*rpcError)
	if !ok || re.Code != codeMissingCapability {
		t.Fatalf("want -32021, got %v", err)
	}
	if req, _ := re.Data.(map[string]any)["requiredCapabilities"].(map[string]any); req["roots"] == nil {
		t.Fatalf("requiredCapabilities %v", re.Data)
	}
}

func TestAnswerFits(t *testing.T) {
	for _, tc := range []struct {
		method, answer string
		want           bool
	}{
		{wire.MethodElicitation, okElicit, true},
		{wire.MethodElicitation, `{"action":"decline"}`, true},
		{wire.MethodElicitation, `{"action":"maybe"}`, false},
		{wire.MethodElicitation, `{"content":{}}`, false},
		{wire.MethodSampling, okSample, true},
		{wire.MethodSampling, `{"role":"assistant"}`, false},
		{wire.MethodListRoots, okRoots, true},
		{wire.MethodListRoots, `{"roots":[]}`, true},
		{wire.MethodListRoots, `{"roots":null}`, false},
		{wire.MethodListRoots, `[]`, false},
		{"ping", `{}`, false},
	} {
		if got := answerFits(tc.method, json.RawMessage(tc.answer)); got != tc.want {
			t.Errorf("answerFits(%s, %s) = %v, want %v", tc.method, tc.answer, got, tc.want)
		}
	}
}

// A prompt that asks for input: the 2026-07-28 client gets the questions
// with a signed requestState carrying the answers so far, and the prompt
// renders once every answer arrived; a state that was altered, made for
// other arguments, or too old is refused.
func TestPromptInput(t *testing.T) {
	// Every built-in prompt is rendered by the host: a layer adds one the
	// provider renders.
	cat, err := catalog.Load(spec.FS, fstest.MapFS{"prompts/asking.yaml": {Data: []byte(
		"name: asking\ntitle: Asking\ndescription: Asks before it renders.\nprovider: git-read\narguments:\n  - name: topic\n    description: A topic.\n    required: true\n")}})
	if err != nil {
		t.Fatal(err)
	}
	d := &batchDispatcher{prompt: map[string]string{"user_context": wire.MethodElicitation, "roots": wire.MethodListRoots}}
	s := New(Options{Catalog: cat, Providers: d, Name: "fluxgit", Version: "test"}).NewSession()
	repo := "git"
	get := func(caps map[string]any, extra map[string]any) (map[string]json.RawMessage, error) {
		p := map[string]any{"name": "asking", "arguments": map[string]any{"topic": repo}, "_meta": modernWith(caps)}
		for k, v := range extra {
			p[k] = v
		}
		raw, err := send(t, s, "prompts/get", p)
		if err != nil {
			return nil, err
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		return m, nil
	}
	first, err := get(allCaps, nil)
	if err != nil {
		t.Fatal(err)
	}
	if string(first["resultType"]) != `"input_required"` || strings.Join(inputKeys(t, first), ",") != "roots,user_context" {
		t.Fatalf("first round: %v", first)
	}
	var state string
	_ = json.Unmarshal(first["requestState"], &state)

	// One answer of two: asked again for the other, the first kept in the
	// new state; an answer to a question not asked is dropped.
	second, err := get(allCaps, map[string]any{"requestState": state,
		"inputResponses": map[string]any{"user_context": json.RawMessage(okElicit), "extra": json.RawMessage(okElicit)}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(inputKeys(t, second), ",") != "roots" {
		t.Fatalf("second round: %v", second)
	}
	var state2 string
	_ = json.Unmarshal(second["requestState"], &state2)
	done, err := get(allCaps, map[string]any{"requestState": state2, "inputResponses": map[string]any{"roots": json.RawMessage(okRoots)}})
	if err != nil {
		t.Fatal(err)
	}
	if string(done["resultType"]) != `"complete"` || !strings.Contains(string(done["messages"]), "rendered with every answer") {
		t.Fatalf("final round: %v", done)
	}
	last := d.promptInputs[len(d.promptInputs)-1]
	if len(last) != 2 || last["extra"] != nil {
		t.Fatalf("the provider rendered with inputs %v", last)
	}

	old, _ := s.srv.sealState(promptState{Prompt: "asking", Args: map[string]string{"topic": repo}, Client: "modern-client",
		Asked: map[string]string{}, Issued: time.Now().Add(-promptStateTTL - time.Minute).Unix()})
	other, _ := s.srv.sealState(promptState{Prompt: "asking", Args: map[string]string{"topic": "elsewhere"}, Client: "modern-client",
		Asked: map[string]string{}, Issued: time.Now().Unix()})
	for _, tc := range []struct{ name, state, want string }{
		{"tampered", state + "-TAMPERED", "integrity check"},
		{"re-signed by someone else", strings.SplitN(state, ".", 2)[0] + ".AAAA", "integrity check"},
		{"not a token", "nonsense", "integrity check"},
		{"expired", old, "integrity check"},
		{"other arguments", other, "different prompts/get"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := get(allCaps, map[string]any{"requestState": tc.state, "inputResponses": map[string]any{"roots": json.RawMessage(okRoots)}})
			re, ok := err.(*rpcError)
			if !ok || re.Code != codeInvalidParams || !strings.Contains(re.Message, tc.want) {
				t.Fatalf("want -32602 with %q, got %v", tc.want, err)
			}
		})
	}

	// Without the capability a question needs: -32021.
	_, err = get(map[string]any{"elicitation": map[string]any{}}, nil)
	if re, ok := err.(*rpcError); !ok || re.Code != codeMissingCapability {
		t.Fatalf("want -32021 without roots, got %v", err)
	}
}

func TestParamHeadersOf(t *testing.T) {
	for _, tc := range []struct {
		name, schema string
		want         string // Name=path;...
	}{
		{"none", `{"type":"object","properties":{"a":{"type":"string"}}}`, ""},
		{"top level", `{"properties":{"region":{"type":"string","x-mcp-header":"Region"}}}`, "Region=region"},
		{"nested and sorted", `{"properties":{"z":{"type":"integer","x-mcp-header":"Zed"},"o":{"type":"object","properties":{"t":{"type":"boolean","x-mcp-header":"Tenant"}}}}}`,
			"Tenant=o.t;Zed=z"},
		{"number type is skipped", `{"properties":{"n":{"type":"number","x-mcp-header":"N"}}}`, ""},
		{"non-token name is skipped", `{"properties":{"a":{"type":"string","x-mcp-header":"Bad Name"}}}`, ""},
		{"empty name is skipped", `{"properties":{"a":{"type":"string","x-mcp-header":""}}}`, ""},
		{"duplicates ignoring case are skipped", `{"properties":{"a":{"type":"string","x-mcp-header":"Dup"},"b":{"type":"string","x-mcp-header":"dup"},"c":{"type":"string","x-mcp-header":"C"}}}`, "C=c"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var parts []string
			for _, h := range ParamHeadersOf(json.RawMessage(tc.schema)) {
				parts = append(parts, h.Name+"="+strings.Join(h.Path, "."))
			}
			if got := strings.Join(parts, ";"); got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestParamValue(t *testing.T) {
	h := ParamHeader{Name: "X", Path: []string{"o", "v"}}
	for _, tc := range []struct {
		args, want string
		ok         bool
	}{
		{`{"o":{"v":"us-west1"}}`, "us-west1", true},
		{`{"o":{"v":42}}`, "42", true},
		{`{"o":{"v":-7}}`, "-7", true},
		{`{"o":{"v":true}}`, "true", true},
		{`{"o":{"v":null}}`, "", false},
		{`{"o":{}}`, "", false},
		{`{"o":"flat"}`, "", false},
		{`{}`, "", false},
	} {
		if got, ok := h.ParamValue(json.RawMessage(tc.args)); got != tc.want || ok != tc.ok {
			t.Errorf("ParamValue(%s) = %q %v, want %q %v", tc.args, got, ok, tc.want, tc.ok)
		}
	}
}
