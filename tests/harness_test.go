// Package tests drives the real fluxgit binary over stdio: real temporary
// git repositories, real provider subprocesses, golden JSON-RPC transcripts.
package tests

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Binaries built once by TestMain.
var (
	fluxgitBin string
	echoBin    string
	exampleBin string
	binVersion string
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "fluxgit-tests-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fluxgitBin = filepath.Join(dir, "fluxgit")
	echoBin = filepath.Join(dir, "echoprovider")
	exampleBin = filepath.Join(dir, "exampleprovider")
	for _, b := range [][2]string{{fluxgitBin, "../cmd/fluxgit"}, {echoBin, "./echoprovider"}, {exampleBin, "./exampleprovider"}} {
		out, err := exec.Command("go", "build", "-o", b[0], b[1]).CombinedOutput()
		if err != nil {
			fmt.Fprintf(os.Stderr, "build %s: %v\n%s", b[1], err, out)
			os.Exit(1)
		}
	}
	out, err := exec.Command(fluxgitBin, "version").Output()
	if err != nil {
		fmt.Fprintln(os.Stderr, "fluxgit version:", err)
		os.Exit(1)
	}
	binVersion = strings.TrimPrefix(strings.TrimSpace(string(out)), "fluxgit ")
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// baseEnv is the parent environment without anything that would change
// fluxgit's behaviour, plus a private run directory.
func baseEnv(t testing.TB) []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "FLUXGIT_") || strings.HasPrefix(kv, "GIT_") || strings.HasPrefix(kv, "SHIFT_") {
			continue
		}
		env = append(env, kv)
	}
	// Private state: no test may touch the user's run directory or roster.
	// Every tool is served: a test of one tool's behaviour must not depend
	// on the default selection (the core toolset, proposals only with a
	// gateway address), which the tests that are about it ask for with
	// defaultSelection.
	return append(env, "FLUXGIT_RUN_DIR="+t.TempDir(), "SHIFT_STATE_DIR="+canonicalTempDir(t), "FLUXGIT_TOOLSETS=all")
}

// defaultSelection, appended to baseEnv, gives the selection fluxgit serves
// with no configuration: an empty FLUXGIT_TOOLSETS is the same as an unset
// one, and the later of two duplicate variables wins (os/exec).
const defaultSelection = "FLUXGIT_TOOLSETS="

// server is one running fluxgit process.
type server struct {
	t      testing.TB
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string
	stderr *lockedBuffer
	done   chan struct{}
	// stray holds replies that arrived while call waited for another id.
	stray []string
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func startServer(t testing.TB, env []string, args ...string) *server {
	t.Helper()
	return startServerWith(t, env, nil, args...)
}

// startServerWith is startServer with prepare applied to the command
// before it starts (its own process group, say).
func startServerWith(t testing.TB, env []string, prepare func(*exec.Cmd), args ...string) *server {
	t.Helper()
	cmd := exec.Command(fluxgitBin, args...)
	cmd.Env = env
	if prepare != nil {
		prepare(cmd)
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	s := &server{t: t, cmd: cmd, stdin: stdin, lines: make(chan string, 1024), stderr: &lockedBuffer{}, done: make(chan struct{})}
	cmd.Stderr = s.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(s.lines)
		r := bufio.NewReaderSize(stdout, 1<<20)
		for {
			line, err := r.ReadString('\n')
			if line != "" {
				s.lines <- strings.TrimRight(line, "\n")
			}
			if err != nil {
				return
			}
		}
	}()
	go func() { _ = cmd.Wait(); close(s.done) }()
	t.Cleanup(s.stop)
	return s
}

// stop closes stdin and waits for a clean exit, killing after a grace.
func (s *server) stop() {
	_ = s.stdin.Close()
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
		s.t.Errorf("fluxgit did not exit after stdin closed; stderr:\n%s", s.stderr.String())
	}
}

func (s *server) send(line string) {
	s.t.Helper()
	if _, err := io.WriteString(s.stdin, line); err != nil {
		s.t.Fatalf("write to fluxgit: %v", err)
	}
}

func (s *server) sendJSON(v any) {
	s.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		s.t.Fatal(err)
	}
	s.send(string(b) + "\n")
}

// next returns the next stdout line, failing the test after timeout.
func (s *server) next(timeout time.Duration) string {
	s.t.Helper()
	select {
	case l, ok := <-s.lines:
		if !ok {
			s.t.Fatalf("fluxgit closed stdout; stderr:\n%s", s.stderr.String())
		}
		return l
	case <-time.After(timeout):
		s.t.Fatalf("no output from fluxgit within %s; stderr:\n%s", timeout, s.stderr.String())
	}
	return ""
}

// quiet asserts nothing arrives on stdout for d.
func (s *server) quiet(d time.Duration) {
	s.t.Helper()
	select {
	case l := <-s.lines:
		s.t.Fatalf("unexpected output: %s", l)
	case <-time.After(d):
	}
}

// response is a decoded JSON-RPC reply.
type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
	raw string
}

func decodeResponse(t testing.TB, line string) response {
	t.Helper()
	var r response
	if err := json.Unmarshal([]byte(line), &r); err != nil {
		t.Fatalf("stdout line is not JSON: %q: %v", line, err)
	}
	if r.JSONRPC != "2.0" {
		t.Fatalf("reply without jsonrpc 2.0: %s", line)
	}
	r.raw = line
	return r
}

// call sends a request and waits for the reply with the same id; replies
// to other ids that arrive first are returned in others.
func (s *server) call(id any, method string, params any) response {
	s.t.Helper()
	msg := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		msg["params"] = params
	}
	s.sendJSON(msg)
	want, _ := json.Marshal(id)
	deadline := time.Now().Add(60 * time.Second)
	for {
		r := decodeResponse(s.t, s.next(time.Until(deadline)))
		if bytes.Equal(r.ID, want) {
			return r
		}
		s.stray = append(s.stray, r.raw)
	}
}

// modernMeta is a valid 2026-07-28 request _meta.
func modernMeta() map[string]any {
	return map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "fluxgit-tests", "version": "1.0.0"},
	}
}

// toolPayload extracts and cross-checks a tools/call result: content[0]
// must be the compact JSON of structuredContent, isError must match.
func toolPayload(t testing.TB, r response) map[string]any {
	t.Helper()
	if r.Error != nil {
		t.Fatalf("tools/call failed: %s", r.raw)
	}
	var res struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		StructuredContent json.RawMessage `json:"structuredContent"`
		IsError           bool            `json:"isError"`
	}
	if err := json.Unmarshal(r.Result, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Content) == 0 || res.Content[0].Type != "text" {
		t.Fatalf("no text content: %s", r.raw)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, []byte(res.Content[0].Text)); err != nil {
		t.Fatalf("content[0].text is not JSON: %v", err)
	}
	if compact.String() != res.Content[0].Text {
		t.Fatalf("content[0].text is not compact JSON")
	}
	if res.StructuredContent != nil && !bytes.Equal(res.StructuredContent, []byte(res.Content[0].Text)) {
		t.Fatalf("structuredContent and content[0].text differ:\n%s\n%s", res.StructuredContent, res.Content[0].Text)
	}
	var payload map[string]any
	if err := json.Unmarshal([]byte(res.Content[0].Text), &payload); err != nil {
		t.Fatal(err)
	}
	_, hasErr := payload["error"]
	if hasErr != res.IsError {
		t.Fatalf("isError=%v but payload has error=%v: %s", res.IsError, hasErr, r.raw)
	}
	return payload
}
