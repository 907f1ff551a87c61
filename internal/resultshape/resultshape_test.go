package resultshape

import "testing"

func TestLean(t *testing.T) {
	cases := []struct {
		name  string
		value string
		set   bool
		lean  bool
	}{
		{name: "unset", lean: true},
		{name: "empty", value: "", set: true, lean: true},
		{name: "lean", value: "lean", set: true, lean: true},
		{name: "reference", value: "reference", set: true, lean: false},
		{name: "reference with spaces", value: "  reference\n", set: true, lean: false},
		{name: "unknown falls back to lean", value: "full", set: true, lean: true},
		{name: "case matters", value: "Reference", set: true, lean: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.set {
				t.Setenv(Env, c.value)
			} else {
				t.Setenv(Env, "")
			}
			if got := Lean(); got != c.lean {
				t.Fatalf("%s=%q: Lean() = %v, want %v", Env, c.value, got, c.lean)
			}
		})
	}
}
