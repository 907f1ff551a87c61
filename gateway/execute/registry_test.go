package execute

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/fluxgit/fluxgit/internal/operation"
)

// Every operation of the contract has an executor function and a review:
// an operation added to internal/operation without them fails here rather
// than at a person's approval.
func TestEveryOperationHasAnExecutor(t *testing.T) {
	var names []string
	for op := range runners {
		names = append(names, op)
	}
	slices.Sort(names)
	want := slices.Sorted(slices.Values(operation.Names()))
	if !slices.Equal(names, want) {
		t.Errorf("runners has %v, operation.All has %v", names, want)
	}
	e := New(Options{RunDir: t.TempDir()})
	for _, op := range operation.Names() {
		t.Run(op, func(t *testing.T) {
			s, err := operation.Schema(op)
			if err != nil {
				t.Fatal(err)
			}
			ex, _ := s["examples"].([]any)
			if len(ex) == 0 {
				t.Fatalf("the %s schema has no example", op)
			}
			body, _ := json.Marshal(ex[0])
			// Not a repository: the review may fail on git, but never for
			// want of a case for the operation.
			_, err = e.Review(context.Background(), op, body, Binding{RepoPath: t.TempDir()})
			if err != nil && strings.Contains(err.Error(), "unknown operation type") {
				t.Errorf("Review has no case for %s: %v", op, err)
			}
		})
	}
	out := e.Execute(context.Background(), Job{ID: "j", OperationType: "amend", Body: json.RawMessage(`{}`)})
	if out.Status != "failed" || !strings.Contains(string(out.Result), `unknown operation type \"amend\"`) {
		t.Errorf("Execute of an unknown operation = %+v", out)
	}
}
