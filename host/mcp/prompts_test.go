package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/fluxgit/fluxgit/host/repopath"
	"github.com/fluxgit/fluxgit/host/rpc"
	"github.com/fluxgit/fluxgit/internal/wire"
)

// completingDispatcher answers every completion with n candidates and
// remembers the last request.
type completingDispatcher struct {
	fixedDispatcher
	n    int
	last *wire.CompleteRequest
}

func (d *completingDispatcher) Complete(_ context.Context, _ string, req *wire.CompleteRequest) (*wire.Completion, error) {
	d.last = req
	vals := make([]string, d.n)
	for i := range vals {
		vals[i] = fmt.Sprintf("%s%03d", req.Value, i)
	}
	return &wire.Completion{Values: vals, Total: d.n}, nil
}

func TestPromptsGet(t *testing.T) {
	s, _, _ := testServer(t, repopath.Policy{})
	repo := t.TempDir()
	for _, tc := range []struct {
		name     string
		params   map[string]any
		wantCode int64
		want     string // in the reply or the error details
	}{
		{"rendered", map[string]any{"name": "review_branch", "arguments": map[string]any{"repoPath": repo, "base": "main"}}, 0, `into \"main\"`},
		{"optional left out", map[string]any{"name": "review_branch", "arguments": map[string]any{"repoPath": repo}}, 0, "set to that base"},
		{"missing required", map[string]any{"name": "review_branch"}, codeInvalidParams, "arguments.repoPath is required"},
		{"unknown argument", map[string]any{"name": "review_branch", "arguments": map[string]any{"repoPath": repo, "head": "x"}}, codeInvalidParams, "takes repoPath, base"},
		{"not a string", map[string]any{"name": "review_branch", "arguments": map[string]any{"repoPath": 7}}, codeInvalidParams, "arguments.repoPath must be a string"},
		{"relative path", map[string]any{"name": "review_branch", "arguments": map[string]any{"repoPath": "rel/dir"}}, codeInvalidParams, "absolute"},
		{"unknown prompt", map[string]any{"name": "nope"}, codeInvalidParams, "review_branch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := send(t, s, "prompts/get", tc.params)
			if tc.wantCode == 0 {
				if err != nil || !strings.Contains(string(res), tc.want) || !strings.Contains(string(res), `"role":"user"`) {
					t.Fatalf("got %s, %v", res, err)
				}
				return
			}
			re, ok := err.(*rpcError)
			if !ok || re.Code != tc.wantCode {
				t.Fatalf("want %d, got %v", tc.wantCode, err)
			}
			if b, _ := json.Marshal(re.Data); !strings.Contains(re.Message+string(b), tc.want) {
				t.Fatalf("refusal %q %s does not say %q", re.Message, b, tc.want)
			}
		})
	}
}

func TestCompletionRouting(t *testing.T) {
	s, _, _ := testServer(t, repopath.Policy{})
	d := &completingDispatcher{n: 150}
	s.srv.opts.Providers = d
	repo := t.TempDir()
	complete := func(ref map[string]any, arg, value string, ctxArgs map[string]any) (json.RawMessage, error) {
		p := map[string]any{"ref": ref, "argument": map[string]any{"name": arg, "value": value}}
		if ctxArgs != nil {
			p["context"] = map[string]any{"arguments": ctxArgs}
		}
		return send(t, s, "completion/complete", p)
	}
	prompt := map[string]any{"type": "ref/prompt", "name": "review_branch"}
	res, err := complete(prompt, "base", "ma", map[string]any{"repoPath": repo + "/"})
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Completion struct {
			Values  []string `json:"values"`
			Total   int      `json:"total"`
			HasMore bool     `json:"hasMore"`
		} `json:"completion"`
	}
	_ = json.Unmarshal(res, &out)
	if len(out.Completion.Values) != 100 || !out.Completion.HasMore || out.Completion.Total != 150 {
		t.Fatalf("not capped at 100: %d values, hasMore %v, total %d", len(out.Completion.Values), out.Completion.HasMore, out.Completion.Total)
	}
	if d.last.Prompt != "review_branch" || d.last.Argument != "base" || d.last.Context["repoPath"] != repo {
		t.Fatalf("provider asked %+v (context path must be canonical)", d.last)
	}
	// A declared argument the spec does not mark completable: no values, no provider.
	d.last = nil
	if res, err := complete(prompt, "repoPath", "/", nil); err != nil || string(res) != string(emptyCompletion) || d.last != nil {
		t.Fatalf("repoPath completion: %s %v %+v", res, err, d.last)
	}
	if _, err := complete(prompt, "head", "", nil); err == nil || !strings.Contains(err.(*rpcError).Data.(map[string]any)["details"].(string), "repoPath, base") {
		t.Fatalf("unknown argument: %v", err)
	}
	// A context path outside the rules is refused like a prompt argument.
	if _, err := complete(prompt, "base", "", map[string]any{"repoPath": "relative"}); err == nil {
		t.Fatal("relative repoPath in context accepted")
	}
	if _, err := complete(map[string]any{"type": "ref/resource", "uri": "shift://status{?workspace}"}, "workspace", "w", nil); err != nil || d.last.Template != "shift://status{?workspace}" {
		t.Fatalf("template completion: %v %+v", err, d.last)
	}
	if _, err := complete(map[string]any{"type": "ref/resource", "uri": "shift://status"}, "workspace", "w", nil); err == nil {
		t.Fatal("a fixed resource URI is not a template")
	}
	if _, err := complete(map[string]any{"type": "ref/tool", "name": "x"}, "a", "", nil); err == nil {
		t.Fatal("bad ref type accepted")
	}
}

