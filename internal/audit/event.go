package audit

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Labels of an event (schemas/audit-entry.schema.json describes each).
const (
	EventToolCall       = "tool_call"
	EventWriteProposal  = "write_proposal"
	EventProposalCancel = "proposal_cancel"
	EventWriteBlock     = "write_block"
	// EventHumanDecision: a person approved, rejected or reconciled a
	// proposal, or undid a restore point, at the approval gateway.
	EventHumanDecision = "human_decision"
	// EventOperationExecution: the approval gateway executed an approved
	// proposal (completed or failed).
	EventOperationExecution = "operation_execution"

	ApprovalNotRequired = "not_required"
	ApprovalUIHandshake = "ui_handshake"
	ApprovalDenied      = "denied"
	// ApprovalApproved and ApprovalRejected are a person's verdict at the
	// approval gateway (human_decision and operation_execution entries).
	ApprovalApproved = "approved"
	ApprovalRejected = "rejected"

	RiskNone   = "none"
	RiskLow    = "low"
	RiskMedium = "medium"
	RiskHigh   = "high"

	ResultSuccess = "success"
	ResultError   = "error"
	ResultBlocked = "blocked"
)

// Bounds of the free-text fields.
const (
	// MaxSummaryChars bounds summary (characters, not bytes).
	MaxSummaryChars = 512
	// MaxToolChars bounds the name of a served tool.
	MaxToolChars = 256
	// MaxUnknownToolChars bounds the prefix kept of a name no tool has:
	// that name is the caller's free text, so the entry keeps its
	// fingerprint (toolFingerprint) and only this much of it.
	MaxUnknownToolChars = 64
	// maxReasonChars bounds the refusal message quoted in a summary.
	maxReasonChars = 160
	// maxSessionBytes bounds the sanitized agent id.
	maxSessionBytes = 128
	// FallbackSessionID is the agent id of a client that gave no usable name.
	FallbackSessionID = "external-mcp-sidecar"
)

// Event is one tools/call (or one run of coalesced refusals) before
// chaining: every event field of schemas/audit-entry.schema.json. It never
// holds arguments, paths or identifiers in clear.
type Event struct {
	// Timestamp is milliseconds since the Unix epoch.
	Timestamp int64
	Tool      string
	EventType string
	// RepoScope names the repository without disclosing it (see RepoScope).
	RepoScope string
	// ArgsFingerprint is "sha256:<hex>" of the canonical arguments; empty
	// when the call had no arguments (written as null).
	ArgsFingerprint string
	Risk            string
	Approval        string
	Result          string
	SessionID       string
	DurationMS      int64
	Summary         string
	ReadOnly        bool
	// ToolFingerprint is "sha256:<hex>" of the full tool name, set for
	// names no tool has (Tool then holds a bounded prefix only).
	ToolFingerprint string
	// Count, FirstAt and LastAt describe a coalesced entry: Count refused
	// calls with the same coalescing key, the first ending at FirstAt and
	// the last at LastAt (ms since the epoch). Count 0: a single call.
	Count           int64
	FirstAt, LastAt int64
}

// object renders the event's fields (no chain fields yet).
func (e Event) object() Object {
	var fp any
	if e.ArgsFingerprint != "" {
		fp = e.ArgsFingerprint
	}
	o := Object{
		{"approval", e.Approval},
		{"args_fingerprint", fp},
		{"duration_ms", e.DurationMS},
		{"event_type", e.EventType},
		{"readOnly", e.ReadOnly},
		{"repo_scope", e.RepoScope},
		{"result", e.Result},
		{"risk", e.Risk},
		{"session_id", e.SessionID},
		{"sidecarReadOnly", true},
		{"summary", BoundText(e.Summary, MaxSummaryChars)},
		{"timestamp", e.Timestamp},
		{"tool", BoundText(e.Tool, MaxToolChars)},
	}
	if e.ToolFingerprint != "" {
		o = o.Set("toolFingerprint", e.ToolFingerprint)
	}
	if e.Count > 0 {
		o = o.Set("count", e.Count).Set("firstAt", e.FirstAt).Set("lastAt", e.LastAt)
	}
	return o
}

