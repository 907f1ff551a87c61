package proposal

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/fluxgit/fluxgit/internal/operation"
)

// The field rules Check applies are derived from the operation schemas;
// they must be exactly the rules the gateway checked by hand before the
// contract became data (this table is that hand-written list), so no
// body is judged differently and no message changes.
func TestFieldsDerivedFromSchemas(t *testing.T) {
	wantOps := map[string]map[string]field{
		"merge": {
			"sourceRef": {kind: kRef, required: true},
			"targetRef": {kind: kRef, required: true},
			"strategy":  {kind: kEnum, required: true, enum: []string{"merge", "squash"}},
		},
		"rebase": {
			"currentRef":  {kind: kRef, required: true},
			"ontoRef":     {kind: kRef, required: true},
			"interactive": {kind: kFalse, required: true},
		},
		"discard": {
			"paths": {kind: kStrings1, required: true},
		},
		"reset": {
			"targetRef": {kind: kRef, required: true},
			"mode":      {kind: kEnum, required: true, enum: []string{"soft", "mixed", "hard"}},
		},
		"patch": {
			"patchContent": {kind: kPatch, required: true},
			"applyToIndex": {kind: kBool, required: true},
		},
		"plan": {
			"steps": {kind: kSteps, required: true},
		},
		"worktree": {
			"branch": {kind: kRef, required: true},
			"path":   {kind: kAbsPath},
		},
		"commit": {
			"message":  {kind: kCommitMsg, required: true},
			"stageAll": {kind: kBool, required: true},
			"paths":    {kind: kStrings},
		},
		"push": {
			"remote":         {kind: kRef, required: true},
			"setUpstream":    {kind: kBool, required: true},
			"forceWithLease": {kind: kBool, required: true},
			"branch":         {kind: kRef},
		},
		"branch": {
			"name":       {kind: kRef, required: true},
			"checkout":   {kind: kBool, required: true},
			"startPoint": {kind: kRef},
		},
		"branchDelete": {
			"targets": {kind: kTargets, required: true},
		},
		"submodulePointer": {
			"parentPath":            {kind: kPathRel, required: true},
			"relativePath":          {kind: kString, required: true},
			"direction":             {kind: kEnum, required: true, enum: []string{"record", "return"}},
			"message":               {kind: kMessage},
			"expectedRecordedOid":   {kind: kOID},
			"expectedCheckedOutOid": {kind: kOID},
		},
	}
	wantSteps := map[string]map[string]field{
		"merge": {
			"sourceRef": {kind: kRef, required: true},
			"targetRef": {kind: kRef, required: true},
			"strategy":  {kind: kEnum, enum: []string{"merge", "squash"}},
		},
		"rebase": {
			"currentRef":  {kind: kRef},
			"ontoRef":     {kind: kRef, required: true},
			"interactive": {kind: kFalse},
		},
		"discard": {"paths": {kind: kStrings1, required: true}},
		"reset": {
			"targetRef": {kind: kRef, required: true},
			"mode":      {kind: kEnum, enum: []string{"soft", "mixed", "hard"}},
		},
		"patch": {
			"patchContent": {kind: kPatch, required: true},
			"applyToIndex": {kind: kBool},
		},
	}
	// Pinned for the twelve operations the hand-written rules covered; a
	// later operation's rules are whatever its schema says.
	for op, want := range wantOps {
		if got := opFields()[op]; !reflect.DeepEqual(got, want) {
			t.Errorf("%s fields derived from its schema:\n got %+v\nwant %+v", op, got, want)
		}
	}
	if !reflect.DeepEqual(stepFields(), wantSteps) {
		t.Errorf("plan step fields derived from the plan schema:\n got %+v\nwant %+v", stepFields(), wantSteps)
	}
	if want := []string{"agentId", "idempotencyKey", "operationType", "previewId", "reason", "repoPath", "requestedAt"}; !reflect.DeepEqual(CommonKeys, want) {
		t.Errorf("CommonKeys = %v, want %v", CommonKeys, want)
	}
}

