package proposals

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/fluxgit/fluxgit/internal/agentdetect"
	"github.com/fluxgit/fluxgit/internal/operation"
	"github.com/fluxgit/fluxgit/plugins/sdk"
)

// Input bounds of the tools' input schemas, the contract's own
// (internal/operation). The host enforces them with the tool's
// inputSchema; the provider checks them again because it must never send
// the gateway a body the contract does not describe, whoever called it.
const (
	maxRef          = operation.MaxText
	maxReason       = operation.MaxText
	maxPathLen      = operation.MaxPathLen
	maxPaths        = operation.MaxPaths
	maxPatch        = operation.MaxPatch
	maxCommitMsg    = operation.MaxCommitMessage
	maxPointerMsg   = operation.MaxPointerMessage
	maxPlanSteps    = operation.MaxPlanSteps
	maxDeleteRepos  = operation.MaxDeleteRepos
	maxDeleteBranch = operation.MaxDeleteBranches
)

// header holds the fields every preview body starts with. The bodies are
// the gateway contract's typed bodies (internal/operation), field by
// field: nothing from the arguments reaches the gateway unless it is named
// there.
type header = operation.Header

// commonArgs are the inputs every preview takes.
type commonArgs struct {
	RepoPath       string  `json:"repoPath"`
	RepoID         *string `json:"repoId"`
	Reason         string  `json:"reason"`
	IdempotencyKey *string `json:"idempotencyKey"`
}

// proposal is a preview ready to submit.
type proposal struct {
	op        string
	body      any
	previewID string
	repoPath  string
	// paths are the repository-relative paths the proposal touches, nil
	// when they cannot be known from the arguments.
	paths []string
	// proposer names this server process and the calling client to the
	// gateway (operation.ProposerHeader), never anything the model wrote.
	proposer operation.Proposer
}

// decodeStrict unmarshals arguments into v, refusing unknown keys and
// trailing data: the host validated them against the schema, so anything
// else means a host bug or a direct caller, and guessing would send the
// gateway something nobody asked for.
func decodeStrict(raw json.RawMessage, v any) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return sdk.InvalidArgument("arguments do not match the tool's input schema: " + err.Error())
	}
	if dec.More() {
		return sdk.InvalidArgument("arguments must be one JSON object")
	}
	return nil
}

// build decodes a preview's arguments and assembles its gateway body.
func (p *Provider) build(op string, call *sdk.Call) (*proposal, error) {
	v := newArgs(op)
	if v == nil {
		return nil, sdk.InvalidArgument("unknown operation " + op)
	}
	if err := decodeStrict(call.Arguments, v); err != nil {
		return nil, err
	}
	c := v.common()
	if err := c.check(); err != nil {
		return nil, err
	}
	id := p.id()
	fresh := p.id
	if r := resumeID(call); r != "" {
		// A re-sent call the host no longer held: the same proposal again,
		// which the gateway replays (card.go).
		id = r
	}
	if keyedByPreviewID(call) {
		fresh = func() string { return id }
	}
	h := header{
		PreviewID:      id,
		AgentID:        SanitizeAgentID(call.Meta.ClientName),
		IdempotencyKey: idempotencyKey(op, c.IdempotencyKey, fresh),
		OperationType:  op,
		RepoPath:       c.RepoPath,
		Reason:         c.Reason,
		RequestedAt:    p.clock().UTC().Format("2006-01-02T15:04:05.000Z07:00"),
	}
	body, paths, err := v.body(h)
	if err != nil {
		return nil, err
	}
	return &proposal{op: op, body: body, previewID: id, repoPath: c.RepoPath, paths: agentdetect.NormalizeProposalPaths(c.RepoPath, paths)}, nil
}

// previewArgs is one operation's decoded arguments.
type previewArgs interface {
	common() *commonArgs
	// body checks the operation's own arguments and returns the gateway
	// body plus the raw paths the proposal names (nil when unknown).
	body(h header) (any, []string, error)
}