// progressDispatcher reports progress out of order and then finishes.
type progressDispatcher struct{ fixedDispatcher }

func (progressDispatcher) CallTool(_ context.Context, _ string, _ *wire.Call, _ bool, events wire.EventFunc) (*wire.Result, error) {
	total := 4.0
	for _, p := range []float64{1, 1, 0.5, 2, 4} {
		events(wire.Event{Progress: &wire.Progress{Progress: p, Total: &total, Message: "m"}}, nil)
	}
	events(wire.Event{Log: &wire.Log{Level: "info", Data: json.RawMessage(`"hello"`)}}, nil)
	return &wire.Result{Source: "local-git", Data: json.RawMessage(`{"commits":[]}`)}, nil
}

// Progress reaches the client only for a request with a token, only
// forward, and never after the reply; log lines only at the session level.
func TestProgressAndLogsOverStdio(t *testing.T) {
	s, _, _ := testServer(t, repopath.Policy{})
	s.srv.opts.Providers = progressDispatcher{}
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	go func() { _ = s.Serve(context.Background(), rpc.NewStream(sr, sw)); sw.Close() }()
	defer cw.Close()
	lines := make(chan string, 64)
	go func() {
		buf := make([]byte, 0, 1<<16)
		tmp := make([]byte, 4096)
		for {
			n, err := cr.Read(tmp)
			buf = append(buf, tmp[:n]...)
			for {
				i := strings.IndexByte(string(buf), '\n')
				if i < 0 {
					break
				}
				lines <- string(buf[:i])
				buf = buf[i+1:]
			}
			if err != nil {
				close(lines)
				return
			}
		}
	}()
	exchange := func(msg string) []string {
		if _, err := io.WriteString(cw, msg+"\n"); err != nil {
			t.Fatal(err)
		}
		var got []string
		for {
			select {
			case l := <-lines:
				got = append(got, l)
				if strings.Contains(l, `"id":`) && !strings.Contains(l, `"method"`) {
					return got
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("no reply to %s; got %q", msg, got)
			}
		}
	}
	exchange(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{}}}`)
	call := `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"repo.history","arguments":{"repoPath":"` + t.TempDir() + `"}%s}}`
	got := exchange(fmt.Sprintf(call, 1, ""))
	if len(got) != 1 {
		t.Fatalf("without a token or level: %q", got)
	}
	exchange(`{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"info"}}`)
	got = exchange(fmt.Sprintf(call, 3, `,"_meta":{"progressToken":"t"}`))
	var progress []string
	logs := 0
	for _, l := range got[:len(got)-1] {
		switch {
		case strings.Contains(l, "notifications/progress"):
			var m struct {
				Params struct {
					Progress float64 `json:"progress"`
				} `json:"params"`
			}
			_ = json.Unmarshal([]byte(l), &m)
			progress = append(progress, fmt.Sprint(m.Params.Progress))
			if !strings.Contains(l, `"progressToken":"t"`) || !strings.Contains(l, `"message":"m"`) {
				t.Fatalf("progress line: %s", l)
			}
		case strings.Contains(l, "notifications/message"):
			logs++
		}
	}
	if strings.Join(progress, ",") != "1,2,4" || logs != 1 {
		t.Fatalf("progress %v, %d log lines; want 1,2,4 and 1", progress, logs)
	}
}
