package operation

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// The bodies below are the wire contract, field by field, in the order the
// provider sends them: a key without omitempty is always sent (the
// schema's "required"), a key with omitempty only when given and non-blank.
// operation_test.go holds each struct against its schema.

// Header holds the keys every preview body starts with.
type Header struct {
	PreviewID      string `json:"previewId"`
	AgentID        string `json:"agentId"`
	IdempotencyKey string `json:"idempotencyKey"`
	OperationType  string `json:"operationType"`
	RepoPath       string `json:"repoPath"`
	Reason         string `json:"reason"`
	RequestedAt    string `json:"requestedAt"`
}

// Head returns the header; every body embeds Header, so every body is a
// Body.
func (h *Header) Head() *Header { return h }

// Body is any typed preview body (*Merge, *Rebase, ...).
type Body interface{ Head() *Header }

// Merge is the merge body: sourceRef into the local branch targetRef.
type Merge struct {
	Header
	SourceRef string `json:"sourceRef"`
	TargetRef string `json:"targetRef"`
	Strategy  string `json:"strategy"`
}

// Rebase is the rebase body; interactive is always false.
type Rebase struct {
	Header
	CurrentRef  string `json:"currentRef"`
	OntoRef     string `json:"ontoRef"`
	Interactive bool   `json:"interactive"`
}

// Discard is the discard body.
type Discard struct {
	Header
	Paths []string `json:"paths"`
}

// Reset is the reset body.
type Reset struct {
	Header
	TargetRef string `json:"targetRef"`
	Mode      string `json:"mode"`
}

// Patch is the patch body.
type Patch struct {
	Header
	PatchContent string `json:"patchContent"`
	ApplyToIndex bool   `json:"applyToIndex"`
}

// Plan is the plan body: 1 to MaxPlanSteps steps under one restore point.
type Plan struct {
	Header
	Steps []PlanStep `json:"steps"`
}

// Worktree is the worktree body; path is absent for the default location.
type Worktree struct {
	Header
	Branch string `json:"branch"`
	Path   string `json:"path,omitempty"`
}

// Commit is the commit body.
type Commit struct {
	Header
	Message  string `json:"message"`
	StageAll bool   `json:"stageAll"`
	// A pointer, so an empty list the caller gave is still sent (and
	// told apart from no list by the executor).
	Paths *[]string `json:"paths,omitempty"`
}

// Push is the push body.
type Push struct {
	Header
	Remote         string `json:"remote"`
	Branch         string `json:"branch,omitempty"`
	SetUpstream    bool   `json:"setUpstream"`
	ForceWithLease bool   `json:"forceWithLease"`
}

// Branch is the branch body.
type Branch struct {
	Header
	Name       string `json:"name"`
	StartPoint string `json:"startPoint,omitempty"`
	// A pointer: always sent, and a body without it (a lenient caller of
	// the executor) means true, the tool's default.
	Checkout *bool `json:"checkout"`
}

// BranchDelete is the branchDelete body.
type BranchDelete struct {
	Header
	Targets []DeleteTarget `json:"targets"`
}

// DeleteTarget is one repository of a branchDelete and the short branch
// names to delete there.
type DeleteTarget struct {
	RepoPath string   `json:"repoPath"`
	Branches []string `json:"branches"`
}

// SubmodulePointer is the submodulePointer body; message is sent exactly
// when direction is record.
type SubmodulePointer struct {
	Header
	ParentPath            string `json:"parentPath"`
	RelativePath          string `json:"relativePath"`
	Direction             string `json:"direction"`
	Message               string `json:"message,omitempty"`
	ExpectedRecordedOid   string `json:"expectedRecordedOid,omitempty"`
	ExpectedCheckedOutOid string `json:"expectedCheckedOutOid,omitempty"`
}

// Cancel is the body of POST CancelPath<previewId>.
type Cancel struct {
	AgentID string `json:"agentId"`
}

// The plan steps. Nothing is defaulted inside a step, so only each step's
// own essential keys are required (schemas/operations/plan.schema.json,
// $defs).

// MergeStep is a merge plan step (and a merge body without its header).
type MergeStep struct {
	OperationType string `json:"operationType"`
	SourceRef     string `json:"sourceRef"`
	TargetRef     string `json:"targetRef"`
	Strategy      string `json:"strategy,omitempty"`
}

// RebaseStep is a rebase plan step.
type RebaseStep struct {
	OperationType string `json:"operationType"`
	CurrentRef    string `json:"currentRef,omitempty"`
	OntoRef       string `json:"ontoRef"`
	Interactive   bool   `json:"interactive,omitempty"`
}

