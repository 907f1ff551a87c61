package mcp

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/fluxgit/fluxgit/host/rpc"
)

// logLevels are the RFC 5424 severities MCP uses, least severe first.
var logLevels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// levelRank orders a level name; -1 when it is not one.
func levelRank(level string) int {
	for i, l := range logLevels {
		if l == level {
			return i
		}
	}
	return -1
}

func badLevel(where string) string {
	return where + " must be one of " + strings.Join(logLevels, ", ")
}

// setLevel implements logging/setLevel: it sets the lowest level this
// session receives as notifications/message. Until a client sets one it
// receives none: log lines cost the model tokens, so they are opt-in.
func (sess *Session) setLevel(p params) (json.RawMessage, error) {
	var level string
	if raw, ok := p["level"]; !ok || json.Unmarshal(raw, &level) != nil || levelRank(level) < 0 {
		return nil, refuseParams(badLevel("params.level"))
	}
	sess.mu.Lock()
	sess.logLevel = level
	sess.mu.Unlock()
	return json.RawMessage(`{}`), nil
}

// maxLogsPerCall bounds the log messages one call may send the client; the
// rest are counted and reported once when the call ends, so a chatty
// provider cannot flood the model's context.
const maxLogsPerCall = 100

// wants reports whether a message at level reaches a client whose
// threshold is min ("" wants none).
func wants(min, level string) bool {
	r := levelRank(level)
	return min != "" && r >= 0 && r >= levelRank(min)
}

// logMessage renders notifications/message params.
func logMessage(level, logger string, data json.RawMessage) (json.RawMessage, error) {
	m := map[string]any{"level": level, "data": data}
	if len(data) == 0 {
		m["data"] = nil
	}
	if logger != "" {
		m["logger"] = logger
	}
	b, err := rpc.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encode log message: %w", err)
	}
	return b, nil
}
