package operation

import (
	"strings"
	"testing"
)

func TestProposerHeader(t *testing.T) {
	for _, p := range []Proposer{{PID: 4242, Client: "claude-code 1.2"}, {PID: 7}, {PID: 1, Client: "Zed Ägent & co=1"}} {
		got, ok := ParseProposer(p.Encode())
		if !ok || got != p {
			t.Fatalf("round trip of %+v: %+v %v", p, got, ok)
		}
	}
	for _, bad := range []string{"", "pid=0", "pid=-3", "pid=x", "client=a", "pid=1&pid=2", "pid=1&client=a&client=b",
		"pid=1&client=a%0Ab", "pid=1&client=%ff", "pid=1&" + strings.Repeat("x", MaxProposerHeader)} {
		if p, ok := ParseProposer(bad); ok {
			t.Fatalf("ParseProposer(%q) accepted %+v", bad, p)
		}
	}
	if ClientLabel("cursor", "") != "cursor" || ClientLabel("cursor", "3.1") != "cursor 3.1" || ClientLabel("", "3.1") != "" {
		t.Fatal("ClientLabel")
	}
}
