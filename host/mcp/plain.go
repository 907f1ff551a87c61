package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/fluxgit/fluxgit/host/catalog"
	"github.com/fluxgit/fluxgit/internal/wire"
)

// plainError is the structuredContent of a failed result: plain tool. It
// carries the same code, message and data the envelope's error would, so
// a model reads the reason and recovery from the structure as well as
// from the text.
type plainError struct {
	Error payloadError `json:"error"`
}

// plainResult renders the result of a tool whose spec says result: plain:
// the provider's data object itself is structuredContent (a tool error is
// {"error": {code, message, data}} with isError), and the provider's text
// alone is the text content, so nothing is said twice; the provider's
// extra content blocks follow it. The object is still checked against the
// tool's outputSchema.
func (s *Server) plainResult(tool *catalog.Tool, g generation, res *wire.Result) (json.RawMessage, error) {
	var (
		payload []byte
		err     error
	)
	if res.Error != nil {
		data := res.Error.Data
		if len(data) == 0 {
			data = json.RawMessage("null")
		}
		payload, err = json.Marshal(plainError{payloadError{Code: res.Error.Code, Message: res.Error.Message, Data: data}})
		if err != nil {
			return nil, fmt.Errorf("encode error payload: %w", err)
		}
	} else {
		payload = res.Data
		if len(bytes.TrimSpace(payload)) == 0 {
			payload = []byte("{}")
		}
	}
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.UseNumber()
	var decoded any
	if err := dec.Decode(&decoded); err != nil {
		return nil, fmt.Errorf("decode payload: %w", err)
	}
	if _, isObject := decoded.(map[string]any); !isObject {
		s.log.Error("plain tool result is not a JSON object", "tool", tool.Name)
		return nil, errorf(codeInternal, map[string]any{"details": "the provider's result is not a JSON object", "tool": tool.Name, "retryable": false},
			"Tool result does not match its outputSchema")
	}
	if err := tool.ValidatePayloadFor(decoded, s.opts.ReferenceShape); err != nil {
		// A provider broke its own contract; never hand the agent data the
		// schema does not promise.
		s.log.Error("tool payload violates outputSchema", "tool", tool.Name, "details", validationDetails(err))
		return nil, errorf(codeInternal, map[string]any{"details": validationDetails(err), "tool": tool.Name, "retryable": false},
			"Tool result does not match its outputSchema")
	}
	text := res.Text
	if strings.TrimSpace(text) == "" {
		// Without a provider rendering, clients that ignore
		// structuredContent still get the object.
		if res.Error != nil {
			text = fmt.Sprintf("Error %d: %s", res.Error.Code, res.Error.Message)
		} else {
			text = string(payload)
		}
	}
	extra, err := providerContent(g, "result content", res.Content)
	if err != nil {
		return nil, s.brokenProvider(tool.Provider, fmt.Sprintf("tool %s: %v", tool.Name, err))
	}
	out := map[string]any{
		"content": append([]map[string]any{{"type": "text", "text": text}}, extra...),
		"isError": res.Error != nil,
	}
	if g.structured() {
		out["structuredContent"] = json.RawMessage(payload)
	}
	return json.Marshal(out)
}
