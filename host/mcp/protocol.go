package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/fluxgit/fluxgit/host/rpc"
)

// Protocol versions. The legacy generation negotiates one of these in
// initialize; the modern generation names its version on every request.
const (
	V20241105 = "2024-11-05"
	V20250326 = "2025-03-26"
	V20250618 = "2025-06-18"
	V20251125 = "2025-11-25"
	V20260728 = "2026-07-28"
)

// LegacyVersions are the initialize-era versions, newest first.
var LegacyVersions = []string{V20251125, V20250618, V20250326, V20241105}

// SupportedVersions is every version this server speaks, newest first. It is
// what server/discover and -32022 advertise, so a client that cannot speak
// the modern generation knows it may fall back to initialize.
var SupportedVersions = append([]string{V20260728}, LegacyVersions...)

// Reserved _meta keys of the modern generation.
const (
	metaProtocolVersion = "io.modelcontextprotocol/protocolVersion"
	metaClientCaps      = "io.modelcontextprotocol/clientCapabilities"
	metaClientInfo      = "io.modelcontextprotocol/clientInfo"
	metaServerInfo      = "io.modelcontextprotocol/serverInfo"
	metaLogLevel        = "io.modelcontextprotocol/logLevel"
	metaProgressToken   = "progressToken"
)

// JSON-RPC and MCP error codes the host emits.
const (
	codeParse              = -32700
	codeInvalidRequest     = -32600
	codeMethodNotFound     = -32601
	codeInvalidParams      = -32602
	codeInternal           = -32603
	codeResourceNotFound   = -32002
	codeMissingCapability  = -32021
	codeUnsupportedVersion = -32022
	codeRequestCancelled   = -32800
)

// generation is what the host knows about the protocol of one request.
type generation struct {
	modern  bool
	version string // negotiated legacy version or the modern version
	client  clientInfo
	// caps are the client capabilities the request may use: declared in
	// initialize (legacy) or in the request's own _meta (modern).
	caps clientCaps
	// logLevel is the lowest level sent as notifications/message for this
	// request: the session's logging/setLevel (legacy) or the request's
	// _meta logLevel (modern); "" sends none.
	logLevel string
	// progressToken is the request's _meta.progressToken, raw; nil when
	// the client asked for no progress.
	progressToken json.RawMessage
}

// clientCaps are the client capabilities a provider may use through the
// host.
type clientCaps struct {
	sampling    bool
	elicitation bool
	roots       bool
	// elicitationURL: elicitation.url is declared (URL mode); an
	// elicitation object without form or url means form only.
	elicitationURL bool
	// tasks: the request declared the Tasks extension
	// (extensions["io.modelcontextprotocol/tasks"], 2026-07-28).
	tasks bool
	// legacyTasks: a 2025-11-25 client declared capabilities.tasks, so
	// its tools/list carries execution.taskSupport (others pay no tokens
	// for a field they cannot use; params.task works either way).
	legacyTasks bool
	// ui: the client renders MCP Apps views (declaresUI).
	ui bool
}

// any reports whether the client can answer any question a provider may
// put to it.
func (c clientCaps) any() bool { return c.sampling || c.elicitation || c.roots }

// parseClientCaps reads the capabilities a client declared. A capability
// counts when its member is present and is an object, as the MCP schema
// defines them; anything else (null, false) declares nothing.
func parseClientCaps(m map[string]json.RawMessage) clientCaps {
	isObject := func(k string) bool {
		raw := bytes.TrimSpace(m[k])
		return len(raw) > 0 && raw[0] == '{'
	}
	caps := clientCaps{sampling: isObject("sampling"), elicitation: isObject("elicitation"), roots: isObject("roots")}
	if caps.elicitation {
		var modes map[string]json.RawMessage
		if json.Unmarshal(m["elicitation"], &modes) == nil {
			raw := bytes.TrimSpace(modes["url"])
			caps.elicitationURL = len(raw) > 0 && raw[0] == '{'
		}
	}
	if isObject("extensions") {
		var ext map[string]json.RawMessage
		if json.Unmarshal(m["extensions"], &ext) == nil {
			raw := bytes.TrimSpace(ext[extTasks])
			caps.tasks = len(raw) > 0 && raw[0] == '{'
		}
	}
	caps.legacyTasks = isObject("tasks")
	caps.ui = declaresUI(m)
	return caps
}

