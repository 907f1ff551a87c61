package mcp

import (
	"encoding/json"
	"path/filepath"
	"sync"
	"testing"

	"github.com/fluxgit/fluxgit/host/catalog"
	"github.com/fluxgit/fluxgit/host/repopath"
	"github.com/fluxgit/fluxgit/internal/wire"
)

type presenceCall struct{ name, version, repo, tool string }

type memPresence struct {
	mu     sync.Mutex
	calls  []presenceCall
	closed bool
}

func (m *memPresence) Record(name, version, repo, tool string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls = append(m.calls, presenceCall{name, version, repo, tool})
}

func (m *memPresence) Close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
}

// Reads that name a repository are recorded with the canonical path,
// tool-level errors included; refused calls and calls naming no
// repository are not.
func TestPresenceRecordsReads(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	toolErr := &wire.Result{Source: "local-git", Error: &wire.ToolError{Code: 10010, Message: "Local git fallback failed", Data: json.RawMessage(`{"command":["git"],"details":"x"}`)}}
	ok := &wire.Result{Source: "local-git", Data: json.RawMessage(`{"commits":[]}`)}
	tests := []struct {
		name   string
		res    *wire.Result
		args   map[string]any
		record bool
	}{
		{"a read", ok, map[string]any{"repoPath": dir + "/."}, true},
		{"a read that failed at tool level", toolErr, map[string]any{"repoPath": dir}, true},
		{"refused arguments", ok, map[string]any{"repoPath": dir, "limit": "ten"}, false},
		{"a relative repoPath", ok, map[string]any{"repoPath": "rel"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pres := &memPresence{}
			srv := New(Options{Catalog: cat, Providers: fixedDispatcher{tt.res}, Roots: repopath.Policy{}, Presence: pres})
			s := srv.NewSession()
			initializeAs(t, s, V20251125, map[string]any{"name": "codex-mcp-client", "version": "0.9"})
			if _, err := send(t, s, "tools/call", map[string]any{"name": "repo.history", "arguments": tt.args}); err != nil && tt.record {
				t.Fatal(err)
			}
			want := []presenceCall{{"codex-mcp-client", "0.9", dir, "repo.history"}}
			if !tt.record {
				want = nil
			}
			if len(pres.calls) != len(want) || (len(want) == 1 && pres.calls[0] != want[0]) {
				t.Fatalf("presence calls %+v, want %+v", pres.calls, want)
			}
			srv.Close()
			if !pres.closed {
				t.Fatal("Server.Close did not close the presence record")
			}
		})
	}
}

// A modern request without a clientInfo version takes initialize's.
func TestPresenceVersionFallback(t *testing.T) {
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	cat, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	pres := &memPresence{}
	s := New(Options{Catalog: cat, Providers: fixedDispatcher{&wire.Result{Source: "local-git", Data: json.RawMessage(`{"commits":[]}`)}},
		Presence: pres}).NewSession()
	initializeAs(t, s, V20251125, map[string]any{"name": "gemini", "version": "7.1"})
	meta := map[string]any{
		"io.modelcontextprotocol/protocolVersion":    V20260728,
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
	}
	if _, err := send(t, s, "tools/call", map[string]any{"name": "repo.history", "arguments": map[string]any{"repoPath": dir}, "_meta": meta}); err != nil {
		t.Fatal(err)
	}
	if len(pres.calls) != 1 || pres.calls[0].version != "7.1" || pres.calls[0].name != "" {
		t.Fatalf("presence calls %+v, want the initialize version and no name", pres.calls)
	}
}

func TestAcceptedProposal(t *testing.T) {
	wrap := func(payload string) json.RawMessage {
		b, _ := json.Marshal(map[string]any{"content": []map[string]any{{"type": "text", "text": payload}}, "isError": false})
		return b
	}
	tests := []struct {
		name    string
		payload string
		want    bool
	}{
		{"live", `{"previewId":"p1","status":"pending","accepted":true}`, true},
		{"completed", `{"previewId":"p1","status":"completed"}`, true},
		{"ended (10004)", `{"previewId":"p1","status":"rejected","error":{"code":10004}}`, true},
		{"refused (10006)", `{"previewId":"p1","status":"refused","error":{"code":10006}}`, false},
		{"not connected (10003)", `{"error":{"code":10003}}`, false},
		{"previewId not a string", `{"previewId":7,"status":"pending"}`, false},
		{"not JSON", `oops`, false},
	}
	for _, tt := range tests {
		if got := acceptedProposal(wrap(tt.payload)); got != tt.want {
			t.Errorf("%s: acceptedProposal = %v, want %v", tt.name, got, tt.want)
		}
	}
	if acceptedProposal(json.RawMessage(`{"content":[]}`)) {
		t.Error("an empty content was accepted")
	}
	// A proposal made as a task: its creation result names the task.
	for raw, want := range map[string]bool{
		`{"resultType":"task","taskId":"p1","status":"working"}`: true,
		`{"task":{"taskId":"p1","status":"working"}}`:            true,
		`{"task":{"taskId":7}}`:                                  false,
		`{"taskId":null}`:                                        false,
	} {
		if got := acceptedProposal(json.RawMessage(raw)); got != want {
			t.Errorf("task result %s: acceptedProposal = %v, want %v", raw, got, want)
		}
	}
}