func newArgs(op string) previewArgs {
	switch op {
	case "merge":
		return &mergeArgs{}
	case "rebase":
		return &rebaseArgs{}
	case "discard":
		return &discardArgs{}
	case "reset":
		return &resetArgs{}
	case "patch":
		return &patchArgs{}
	case "plan":
		return &planArgs{}
	case "worktree":
		return &worktreeArgs{}
	case "commit":
		return &commitArgs{}
	case "push":
		return &pushArgs{}
	case "branch":
		return &branchArgs{}
	case "branchDelete":
		return &branchDeleteArgs{}
	case "submodulePointer":
		return &submodulePointerArgs{}
	}
	return nil
}

func (c *commonArgs) common() *commonArgs { return c }

func (c *commonArgs) check() error {
	if err := absPath("repoPath", c.RepoPath); err != nil {
		return err
	}
	if err := text("reason", c.Reason, maxReason); err != nil {
		return err
	}
	if c.RepoID != nil {
		if err := text("repoId", *c.RepoID, maxRef); err != nil {
			return err
		}
	}
	if c.IdempotencyKey != nil && !ValidPreviewID(*c.IdempotencyKey) {
		return sdk.InvalidArgument("arguments.idempotencyKey must be 1-128 ASCII letters, digits, '-' or '_'; omit it to make this call a new proposal")
	}
	return nil
}

// text checks a required string: present and at most max characters.
func text(name, s string, max int) error {
	if s == "" {
		return sdk.InvalidArgument("arguments." + name + " is required and must not be empty")
	}
	if utf8.RuneCountInString(s) > max {
		return sdk.InvalidArgument(fmt.Sprintf("arguments.%s must be at most %d characters", name, max))
	}
	return nil
}

// optText checks an optional string that, when given, obeys text.
func optText(name string, s *string, max int) error {
	if s == nil {
		return nil
	}
	return text(name, *s, max)
}

func absPath(name, s string) error {
	if err := text(name, s, maxPathLen); err != nil {
		return err
	}
	if !filepath.IsAbs(s) {
		return sdk.InvalidArgument("arguments." + name + " must be an absolute filesystem path")
	}
	return nil
}

// enum returns *s, or def when absent, refusing anything not in allowed.
func enum(name string, s *string, def string, allowed ...string) (string, error) {
	if s == nil {
		return def, nil
	}
	for _, a := range allowed {
		if *s == a {
			return a, nil
		}
	}
	return "", sdk.InvalidArgument(fmt.Sprintf("arguments.%s must be one of %s", name, strings.Join(allowed, ", ")))
}

func flag(b *bool, def bool) bool {
	if b == nil {
		return def
	}
	return *b
}

func pathList(name string, paths []string, min int) error {
	if len(paths) < min || len(paths) > maxPaths {
		return sdk.InvalidArgument(fmt.Sprintf("arguments.%s must list %d to %d paths", name, min, maxPaths))
	}
	for i, s := range paths {
		if err := text(fmt.Sprintf("%s[%d]", name, i), s, maxPathLen); err != nil {
			return err
		}
	}
	return nil
}

func blank(s *string) bool { return s == nil || strings.TrimSpace(*s) == "" }

type mergeArgs struct {
	commonArgs
	SourceRef string  `json:"sourceRef"`
	TargetRef string  `json:"targetRef"`
	Strategy  *string `json:"strategy"`
}

func (a *mergeArgs) body(h header) (any, []string, error) {
	if err := text("sourceRef", a.SourceRef, maxRef); err != nil {
		return nil, nil, err
	}
	if err := text("targetRef", a.TargetRef, maxRef); err != nil {
		return nil, nil, err
	}
	strategy, err := enum("strategy", a.Strategy, "merge", "merge", "squash")
	if err != nil {
		return nil, nil, err
	}
	return &operation.Merge{Header: h, SourceRef: a.SourceRef, TargetRef: a.TargetRef, Strategy: strategy}, nil, nil
}

