package envflag

import "testing"

func TestTruthy(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"1", true}, {"true", true}, {"yes", true}, {"TRUE", true}, {"anything", true},
		{"", false}, {"  ", false}, {"0", false}, {"false", false}, {"No", false}, {" off ", false},
	}
	for _, tt := range tests {
		if got := Truthy(tt.in); got != tt.want {
			t.Errorf("Truthy(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestSet(t *testing.T) {
	const name = "FLUXGIT_TEST_ENVFLAG"
	t.Setenv(name, "1")
	if !Set(name) {
		t.Fatalf("Set(%s=1) = false", name)
	}
	t.Setenv(name, "0")
	if Set(name) {
		t.Fatalf("Set(%s=0) = true", name)
	}
}