// The schema never refuses a body Check accepts: the gateway runs both
// (Check for the words, the schema as the contract), so a stricter schema
// would be a behaviour change. Each body here is accepted by Check,
// including the edges of its bounds.
func TestSchemaAcceptsWhatCheckAccepts(t *testing.T) {
	edges := []struct {
		name, op string
		mut      func(b map[string]any)
	}{
		{"plain", "merge", func(map[string]any) {}},
		{"ref of 4,096 characters", "merge", func(b map[string]any) { b["sourceRef"] = strings.Repeat("é", operation.MaxText) }},
		{"reason of 4,096 characters", "reset", func(b map[string]any) { b["reason"] = strings.Repeat("x", operation.MaxText) }},
		{"empty commit paths", "commit", func(b map[string]any) { b["paths"] = []any{} }},
		{"worktree at a given path", "worktree", func(b map[string]any) { b["path"] = "/tmp/wt" }},
		{"record with message and pins", "submodulePointer", func(b map[string]any) {
			b["direction"], b["message"] = "record", "bump"
			b["expectedRecordedOid"] = strings.Repeat("a", 64)
		}},
		{"every plan step", "plan", func(b map[string]any) {
			b["steps"] = []any{
				map[string]any{"operationType": "merge", "sourceRef": "a", "targetRef": "b", "strategy": "squash"},
				map[string]any{"operationType": "rebase", "ontoRef": "main", "interactive": false},
				map[string]any{"operationType": "discard", "paths": []any{"x"}},
				map[string]any{"operationType": "reset", "targetRef": "HEAD", "mode": "hard"},
				map[string]any{"operationType": "patch", "patchContent": "p", "applyToIndex": true},
			}
		}},
		{"push with branch", "push", func(b map[string]any) { b["branch"] = "main" }},
		{"branch with start point", "branch", func(b map[string]any) { b["startPoint"] = "HEAD~2" }},
		{"call idempotency key", "discard", func(b map[string]any) {
			b["idempotencyKey"] = "discard:call:0b6b3c1e-6f1a-4d3b-9a51-2f0a4c1e9b7d"
		}},
	}
	for _, op := range Ops {
		edges = append(edges, struct {
			name, op string
			mut      func(b map[string]any)
		}{"valid " + op, op, func(map[string]any) {}})
		edges = append(edges, struct {
			name, op string
			mut      func(b map[string]any)
		}{"example " + op, op, func(b map[string]any) {
			clear(b)
			for k, v := range schemaExample(op) {
				b[k] = v
			}
		}})
	}
	for _, tc := range edges {
		t.Run(tc.name, func(t *testing.T) {
			b := validBody(tc.op)
			tc.mut(b)
			if p := Check(tc.op, b); len(p) != 0 {
				t.Fatalf("Check refuses the case itself: %v", p)
			}
			if err := operation.Validate(tc.op, b); err != nil {
				t.Errorf("the %s schema refuses a body Check accepts: %v", tc.op, err)
			}
		})
	}
}

// The ref keys the agent policy sees are derived from the schemas; they
// must be the hand-written list they replace.
func TestRefKeysDerivedFromSchemas(t *testing.T) {
	wantOps := map[string][]string{
		"merge":    {"sourceRef", "targetRef"},
		"rebase":   {"currentRef", "ontoRef"},
		"reset":    {"targetRef"},
		"worktree": {"branch"},
		"push":     {"branch"},
		"branch":   {"name", "startPoint"},
	}
	wantSteps := map[string][]string{
		"merge":  {"sourceRef", "targetRef"},
		"rebase": {"currentRef", "ontoRef"},
		"reset":  {"targetRef"},
	}
	// Pinned for the twelve operations of the hand-written list.
	for op := range opFields() {
		if !slices.Contains(twelve, op) {
			continue
		}
		if got := refKeys()[op]; !reflect.DeepEqual(got, wantOps[op]) {
			t.Errorf("refKeys[%s] = %v, want %v", op, got, wantOps[op])
		}
	}
	if !reflect.DeepEqual(stepRefKeys(), wantSteps) {
		t.Errorf("stepRefKeys = %v, want %v", stepRefKeys(), wantSteps)
	}
}

// The absolute paths besides repoPath the policy sees are derived from the
// schemas: today only a worktree's path.
func TestPathKeysDerivedFromSchemas(t *testing.T) {
	got := map[string][]string{}
	for op, keys := range pathKeys() {
		if len(keys) > 0 && slices.Contains(twelve, op) {
			got[op] = keys
		}
	}
	if want := map[string][]string{"worktree": {"path"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("pathKeys = %v, want %v", got, want)
	}
}

// twelve are the operations the hand-written rules covered.
var twelve = []string{"merge", "rebase", "discard", "reset", "patch", "plan", "worktree", "commit", "push", "branch", "branchDelete", "submodulePointer"}

// schemaExample is the example body of op's schema.
func schemaExample(op string) map[string]any {
	s, err := operation.Schema(op)
	if err != nil {
		panic(err)
	}
	ex, _ := s["examples"].([]any)
	if len(ex) == 0 {
		panic("the " + op + " schema has no example")
	}
	return ex[0].(map[string]any)
}