// progressToken returns the request's progress token when it is a string
// or an integer, the two types MCP allows; otherwise nil (no progress).
func progressToken(meta map[string]json.RawMessage) json.RawMessage {
	raw := bytes.TrimSpace(meta[metaProgressToken])
	if len(raw) == 0 {
		return nil
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if dec.Decode(&v) != nil {
		return nil
	}
	switch t := v.(type) {
	case string:
		return raw
	case json.Number:
		if _, err := t.Int64(); err == nil {
			return raw
		}
	}
	return nil
}

type clientInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Feature gates of the legacy generation: a field appears only from the
// version that defined it, so strict old clients never see unknown fields.
func (g generation) annotations() bool { return g.modern || g.version >= V20250326 }
func (g generation) structured() bool  { return g.modern || g.version >= V20250618 }

// toolErrorsForArguments: from 2025-11-25 on, an argument that fails
// validation is a tool execution error (a result with isError) rather than
// a JSON-RPC protocol error.
func (g generation) toolErrorsForArguments() bool { return g.modern || g.version >= V20251125 }

// legacyOnly are methods the modern generation removed.
var legacyOnly = []string{"initialize", "ping", "resources/subscribe", "resources/unsubscribe", "logging/setLevel", "notifications/initialized",
	// 2025-11-25 experimental tasks; the Tasks extension removed both.
	"tasks/result", "tasks/list"}

// modernOnly are methods the legacy generation does not have.
var modernOnly = []string{"server/discover", "subscriptions/listen", "tasks/update"}

func isLegacyOnly(m string) bool { return slices.Contains(legacyOnly, m) }
func isModernOnly(m string) bool { return slices.Contains(modernOnly, m) }

// negotiate implements legacy version negotiation: echo a version we speak,
// otherwise offer our newest legacy version.
func negotiate(requested string) string {
	if slices.Contains(LegacyVersions, requested) {
		return requested
	}
	return V20251125
}

// rpcError is a JSON-RPC error reply.
type rpcError struct {
	Code    int64
	Message string
	Data    any
	// audit, when set, is what the audit ledger keeps instead of Message:
	// a message that quotes argument details must not reach the ledger,
	// which records arguments only as fingerprints.
	audit string
}

// auditMessage is the refusal as the audit ledger may record it.
func (e *rpcError) auditMessage() string {
	if e.audit != "" {
		return e.audit
	}
	return e.Message
}

func (e *rpcError) Error() string { return fmt.Sprintf("%s (%d)", e.Message, e.Code) }

func errorf(code int64, data any, format string, args ...any) *rpcError {
	return &rpcError{Code: code, Message: fmt.Sprintf(format, args...), Data: data}
}

func invalidParams(details string) *rpcError {
	return &rpcError{Code: codeInvalidParams, Message: "Invalid params", Data: map[string]any{"details": details}}
}

// refuseParams is invalidParams with the details in the message too, for
// the newer methods (prompts, completion, logging, input round trips):
// many clients show a model only the message of an error.
func refuseParams(details string) *rpcError {
	e := invalidParams(details)
	e.Message += ": " + details
	return e
}

// spliceFields returns obj with the given key/value pairs prepended. Results
// are built once as raw JSON; the modern generation's decorations are
// spliced in rather than re-encoding the whole result.
func spliceFields(obj json.RawMessage, kv ...any) (json.RawMessage, error) {
	if len(obj) < 2 || obj[0] != '{' {
		return nil, fmt.Errorf("result is not a JSON object")
	}
	out := make([]byte, 0, len(obj)+256)
	out = append(out, '{')
	for i := 0; i+1 < len(kv); i += 2 {
		k, _ := rpc.Marshal(kv[i])
		v, err := rpc.Marshal(kv[i+1])
		if err != nil {
			return nil, err
		}
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, k...)
		out = append(out, ':')
		out = append(out, v...)
	}
	rest := obj[1:]
	if len(kv) > 0 && !isEmptyObjectTail(rest) {
		out = append(out, ',')
	}
	return append(out, rest...), nil
}

func isEmptyObjectTail(b []byte) bool {
	for _, c := range b {
		switch c {
		case ' ', '\t', '\n', '\r':
		case '}':
			return true
		default:
			return false
		}
	}
	return false
}
