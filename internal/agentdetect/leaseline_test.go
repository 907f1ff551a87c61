package agentdetect

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestLeaseLine(t *testing.T) {
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	keep := func(p string) (string, bool) { return p, !strings.HasPrefix(p, "../") }
	many := make([]RosterLease, 0, MaxFilesPerAgent+2)
	for i := range MaxFilesPerAgent + 2 {
		many = append(many, RosterLease{File: fmt.Sprintf("f%d", i), Mode: "shared", ExpiresAt: now.Add(time.Hour)})
	}
	tests := []struct {
		name   string
		leases []RosterLease
		want   string
	}{
		{"none", nil, ""},
		{"live, rounded up", []RosterLease{{File: "src/cart.ts", Mode: "exclusive", ExpiresAt: now.Add(13*time.Minute + time.Second)}}, "src/cart.ts exclusive 14m"},
		{"expired by the clock", []RosterLease{{File: "a", Mode: "shared", ExpiresAt: now.Add(-time.Second)}}, "a shared expired"},
		{"marked expired", []RosterLease{{File: "a", Mode: "exclusive", ExpiresAt: now.Add(time.Hour), Expired: true}}, "a exclusive expired"},
		{"outside the repository", []RosterLease{{File: "../x", Mode: "shared", ExpiresAt: now.Add(time.Hour)}, {File: "b", Mode: "shared", ExpiresAt: now.Add(time.Minute)}}, "b shared 1m"},
		{"bounded", many, "f0 shared 60m; f1 shared 60m; f2 shared 60m; f3 shared 60m; f4 shared 60m; f5 shared 60m; f6 shared 60m; f7 shared 60m; +2 more"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := LeaseLine(tc.leases, keep, now); got != tc.want {
				t.Fatalf("LeaseLine = %q, want %q", got, tc.want)
			}
		})
	}
}
