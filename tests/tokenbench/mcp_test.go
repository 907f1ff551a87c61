package tokenbench

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// protocolVersion is the MCP revision the benchmark client speaks; most
// clients in use negotiate it, and the tool result text does not depend on it.
const protocolVersion = "2025-06-18"

// mcpClient drives one fluxgit process over stdio with plain JSON-RPC, the
// way an MCP client does, so the counted text is exactly what a model reads.
type mcpClient struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string
	done   chan struct{}
	id     int
	mu     sync.Mutex
	stderr bytes.Buffer
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func startMCP(bin string, env []string) (*mcpClient, error) {
	c := &mcpClient{lines: make(chan string, 64), done: make(chan struct{})}
	c.cmd = exec.Command(bin)
	c.cmd.Env = env
	c.cmd.Stderr = lockedWriter{&c.mu, &c.stderr}
	var err error
	if c.stdin, err = c.cmd.StdinPipe(); err != nil {
		return nil, fmt.Errorf("fluxgit stdin: %w", err)
	}
	stdout, err := c.cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("fluxgit stdout: %w", err)
	}
	if err := c.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start fluxgit: %w", err)
	}
	go func() {
		defer close(c.lines)
		r := bufio.NewReaderSize(stdout, 1<<20)
		for {
			line, err := r.ReadString('\n')
			if line != "" {
				c.lines <- strings.TrimRight(line, "\n")
			}
			if err != nil {
				return
			}
		}
	}()
	go func() { _ = c.cmd.Wait(); close(c.done) }()
	if _, err := c.request("initialize", map[string]any{
		"protocolVersion": protocolVersion,
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": "fluxgit-tokenbench", "version": "1.0.0"},
	}); err != nil {
		c.close()
		return nil, err
	}
	if err := c.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"}); err != nil {
		c.close()
		return nil, err
	}
	return c, nil
}

func (c *mcpClient) send(msg any) error {
	b, err := json.Marshal(msg)
	if err != nil {
		return fmt.Errorf("encode request: %w", err)
	}
	if _, err := c.stdin.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("write to fluxgit: %w", err)
	}
	return nil
}

func (c *mcpClient) stderrText() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stderr.String()
}

// request sends one request and returns its result, skipping notifications.
func (c *mcpClient) request(method string, params any) (json.RawMessage, error) {
	c.id++
	if err := c.send(map[string]any{"jsonrpc": "2.0", "id": c.id, "method": method, "params": params}); err != nil {
		return nil, err
	}
	timeout := time.After(2 * time.Minute)
	for {
		select {
		case line, ok := <-c.lines:
			if !ok {
				return nil, fmt.Errorf("fluxgit closed stdout during %s; stderr:\n%s", method, c.stderrText())
			}
			var r struct {
				ID     *int            `json:"id"`
				Result json.RawMessage `json:"result"`
				Error  json.RawMessage `json:"error"`
			}
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				return nil, fmt.Errorf("fluxgit wrote a line that is not JSON: %q: %w", line, err)
			}
			if r.ID == nil || *r.ID != c.id {
				continue
			}
			if r.Error != nil {
				return nil, fmt.Errorf("%s failed: %s", method, r.Error)
			}
			return r.Result, nil
		case <-timeout:
			return nil, fmt.Errorf("no reply to %s within 2 minutes; stderr:\n%s", method, c.stderrText())
		}
	}
}

// toolResult is what a tools/call result hands a client: the text of its
// content items, concatenated, and the compact JSON of structuredContent
// ("" when absent). Clients differ in what they forward to the model, so
// both are kept and counted.
type toolResult struct {
	text       string
	structured string
	isError    bool
}

// callTool calls one tool and returns what each client style can forward.
func (c *mcpClient) callTool(name string, args any) (toolResult, error) {
	res, err := c.request("tools/call", map[string]any{"name": name, "arguments": args})
	if err != nil {
		return toolResult{}, err
	}
	var r struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		StructuredContent json.RawMessage `json:"structuredContent"`
		IsError           bool            `json:"isError"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return toolResult{}, fmt.Errorf("decode %s result: %w", name, err)
	}
	var b strings.Builder
	for _, item := range r.Content {
		if item.Type != "text" {
			return toolResult{}, fmt.Errorf("%s returned a %q content item; the benchmark counts text only", name, item.Type)
		}
		b.WriteString(item.Text)
	}
	out := toolResult{text: b.String(), isError: r.IsError}
	if len(r.StructuredContent) > 0 && string(r.StructuredContent) != "null" {
		var buf bytes.Buffer
		if err := json.Compact(&buf, r.StructuredContent); err != nil {
			return toolResult{}, fmt.Errorf("compact %s structuredContent: %w", name, err)
		}
		out.structured = buf.String()
	}
	return out, nil
}

// listTools returns the compact JSON of the tools/list result's tools
// array, every page of it, in the order served.
func (c *mcpClient) listTools() ([]json.RawMessage, error) {
	var all []json.RawMessage
	var cursor string
	for page := 0; page < 100; page++ {
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		res, err := c.request("tools/list", params)
		if err != nil {
			return nil, err
		}
		var r struct {
			Tools      []json.RawMessage `json:"tools"`
			NextCursor string            `json:"nextCursor"`
		}
		if err := json.Unmarshal(res, &r); err != nil {
			return nil, fmt.Errorf("decode tools/list: %w", err)
		}
		all = append(all, r.Tools...)
		if r.NextCursor == "" {
			return all, nil
		}
		cursor = r.NextCursor
	}
	return nil, fmt.Errorf("tools/list did not end within 100 pages")
}

func (c *mcpClient) close() {
	_ = c.stdin.Close()
	select {
	case <-c.done:
	case <-time.After(10 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.done
	}
}
