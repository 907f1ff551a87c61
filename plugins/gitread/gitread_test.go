package gitread

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/fluxgit/fluxgit/plugins/gitread/fleet"
	"github.com/fluxgit/fluxgit/plugins/gitread/repo"
	"github.com/fluxgit/fluxgit/plugins/gitread/restore"
	"github.com/fluxgit/fluxgit/plugins/gitread/semantic"
	"github.com/fluxgit/fluxgit/plugins/sdk"
)

// The joined table is exactly the families' slices: every family's tool is
// served, none twice, nothing else.
func TestToolsJoinEveryFamily(t *testing.T) {
	var want []string
	for _, family := range []map[string]repo.ToolFunc{repo.Tools(), fleet.Tools(), restore.Tools(), semantic.Tools()} {
		if len(family) == 0 {
			t.Fatal("a family serves no tool")
		}
		for name := range family {
			want = append(want, name)
		}
	}
	slices.Sort(want)
	if got := Tools(); !slices.Equal(got, want) {
		t.Fatalf("Tools() = %v\nwant %v", got, want)
	}
	if got := New().Describe().Tools; !slices.Equal(got, want) {
		t.Fatalf("Describe().Tools = %v\nwant %v", got, want)
	}
}

func TestJoinRefusesANameTwoFamiliesRegister(t *testing.T) {
	fn := func(*repo.Provider, context.Context, *sdk.Call) (*sdk.Result, error) { return nil, nil }
	tests := []struct {
		name   string
		slices []map[string]repo.ToolFunc
		panics bool
	}{
		{"distinct", []map[string]repo.ToolFunc{{"a.x": fn}, {"b.y": fn}}, false},
		{"same name in two slices", []map[string]repo.ToolFunc{{"a.x": fn}, {"a.x": fn}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				if r := recover(); (r != nil) != tt.panics {
					t.Fatalf("panic %v, want panic %v", r, tt.panics)
				}
			}()
			join(tt.slices...)
		})
	}
}

// The joined provider, not only a family's test double, refuses an
// unknown tool as invalid params and a nil call as an internal error.
func TestCallToolRefusesUnknownAndNil(t *testing.T) {
	p := New()
	_, err := p.CallTool(context.Background(), &sdk.Call{Tool: "repo.nope", Arguments: []byte(`{}`)})
	var ae *sdk.ArgumentError
	if !errors.As(err, &ae) || ae.Message != "Invalid params" || ae.Details != "unknown tool: repo.nope" {
		t.Fatalf("unknown tool: %v", err)
	}
	if _, err := p.CallTool(context.Background(), nil); err == nil {
		t.Fatal("nil call accepted")
	}
}
