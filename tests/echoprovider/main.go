// Command echoprovider is the smallest third-party provider: it exists so
// the tests can prove an external executable plus its own spec files,
// registered by configuration, is served through the host like a built-in.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fluxgit/fluxgit/plugins/sdk"
)

// echo also owns one resource, echo://counter, so the tests can exercise
// resource reads and subscriptions end to end.
type echo struct {
	sdk.Unimplemented
	*sdk.Broadcaster
	mu      sync.Mutex
	counter int
}

func (e *echo) WatchResources(ctx context.Context, ch chan<- sdk.ResourceChange) error {
	return e.Broadcaster.WatchResources(ctx, ch)
}

func (e *echo) ReadResource(_ context.Context, uri string, _ sdk.Meta) (*sdk.Resource, error) {
	if uri != "echo://counter" {
		return nil, sdk.ErrResourceNotFound
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return &sdk.Resource{URI: uri, MimeType: "text/plain", Text: strconv.Itoa(e.counter)}, nil
}

func (e *echo) CallTool(ctx context.Context, c *sdk.Call) (*sdk.Result, error) {
	switch c.Tool {
	case "echo.say":
		var in struct {
			Text string `json:"text"`
		}
		if err := json.Unmarshal(c.Arguments, &in); err != nil {
			return nil, fmt.Errorf("decode arguments: %w", err)
		}
		return sdk.OK("echo", map[string]any{"text": in.Text, "client": c.Meta.ClientName, "pid": os.Getpid()})
	case "echo.where":
		// The arguments exactly as the host forwarded them, so tests can
		// see which paths it canonicalised.
		return sdk.OK("echo", map[string]any{"args": json.RawMessage(c.Arguments)})
	case "echo.blob":
		var in struct {
			Bytes int `json:"bytes"`
		}
		if err := json.Unmarshal(c.Arguments, &in); err != nil {
			return nil, fmt.Errorf("decode arguments: %w", err)
		}
		return sdk.OK("echo", map[string]any{"blob": strings.Repeat("b", in.Bytes)})
	case "echo.sleep":
		// Blocks until cancelled (or the deadline), then records how it
		// ended, so tests can prove cancellation reached the provider.
		var in struct {
			Ms     int    `json:"ms"`
			Marker string `json:"marker"`
		}
		if err := json.Unmarshal(c.Arguments, &in); err != nil {
			return nil, fmt.Errorf("decode arguments: %w", err)
		}
		_ = os.WriteFile(in.Marker+".started", nil, 0o644)
		select {
		case <-ctx.Done():
			writeMarker(in.Marker, "cancelled")
			return nil, ctx.Err()
		case <-time.After(time.Duration(in.Ms) * time.Millisecond):
			writeMarker(in.Marker, "finished")
			return sdk.OK("echo", map[string]any{"slept": in.Ms})
		}
	case "echo.bump":
		// Adds by to the counter; a zero bump changes nothing and so
		// notifies nobody.
		var in struct {
			By int `json:"by"`
		}
		if err := json.Unmarshal(c.Arguments, &in); err != nil {
			return nil, fmt.Errorf("decode arguments: %w", err)
		}
		e.mu.Lock()
		e.counter += in.By
		n := e.counter
		e.mu.Unlock()
		if in.By != 0 {
			e.Publish(sdk.ResourceChange{URI: "echo://counter"})
		}
		return sdk.OK("echo", map[string]any{"counter": n})
	case "echo.noop":
		return &sdk.Result{Source: "echo", Data: json.RawMessage(`{}`)}, nil
	}
	return nil, fmt.Errorf("unknown tool %s", c.Tool)
}

func main() { sdk.Serve(&echo{Broadcaster: &sdk.Broadcaster{}}) }

// writeMarker records how a sleep ended. It writes a temporary file and
// renames it into place, so a test polling for the marker never reads it
// created but still empty (TestRequestIDReuse once read "").
func writeMarker(path, how string) {
	if os.WriteFile(path+".tmp", []byte(how), 0o644) == nil {
		_ = os.Rename(path+".tmp", path)
	}
}