type rebaseArgs struct {
	commonArgs
	CurrentRef  *string `json:"currentRef"`
	OntoRef     string  `json:"ontoRef"`
	Interactive *bool   `json:"interactive"`
}

func (a *rebaseArgs) body(h header) (any, []string, error) {
	if err := optText("currentRef", a.CurrentRef, maxRef); err != nil {
		return nil, nil, err
	}
	if err := text("ontoRef", a.OntoRef, maxRef); err != nil {
		return nil, nil, err
	}
	if flag(a.Interactive, false) {
		return nil, nil, errInteractive("arguments.interactive")
	}
	current := "HEAD"
	if a.CurrentRef != nil {
		current = *a.CurrentRef
	}
	return &operation.Rebase{Header: h, CurrentRef: current, OntoRef: a.OntoRef, Interactive: false}, nil, nil
}

func errInteractive(where string) error {
	return sdk.InvalidArgument(where + " must be false: an interactive rebase needs a person at a terminal; propose a plain rebase or a plan instead")
}

type discardArgs struct {
	commonArgs
	Paths []string `json:"paths"`
}

func (a *discardArgs) body(h header) (any, []string, error) {
	if err := pathList("paths", a.Paths, 1); err != nil {
		return nil, nil, err
	}
	return &operation.Discard{Header: h, Paths: a.Paths}, a.Paths, nil
}

type resetArgs struct {
	commonArgs
	TargetRef string  `json:"targetRef"`
	Mode      *string `json:"mode"`
}

func (a *resetArgs) body(h header) (any, []string, error) {
	if err := text("targetRef", a.TargetRef, maxRef); err != nil {
		return nil, nil, err
	}
	mode, err := enum("mode", a.Mode, "mixed", "soft", "mixed", "hard")
	if err != nil {
		return nil, nil, err
	}
	return &operation.Reset{Header: h, TargetRef: a.TargetRef, Mode: mode}, nil, nil
}

type patchArgs struct {
	commonArgs
	PatchContent string `json:"patchContent"`
	ApplyToIndex *bool  `json:"applyToIndex"`
}

func (a *patchArgs) body(h header) (any, []string, error) {
	if err := text("patchContent", a.PatchContent, maxPatch); err != nil {
		return nil, nil, err
	}
	return &operation.Patch{Header: h, PatchContent: a.PatchContent, ApplyToIndex: flag(a.ApplyToIndex, false)}, agentdetect.PatchPaths(a.PatchContent), nil
}

type planArgs struct {
	commonArgs
	Steps json.RawMessage `json:"steps"`
}

// planStep is one step as the schema allows it; decoding into it only
// checks the step, the body carries the steps exactly as given.
type planStep struct {
	OperationType string    `json:"operationType"`
	SourceRef     *string   `json:"sourceRef"`
	TargetRef     *string   `json:"targetRef"`
	Strategy      *string   `json:"strategy"`
	CurrentRef    *string   `json:"currentRef"`
	OntoRef       *string   `json:"ontoRef"`
	Interactive   *bool     `json:"interactive"`
	Paths         *[]string `json:"paths"`
	Mode          *string   `json:"mode"`
	PatchContent  *string   `json:"patchContent"`
	ApplyToIndex  *bool     `json:"applyToIndex"`
}

// planStepKeys are the keys each step type may carry besides
// operationType; a key of another type makes the step ambiguous.
var planStepKeys = map[string][]string{
	"merge":   {"sourceRef", "targetRef", "strategy"},
	"rebase":  {"currentRef", "ontoRef", "interactive"},
	"discard": {"paths"},
	"reset":   {"targetRef", "mode"},
	"patch":   {"patchContent", "applyToIndex"},
}

