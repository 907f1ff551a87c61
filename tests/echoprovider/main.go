// Command echoprovider is the smallest third-party provider: it exists so
// the tests can prove an external executable plus its own spec files,
// registered by configuration, is served through the host like a built-in.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/fluxgit/fluxgit/plugins/sdk"
)

type echo struct{ sdk.Unimplemented }

func (echo) CallTool(ctx context.Context, c *sdk.Call) (*sdk.Result, error) {
	switch c.Tool {
	case "echo.say":
		var in struct {
			Text string `json:"text"`
		}
		if err := json.Unmarshal(c.Arguments, &in); err != nil {
			return nil, fmt.Errorf("decode arguments: %w", err)
		}
		return sdk.OK("echo", map[string]any{"text": in.Text, "client": c.Meta.ClientName, "pid": os.Getpid()})
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
		select {
		case <-ctx.Done():
			_ = os.WriteFile(in.Marker, []byte("cancelled"), 0o644)
			return nil, ctx.Err()
		case <-time.After(time.Duration(in.Ms) * time.Millisecond):
			_ = os.WriteFile(in.Marker, []byte("finished"), 0o644)
			return sdk.OK("echo", map[string]any{"slept": in.Ms})
		}
	case "echo.noop":
		return &sdk.Result{Source: "echo", Data: json.RawMessage(`{}`)}, nil
	}
	return nil, fmt.Errorf("unknown tool %s", c.Tool)
}

func main() { sdk.Serve(echo{}) }