// EventFromCall builds the ledger event of one tools/call.
func EventFromCall(rec CallRecord) Event {
	end := rec.Start.Add(rec.Duration)
	if rec.Start.IsZero() {
		end = time.Now()
	}
	e := Event{
		Timestamp:       end.UnixMilli(),
		Tool:            rec.Tool,
		RepoScope:       RepoScope(rec.ScopeArguments()),
		ArgsFingerprint: ArgsFingerprint(rec.Arguments),
		SessionID:       SessionID(rec.ClientName),
		DurationMS:      rec.Duration.Milliseconds(),
		Risk:            RiskNone,
		Approval:        ApprovalNotRequired,
	}
	tool := BoundText(rec.Tool, MaxToolChars)
	var class string
	switch {
	case !rec.Known:
		e.EventType, e.Approval, class = EventWriteBlock, ApprovalDenied, "tool"
		e.ToolFingerprint = sha256Label([]byte(rec.Tool))
		tool = BoundText(rec.Tool, MaxUnknownToolChars)
		e.Tool = tool
	case rec.ReadOnly:
		// Lint holds read-only tools to tool_call with risk none; a
		// hand-built catalog cannot make a read promise a risk either.
		e.EventType, e.ReadOnly, class = EventToolCall, true, "read-only tool"
	case rec.Event == EventWriteProposal:
		e.EventType, e.Approval, class = EventWriteProposal, ApprovalUIHandshake, "write-proposal tool"
		e.Risk = knownRisk(rec.Risk)
	case rec.Event == EventProposalCancel:
		e.EventType, class = EventProposalCancel, "proposal-cancel tool"
		e.Risk = knownRisk(rec.Risk)
	default: // a write tool outside the proposal family (e.g. a roster check-in)
		e.EventType, class = EventToolCall, "tool"
		e.Risk = knownRisk(rec.Risk)
	}
	switch rec.Outcome {
	case OutcomeSuccess:
		e.Result = ResultSuccess
		e.Summary = class + " " + tool + " completed"
	case OutcomeError:
		e.Result = ResultError
		e.Summary = class + " " + tool + " returned a structured error"
	default:
		e.Result, e.EventType, e.Approval = ResultBlocked, EventWriteBlock, ApprovalDenied
		msg := rec.ErrorMessage
		if !rec.Known {
			// The message quotes the name again; the entry holds it once, bounded.
			msg = "no tool of this name is served"
		}
		if msg == "" {
			msg = "request refused"
		}
		msg = BoundText(msg, maxReasonChars)
		e.Summary = class + " " + tool + " was blocked: " + msg
	}
	return e
}

// knownRisk is the record's risk label (from the tool's spec), or none
// when it states none the ledger schema knows.
func knownRisk(r string) string {
	switch r {
	case RiskLow, RiskMedium, RiskHigh:
		return r
	}
	return RiskNone
}

// ArgsFingerprint is "sha256:" + hex SHA-256 of the canonical JSON of the
// raw arguments; "" when there are none (absent or null). Arguments that
// cannot be canonicalized (a number beyond a double) are hashed as sent.
func ArgsFingerprint(raw []byte) string {
	if len(raw) == 0 {
		return ""
	}
	v, err := Parse(raw)
	if err != nil {
		return sha256Label(raw)
	}
	if v == nil {
		return ""
	}
	b, _ := Canonical(v)
	return sha256Label(b)
}

// repoIDDomain separates repoId hashes from every other hash in the ledger.
const repoIDDomain = "fluxgit-mcp-repo-id-v1\x00"

// RepoScope names the repository a call targets without disclosing it:
//
//	repoId / repo_id  -> "repoId:sha256:<hex SHA-256(repoIDDomain ‖ canonical JSON of the value)>"
//	repoPath          -> "repoPath:sha256:<hex SHA-256(canonical JSON of the value)>"
//	                     (the argument fingerprint of the raw path string, as the reference writes it)
//	repoPaths / repositories (arrays) -> "fleet:<count>"
//	otherwise         -> "unknown"
//
// The reference stores repoId verbatim; fluxgit never does.
func RepoScope(raw []byte) string {
	if len(raw) == 0 {
		return "unknown"
	}
	v, err := Parse(raw)
	if err != nil {
		return "unknown"
	}
	args, ok := v.(Object)
	if !ok {
		return "unknown"
	}
	for _, k := range []string{"repoId", "repo_id"} {
		if id, ok := args.Get(k); ok && id != nil {
			b, _ := Canonical(id)
			return "repoId:" + sha256Label(append([]byte(repoIDDomain), b...))
		}
	}
	if p, ok := args.Get("repoPath"); ok && p != nil {
		b, _ := Canonical(p)
		return "repoPath:" + sha256Label(b)
	}
	for _, k := range []string{"repoPaths", "repositories"} {
		if a, ok := args.Get(k); ok {
			if list, ok := a.([]any); ok {
				return "fleet:" + itoa(len(list))
			}
		}
	}
	return "unknown"
}

func itoa(n int) string {
	b, _ := AppendCanonical(nil, n)
	return string(b)
}

func sha256Label(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// SessionID sanitizes a self-declared agent name (clientInfo.name): trim; characters
// outside [A-Za-z0-9._:-] become '-'; runs of '-' collapse; at most 128
// bytes; '-' trimmed from both ends; empty becomes external-mcp-sidecar.
func SessionID(name string) string {
	name = strings.TrimSpace(name)
	b := make([]byte, 0, len(name))
	for _, r := range name {
		ok := r < utf8.RuneSelf && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' ||
			r == '.' || r == '_' || r == ':' || r == '-')
		c := byte(r)
		if !ok {
			c = '-'
		}
		if c == '-' && len(b) > 0 && b[len(b)-1] == '-' {
			continue
		}
		b = append(b, c)
	}
	if len(b) > maxSessionBytes {
		b = b[:maxSessionBytes]
	}
	s := strings.Trim(string(b), "-")
	if s == "" {
		return FallbackSessionID
	}
	return s
}

// BoundText flattens control characters to spaces and bounds s to max
// characters: a longer text keeps max-1 characters followed by '.'.
// Invalid UTF-8 becomes U+FFFD.
func BoundText(s string, max int) string {
	clean := true
	n := 0
	for _, r := range s {
		n++
		if unicode.IsControl(r) || r == utf8.RuneError {
			clean = false
		}
	}
	if clean && n <= max {
		return s
	}
	var b strings.Builder
	i := 0
	for _, r := range s {
		if n > max && i == max-1 {
			b.WriteByte('.')
			break
		}
		if unicode.IsControl(r) {
			r = ' '
		}
		b.WriteRune(r)
		i++
	}
	return b.String()
}