func (a *planArgs) body(h header) (any, []string, error) {
	var raws []json.RawMessage
	if err := json.Unmarshal(a.Steps, &raws); err != nil || len(raws) < 1 || len(raws) > maxPlanSteps {
		return nil, nil, sdk.InvalidArgument(fmt.Sprintf("arguments.steps must be an array of 1 to %d step objects", maxPlanSteps))
	}
	var paths []string
	steps := make([]operation.PlanStep, len(raws))
	for i, raw := range raws {
		where := fmt.Sprintf("arguments.steps[%d]", i)
		var s planStep
		if err := decodeStrict(raw, &s); err != nil {
			return nil, nil, sdk.InvalidArgument(where + " has keys no plan step allows: " + err.Error())
		}
		sp, err := s.check(where, raw)
		if err != nil {
			return nil, nil, err
		}
		paths = append(paths, sp...)
		// The step goes to the gateway exactly as given (PlanStep keeps
		// its bytes); decoding it only types it for the contract.
		if err := json.Unmarshal(raw, &steps[i]); err != nil {
			return nil, nil, sdk.InvalidArgument(where + " does not fit the plan step contract: " + err.Error())
		}
	}
	return &operation.Plan{Header: h, Steps: steps}, paths, nil
}

// check validates one step and returns the paths it names.
func (s *planStep) check(where string, raw json.RawMessage) ([]string, error) {
	allowed, ok := planStepKeys[s.OperationType]
	if !ok {
		return nil, sdk.InvalidArgument(where + ".operationType must be one of merge, rebase, discard, reset, patch")
	}
	var keys map[string]json.RawMessage
	_ = json.Unmarshal(raw, &keys) // decodeStrict proved it is an object
	for k := range keys {
		if k != "operationType" && !slices.Contains(allowed, k) {
			return nil, sdk.InvalidArgument(fmt.Sprintf("%s.%s does not belong to a %s step (it takes %s)", where, k, s.OperationType, strings.Join(allowed, ", ")))
		}
	}
	refs := map[string]*string{"sourceRef": s.SourceRef, "targetRef": s.TargetRef, "currentRef": s.CurrentRef, "ontoRef": s.OntoRef}
	for name, r := range refs {
		if err := optText(strings.TrimPrefix(where, "arguments.")+"."+name, r, maxRef); err != nil {
			return nil, err
		}
	}
	need := func(name string, present bool) error {
		if !present {
			return sdk.InvalidArgument(where + "." + name + " is required for a " + s.OperationType + " step")
		}
		return nil
	}
	switch s.OperationType {
	case "merge":
		if err := need("sourceRef", s.SourceRef != nil); err != nil {
			return nil, err
		}
		if err := need("targetRef", s.TargetRef != nil); err != nil {
			return nil, err
		}
		_, err := enum(strings.TrimPrefix(where, "arguments.")+".strategy", s.Strategy, "merge", "merge", "squash")
		return nil, err
	case "rebase":
		if err := need("ontoRef", s.OntoRef != nil); err != nil {
			return nil, err
		}
		if flag(s.Interactive, false) {
			return nil, errInteractive(where + ".interactive")
		}
		return nil, nil
	case "discard":
		if err := need("paths", s.Paths != nil); err != nil {
			return nil, err
		}
		if err := pathList(strings.TrimPrefix(where, "arguments.")+".paths", *s.Paths, 1); err != nil {
			return nil, err
		}
		return *s.Paths, nil
	case "reset":
		if err := need("targetRef", s.TargetRef != nil); err != nil {
			return nil, err
		}
		_, err := enum(strings.TrimPrefix(where, "arguments.")+".mode", s.Mode, "mixed", "soft", "mixed", "hard")
		return nil, err
	default: // patch
		if err := need("patchContent", s.PatchContent != nil); err != nil {
			return nil, err
		}
		if err := text(strings.TrimPrefix(where, "arguments.")+".patchContent", *s.PatchContent, maxPatch); err != nil {
			return nil, err
		}
		return agentdetect.PatchPaths(*s.PatchContent), nil
	}
}

