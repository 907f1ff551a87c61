package sdk

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// Ask refuses a malformed question or a missing capability before
// anything reaches the client; each single-question call names its own
// capability.
func TestAskRefusals(t *testing.T) {
	all := &Call{Meta: Meta{Client: ClientCapabilities{Sampling: true, Elicitation: true, Roots: true}}}
	tests := []struct {
		name    string
		call    *Call
		qs      []Question
		wantCap string // the capability named; "" when another error is expected
		wantErr string
	}{
		{"roots without the capability", &Call{}, []Question{{Roots: &RootsRequest{}}}, "roots", ""},
		{"sampling without the capability", &Call{Meta: Meta{Client: ClientCapabilities{Elicitation: true}}},
			[]Question{{Sample: &SamplingRequest{}}, {Elicit: &ElicitRequest{}}}, "sampling", ""},
		{"a hand-built call has no client", all, []Question{{Elicit: &ElicitRequest{}}}, "elicitation", ""},
		{"a nil call", nil, []Question{{Sample: &SamplingRequest{}}}, "sampling", ""},
		{"two kinds in one question", all, []Question{{Elicit: &ElicitRequest{}, Roots: &RootsRequest{}}}, "", "exactly one of"},
		{"an empty question", all, []Question{{}}, "", "exactly one of"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.call.Ask(context.Background(), tc.qs...)
			var e *Error
			switch {
			case tc.wantCap != "":
				if !errors.As(err, &e) || e.Kind != KindClientCapability || e.Data["requiredCapabilities"].(map[string]any)[tc.wantCap] == nil {
					t.Fatalf("want a %s capability error, got %v", tc.wantCap, err)
				}
			case err == nil || !strings.Contains(err.Error(), tc.wantErr):
				t.Fatalf("want %q, got %v", tc.wantErr, err)
			}
		})
	}
	if a, err := all.Ask(context.Background()); a != nil || err != nil {
		t.Fatalf("no questions: %v %v", a, err)
	}
	if _, err := (&Call{}).ListRoots(context.Background(), &RootsRequest{}); err == nil {
		t.Fatal("ListRoots without the capability succeeded")
	}
}
