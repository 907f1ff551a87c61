package wire

import (
	"testing"
	"time"
)

// TestParentGone checks the portable part of the provider's host watcher:
// it keeps waiting while getppid reports the host and returns on the first
// tick that reports another parent (the orphan's new parent).
func TestParentGone(t *testing.T) {
	tests := []struct {
		name      string
		ppids     []int // what getppid reports, one per tick
		wantTicks int   // ticks consumed before returning; -1: never returns
	}{
		{"host dies at once", []int{1}, 1},
		{"host dies later", []int{100, 100, 100, 1}, 4},
		{"re-parented to a subreaper", []int{100, 4242}, 2},
		{"host alive", []int{100, 100, 100}, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tick := make(chan time.Time, len(tt.ppids))
			for range tt.ppids {
				tick <- time.Time{}
			}
			close(tick) // a never-returning watcher ends with the ticks
			calls := 0
			getppid := func() int { v := tt.ppids[calls]; calls++; return v }
			parentGone(100, getppid, tick)
			want := tt.wantTicks
			if want < 0 {
				want = len(tt.ppids)
			}
			if calls != want {
				t.Fatalf("getppid called %d times, want %d", calls, want)
			}
			if tt.wantTicks < 0 && len(tick) != 0 {
				t.Fatalf("watcher left %d ticks unread while the host lived", len(tick))
			}
		})
	}
}