// DiscardStep is a discard plan step.
type DiscardStep struct {
	OperationType string   `json:"operationType"`
	Paths         []string `json:"paths"`
}

// ResetStep is a reset plan step.
type ResetStep struct {
	OperationType string `json:"operationType"`
	TargetRef     string `json:"targetRef"`
	Mode          string `json:"mode,omitempty"`
}

// PatchStep is a patch plan step.
type PatchStep struct {
	OperationType string `json:"operationType"`
	PatchContent  string `json:"patchContent"`
	ApplyToIndex  bool   `json:"applyToIndex,omitempty"`
}

// Step returns the body as a merge step, so one executor function runs
// both.
func (b *Merge) Step() *MergeStep {
	return &MergeStep{OperationType: "merge", SourceRef: b.SourceRef, TargetRef: b.TargetRef, Strategy: b.Strategy}
}

// Step returns the body as a rebase step.
func (b *Rebase) Step() *RebaseStep {
	return &RebaseStep{OperationType: "rebase", CurrentRef: b.CurrentRef, OntoRef: b.OntoRef, Interactive: b.Interactive}
}

// Step returns the body as a discard step.
func (b *Discard) Step() *DiscardStep {
	return &DiscardStep{OperationType: "discard", Paths: b.Paths}
}

// Step returns the body as a reset step.
func (b *Reset) Step() *ResetStep {
	return &ResetStep{OperationType: "reset", TargetRef: b.TargetRef, Mode: b.Mode}
}

// Step returns the body as a patch step.
func (b *Patch) Step() *PatchStep {
	return &PatchStep{OperationType: "patch", PatchContent: b.PatchContent, ApplyToIndex: b.ApplyToIndex}
}

// AsStep returns a merge, rebase, discard, reset or patch body as the
// equivalent plan step body (nil for the other operations), so the
// executor runs a step and a whole operation with one function.
func AsStep(b Body) any {
	switch b := b.(type) {
	case *Merge:
		return b.Step()
	case *Rebase:
		return b.Step()
	case *Discard:
		return b.Step()
	case *Reset:
		return b.Step()
	case *Patch:
		return b.Step()
	}
	return nil
}

// PlanStep is one step of a plan: its operation type and its typed body.
type PlanStep struct {
	// OperationType is the step's operationType as sent.
	OperationType string
	// Body is a *MergeStep, *RebaseStep, *DiscardStep, *ResetStep or
	// *PatchStep; nil when OperationType is none of PlanStepOps.
	Body any
	// Raw is the step exactly as given; MarshalJSON sends it unchanged,
	// so the provider forwards the agent's step key for key.
	Raw json.RawMessage
}

// StepBody returns a new zero step body for op, nil when op cannot be a
// plan step.
func StepBody(op string) any {
	switch op {
	case "merge":
		return &MergeStep{}
	case "rebase":
		return &RebaseStep{}
	case "discard":
		return &DiscardStep{}
	case "reset":
		return &ResetStep{}
	case "patch":
		return &PatchStep{}
	}
	return nil
}

// UnmarshalJSON decodes a step into the body of its operationType.
func (s *PlanStep) UnmarshalJSON(data []byte) error {
	var head struct {
		OperationType string `json:"operationType"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return fmt.Errorf("plan step: %w", err)
	}
	s.OperationType = head.OperationType
	s.Raw = append(json.RawMessage(nil), bytes.TrimSpace(data)...)
	s.Body = StepBody(head.OperationType)
	if s.Body == nil {
		return nil
	}
	if err := json.Unmarshal(data, s.Body); err != nil {
		return fmt.Errorf("%s plan step: %w", head.OperationType, err)
	}
	return nil
}

// MarshalJSON writes Raw when set, otherwise Body.
func (s PlanStep) MarshalJSON() ([]byte, error) {
	if len(s.Raw) > 0 {
		return s.Raw, nil
	}
	return json.Marshal(s.Body)
}

// New returns a new zero body for op (a *Merge for "merge", ...), nil for
// an unknown op.
func New(op string) Body {
	for _, o := range All {
		if o.Name == op {
			return o.New()
		}
	}
	return nil
}

// Decode decodes body into the typed body of op. It checks only that the
// JSON fits the Go types (Validate checks the contract): the executor's
// tests bind partial bodies, and the gateway has validated every body it
// journals.
func Decode(op string, body []byte) (Body, error) {
	v := New(op)
	if v == nil {
		return nil, fmt.Errorf("unknown operation type %q", op)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return nil, err
	}
	return v, nil
}