type worktreeArgs struct {
	commonArgs
	Branch string  `json:"branch"`
	Path   *string `json:"path"`
}

func (a *worktreeArgs) body(h header) (any, []string, error) {
	if err := text("branch", a.Branch, maxRef); err != nil {
		return nil, nil, err
	}
	b := &operation.Worktree{Header: h, Branch: a.Branch}
	if !blank(a.Path) {
		if err := absPath("path", *a.Path); err != nil {
			return nil, nil, err
		}
		b.Path = *a.Path
	}
	return b, nil, nil
}

type commitArgs struct {
	commonArgs
	Message  string    `json:"message"`
	Paths    *[]string `json:"paths"`
	StageAll *bool     `json:"stageAll"`
}

func (a *commitArgs) body(h header) (any, []string, error) {
	if err := text("message", a.Message, maxCommitMsg); err != nil {
		return nil, nil, err
	}
	b := &operation.Commit{Header: h, Message: a.Message, StageAll: flag(a.StageAll, false)}
	var paths []string
	if a.Paths != nil {
		if err := pathList("paths", *a.Paths, 0); err != nil {
			return nil, nil, err
		}
		list := *a.Paths
		b.Paths = &list
		if len(list) > 0 {
			paths = list
		}
	}
	return b, paths, nil
}

type pushArgs struct {
	commonArgs
	Remote         *string `json:"remote"`
	Branch         *string `json:"branch"`
	SetUpstream    *bool   `json:"setUpstream"`
	ForceWithLease *bool   `json:"forceWithLease"`
}

func (a *pushArgs) body(h header) (any, []string, error) {
	for name, s := range map[string]*string{"remote": a.Remote, "branch": a.Branch} {
		if s != nil && utf8.RuneCountInString(*s) > maxRef {
			return nil, nil, sdk.InvalidArgument(fmt.Sprintf("arguments.%s must be at most %d characters", name, maxRef))
		}
	}
	b := &operation.Push{Header: h, Remote: "origin", SetUpstream: flag(a.SetUpstream, false), ForceWithLease: flag(a.ForceWithLease, false)}
	if !blank(a.Remote) {
		b.Remote = *a.Remote
	}
	if !blank(a.Branch) {
		b.Branch = *a.Branch
	}
	return b, nil, nil
}

type branchArgs struct {
	commonArgs
	Name       string  `json:"name"`
	StartPoint *string `json:"startPoint"`
	Checkout   *bool   `json:"checkout"`
}

func (a *branchArgs) body(h header) (any, []string, error) {
	if err := text("name", a.Name, maxRef); err != nil {
		return nil, nil, err
	}
	if a.StartPoint != nil && utf8.RuneCountInString(*a.StartPoint) > maxRef {
		return nil, nil, sdk.InvalidArgument(fmt.Sprintf("arguments.startPoint must be at most %d characters", maxRef))
	}
	checkout := flag(a.Checkout, true)
	b := &operation.Branch{Header: h, Name: a.Name, Checkout: &checkout}
	if !blank(a.StartPoint) {
		b.StartPoint = *a.StartPoint
	}
	return b, nil, nil
}

type branchDeleteArgs struct {
	commonArgs
	Targets []operation.DeleteTarget `json:"targets"`
}

