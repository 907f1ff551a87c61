package audit

import (
	"errors"
	"fmt"
	"time"
)

// EventPruned is the event_type of the entry retention appends before it
// deletes a rotated segment.
const EventPruned = "audit.pruned"

// prunedSessionID attributes audit.pruned entries to fluxgit itself.
const prunedSessionID = "fluxgit"

// Pruning is one deletion of a rotated segment, as an audit.pruned entry
// records it in the chain.
type Pruning struct {
	// Sequence is the audit.pruned entry's own sequence.
	Sequence uint64 `json:"sequence"`
	// Timestamp is when the pruning was recorded (ms since the epoch).
	Timestamp int64 `json:"timestamp"`
	// FirstSequence..LastSequence is the range of entries deleted.
	FirstSequence uint64   `json:"first_sequence"`
	LastSequence  uint64   `json:"last_sequence"`
	SegmentIDs    []string `json:"segment_ids"`
	Reason        string   `json:"reason"`
}

// prunedEvent is the audit.pruned entry for deleting segment s. It carries
// every event field (with neutral values) so that readers of the ledger
// see one shape, plus the pruned object.
func prunedEvent(s segmentFile, reason string) Object {
	return Object{
		{"approval", ApprovalNotRequired},
		{"args_fingerprint", nil},
		{"duration_ms", int64(0)},
		{"event_type", EventPruned},
		{"pruned", Object{
			{"firstSequence", s.first},
			{"lastSequence", s.last},
			{"reason", BoundText(reason, MaxSummaryChars)},
			{"segmentIds", []any{s.segmentID}},
		}},
		{"readOnly", false},
		{"repo_scope", "unknown"},
		{"result", ResultSuccess},
		{"risk", RiskNone},
		{"session_id", prunedSessionID},
		{"sidecarReadOnly", true},
		{"summary", fmt.Sprintf("retention deleted the rotated segment holding sequences %d..%d", s.first, s.last)},
		{"timestamp", time.Now().UnixMilli()},
		{"tool", ""},
	}
}

// readPruning decodes the pruned object of an audit.pruned entry whose
// chain fields were already checked.
func readPruning(o Object, seq uint64) (Pruning, error) {
	p := Pruning{Sequence: seq}
	if n, ok := mustNumber(o, "timestamp"); ok {
		fmt.Sscan(string(n), &p.Timestamp)
	}
	v, _ := o.Get("pruned")
	po, ok := v.(Object)
	if !ok {
		return p, errors.New("audit.pruned entry without a pruned object")
	}
	var err error
	if p.FirstSequence, err = uintField(po, "firstSequence"); err != nil {
		return p, fmt.Errorf("pruned.%w", err)
	}
	if p.LastSequence, err = uintField(po, "lastSequence"); err != nil {
		return p, fmt.Errorf("pruned.%w", err)
	}
	if p.FirstSequence == 0 || p.LastSequence < p.FirstSequence || p.LastSequence >= seq {
		return p, errors.New("pruned range is empty or does not precede the entry")
	}
	p.Reason, _ = stringField(po, "reason")
	ids, _ := po.Get("segmentIds")
	list, ok := ids.([]any)
	if !ok || len(list) == 0 {
		return p, errors.New("pruned.segmentIds missing")
	}
	for _, id := range list {
		s, ok := id.(string)
		if !ok || !uuidRE.MatchString(s) {
			return p, errors.New("pruned.segmentIds holds a value that is not a canonical UUID")
		}
		p.SegmentIDs = append(p.SegmentIDs, s)
	}
	return p, nil
}