func (a *branchDeleteArgs) body(h header) (any, []string, error) {
	if len(a.Targets) < 1 || len(a.Targets) > maxDeleteRepos {
		return nil, nil, sdk.InvalidArgument(fmt.Sprintf("arguments.targets must list 1 to %d repositories", maxDeleteRepos))
	}
	targets := make([]operation.DeleteTarget, len(a.Targets))
	for i, t := range a.Targets {
		where := fmt.Sprintf("targets[%d]", i)
		if err := absPath(where+".repoPath", t.RepoPath); err != nil {
			return nil, nil, err
		}
		if len(t.Branches) < 1 || len(t.Branches) > maxDeleteBranch {
			return nil, nil, sdk.InvalidArgument(fmt.Sprintf("arguments.%s.branches must list 1 to %d branch names", where, maxDeleteBranch))
		}
		seen := map[string]bool{}
		for j, b := range t.Branches {
			name := fmt.Sprintf("%s.branches[%d]", where, j)
			if err := text(name, b, maxRef); err != nil {
				return nil, nil, err
			}
			if strings.HasPrefix(b, "refs/") {
				return nil, nil, sdk.InvalidArgument("arguments." + name + " must be a short branch name (\"feature/x\"), not a full ref starting with refs/")
			}
			if seen[b] {
				return nil, nil, sdk.InvalidArgument("arguments." + name + " duplicates an earlier branch of the same repository")
			}
			seen[b] = true
		}
		targets[i] = operation.DeleteTarget{RepoPath: t.RepoPath, Branches: t.Branches}
	}
	return &operation.BranchDelete{Header: h, Targets: targets}, nil, nil
}

type submodulePointerArgs struct {
	commonArgs
	ParentPath            *string `json:"parentPath"`
	RelativePath          string  `json:"relativePath"`
	Direction             string  `json:"direction"`
	Message               *string `json:"message"`
	ExpectedRecordedOid   *string `json:"expectedRecordedOid"`
	ExpectedCheckedOutOid *string `json:"expectedCheckedOutOid"`
}

func (a *submodulePointerArgs) body(h header) (any, []string, error) {
	parent := ""
	if a.ParentPath != nil {
		parent = *a.ParentPath
		if utf8.RuneCountInString(parent) > maxPathLen {
			return nil, nil, sdk.InvalidArgument(fmt.Sprintf("arguments.parentPath must be at most %d characters", maxPathLen))
		}
	}
	if err := text("relativePath", a.RelativePath, maxPathLen); err != nil {
		return nil, nil, err
	}
	for name, s := range map[string]string{"parentPath": parent, "relativePath": a.RelativePath} {
		if filepath.IsAbs(s) || strings.HasPrefix(s, "/") {
			return nil, nil, sdk.InvalidArgument("arguments." + name + " must be relative to the repository, not an absolute path")
		}
	}
	b := &operation.SubmodulePointer{Header: h, ParentPath: parent, RelativePath: a.RelativePath}
	switch a.Direction {
	case "record":
		if a.Message == nil {
			return nil, nil, sdk.InvalidArgument("arguments.message is required when direction is record: it is the message of the commit that records the new pointer")
		}
		if err := text("message", *a.Message, maxPointerMsg); err != nil {
			return nil, nil, err
		}
		b.Message = *a.Message
	case "return":
		if a.Message != nil {
			return nil, nil, sdk.InvalidArgument("arguments.message is not allowed when direction is return (returning makes no commit); remove it")
		}
	default:
		return nil, nil, sdk.InvalidArgument("arguments.direction must be record or return")
	}
	b.Direction = a.Direction
	for _, pin := range []struct {
		name string
		in   *string
		out  *string
	}{
		{"expectedRecordedOid", a.ExpectedRecordedOid, &b.ExpectedRecordedOid},
		{"expectedCheckedOutOid", a.ExpectedCheckedOutOid, &b.ExpectedCheckedOutOid},
	} {
		if pin.in == nil || *pin.in == "" {
			continue
		}
		if !fullOID(*pin.in) {
			return nil, nil, sdk.InvalidArgument("arguments." + pin.name + " must be a full lowercase object id (40 or 64 hex digits); omit it to skip the check")
		}
		*pin.out = *pin.in
	}
	return b, []string{joinRel(parent, a.RelativePath)}, nil
}

func fullOID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// joinRel joins a submodule's parent path and its path inside the parent
// with '/', whatever separator the caller used.
func joinRel(parent, rel string) string {
	parent = strings.Trim(strings.ReplaceAll(parent, `\`, "/"), "/")
	if parent == "" || parent == "." {
		return rel
	}
	return parent + "/" + rel
}
