package roster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"
)

// Leases on both stores: claimed files only, default length, renewal by a
// later check-in, expiry shown (never deleted), files changes drop what is
// no longer declared, the agent recorded, and a worker with nothing live
// whose process is gone marked stale.
func TestLeases(t *testing.T) {
	ctx := context.Background()
	for _, b := range storeBackends {
		t.Run(b.name, func(t *testing.T) {
			var mu sync.Mutex
			now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
			clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
			advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
			s := b.open(t)(Options{Now: clock})
			host, _ := os.Hostname()
			me := Agent{Client: "claude-code", Host: host, PID: os.Getpid()}

			_, err := s.CheckIn(ctx, CheckInInput{Workspace: "w", Gist: "g", Files: []string{"a.go"}, HasFiles: true, Claims: map[string]string{"b.go": Exclusive}, HasClaims: true})
			var ce *ClaimError
			if !errors.As(err, &ce) || ce.File != "b.go" {
				t.Fatalf("claim outside files: %v", err)
			}
			r, err := s.CheckIn(ctx, CheckInInput{Workspace: "w", Gist: "g", Files: []string{"a.go", "b.go", "c.go"}, HasFiles: true,
				Claims: map[string]string{"a.go": Exclusive, "b.go": Shared}, HasClaims: true, Agent: me})
			if err != nil {
				t.Fatal(err)
			}
			id := r.Session.WorkerID
			want := []Lease{{File: "a.go", Mode: Exclusive, ExpiresAt: "2026-03-01T09:15:00.000Z"}, {File: "b.go", Mode: Shared, ExpiresAt: "2026-03-01T09:15:00.000Z"}}
			if !equalLeases(r.Session.Leases, want) || r.Session.Agent == nil || *r.Session.Agent != me {
				t.Fatalf("session %+v agent %+v", r.Session.Leases, r.Session.Agent)
			}
			if l, ok := r.Session.LiveExclusive("a.go"); !ok || l.File != "a.go" {
				t.Fatal("a.go not held exclusively")
			}
			// Expired: still listed, marked; not stale (this process lives).
			advance(16 * time.Minute)
			rows, _, err := s.Snapshot(ctx, "w")
			if err != nil || len(rows) != 1 || len(rows[0].Leases) != 2 || !rows[0].Leases[0].Expired || !rows[0].Leases[1].Expired || rows[0].Stale {
				t.Fatalf("after expiry %+v %v", rows, err)
			}
			if _, ok := rows[0].LiveExclusive("a.go"); ok {
				t.Fatal("an expired lease still counts")
			}
			// A later check-in renews them (unchanged otherwise, no new
			// updatedAt), with their own length.
			r2, err := s.CheckIn(ctx, CheckInInput{Workspace: "w", WorkerID: id, Gist: "g"})
			if err != nil || r2.Change != Unchanged || r2.Session.UpdatedAt != r.Session.UpdatedAt {
				t.Fatalf("renewal %+v %v", r2, err)
			}
			if l := r2.Session.Leases; len(l) != 2 || l[0].Expired || l[0].ExpiresAt != "2026-03-01T09:31:00.000Z" {
				t.Fatalf("renewed leases %+v", l)
			}
			// Dropping b.go from files drops its lease: a real change.
			r3, err := s.CheckIn(ctx, CheckInInput{Workspace: "w", WorkerID: id, Gist: "g", Files: []string{"a.go"}, HasFiles: true})
			if err != nil || r3.Change != Updated || len(r3.Session.Leases) != 1 || r3.Session.Leases[0].File != "a.go" {
				t.Fatalf("files narrowed %+v %v", r3, err)
			}
			// A custom length; an empty claims map clears the leases.
			r4, err := s.CheckIn(ctx, CheckInInput{Workspace: "w", WorkerID: id, Gist: "g", Claims: map[string]string{"a.go": Shared}, HasClaims: true, LeaseFor: time.Hour})
			if err != nil || r4.Change != Updated || r4.Session.Leases[0].ExpiresAt != "2026-03-01T10:16:00.000Z" {
				t.Fatalf("custom lease %+v %v", r4.Session.Leases, err)
			}
			r5, err := s.CheckIn(ctx, CheckInInput{Workspace: "w", WorkerID: id, Gist: "g", Claims: map[string]string{}, HasClaims: true})
			if err != nil || r5.Change != Updated || len(r5.Session.Leases) != 0 {
				t.Fatalf("cleared %+v %v", r5.Session.Leases, err)
			}

			if runtime.GOOS == "windows" {
				return
			}
			// A worker of a process that is gone, with its lease expired,
			// is stale; with a live lease it is not.
			dead := exec.Command("true")
			if err := dead.Run(); err != nil {
				t.Fatal(err)
			}
			ghost := Agent{Client: "codex", Host: host, PID: dead.Process.Pid}
			g, err := s.CheckIn(ctx, CheckInInput{Workspace: "w", Gist: "ghost", Files: []string{"z.go"}, HasFiles: true, Claims: map[string]string{"z.go": Exclusive}, HasClaims: true, Agent: ghost})
			if err != nil || g.Session.Stale {
				t.Fatalf("ghost with a live lease: %+v %v", g.Session, err)
			}
			advance(20 * time.Minute)
			rows, _, err = s.Snapshot(ctx, "w")
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rows {
				if (r.WorkerID == g.Session.WorkerID) != r.Stale {
					t.Fatalf("row %s stale=%v", r.WorkerID, r.Stale)
				}
			}
		})
	}
}

func equalLeases(a, b []Lease) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// A tool call the agent's fluxgit server recorded in its presence record
// renews the agent's leases by their length, without a check-in; without
// a record the stored expiry holds.
func TestLeasesRenewedByToolCalls(t *testing.T) {
	ctx := context.Background()
	run := realTempDir(t)
	t.Setenv("FLUXGIT_RUN_DIR", run)
	call := time.Now().Truncate(time.Millisecond)
	var mu sync.Mutex
	now := call.Add(-20 * time.Minute)
	s := openStore(t, realTempDir(t), Options{Now: func() time.Time { mu.Lock(); defer mu.Unlock(); return now }})
	host, _ := os.Hostname()
	pid := os.Getpid()
	if _, err := s.CheckIn(ctx, CheckInInput{Workspace: "w", Gist: "g", Files: []string{"a.go"}, HasFiles: true,
		Claims: map[string]string{"a.go": Exclusive}, HasClaims: true, Agent: Agent{Host: host, PID: pid}}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	now = call.Add(time.Minute)
	mu.Unlock()
	rows, _, err := s.Snapshot(ctx, "w")
	if err != nil || !rows[0].Leases[0].Expired {
		t.Fatalf("without a tool call the lease expires: %+v %v", rows, err)
	}
	dir := filepath.Join(run, "presence", "mcp")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	rec := fmt.Sprintf(`{"schemaVersion":1,"pid":%d,"client":{"name":"codex","version":null},"repos":[{"repoPath":"/r","lastCallMs":%d,"lastTool":"repo.status"}]}`, pid, call.UnixMilli())
	if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%d.json", pid)), []byte(rec), 0o600); err != nil {
		t.Fatal(err)
	}
	rows, _, err = s.Snapshot(ctx, "w")
	want := call.Add(DefaultLease).UTC().Format(timeLayout)
	if err != nil || rows[0].Leases[0].Expired || rows[0].Leases[0].ExpiresAt != want {
		t.Fatalf("after a tool call at %s: %+v %v (want expiry %s)", call, rows[0].Leases, err, want)
	}
}

// A tool-call renewal written to the store (RenewLeases) extends only the
// leases of the workers the named server process checked in, each by its
// own length, never backwards, and keeps updatedAt.
func TestRenewLeases(t *testing.T) {
	ctx := context.Background()
	t.Setenv("FLUXGIT_RUN_DIR", t.TempDir()) // no presence records: stored expiries only
	for _, b := range storeBackends {
		t.Run(b.name, func(t *testing.T) {
			start := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
			s := b.open(t)(Options{Now: func() time.Time { return start }})
			host := Hostname()
			mine := Agent{Client: "a", Host: host, PID: 999991}
			check := func(ws string, a Agent, d time.Duration) string {
				r, err := s.CheckIn(ctx, CheckInInput{Workspace: ws, Gist: "g", Files: []string{"x.go"}, HasFiles: true,
					Claims: map[string]string{"x.go": Exclusive}, HasClaims: true, LeaseFor: d, Agent: a})
				if err != nil {
					t.Fatal(err)
				}
				return r.Session.WorkerID
			}
			m1 := check("w1", mine, 15*time.Minute)
			m2 := check("w2", mine, 5*time.Minute)
			other := check("w1", Agent{Client: "a", Host: host, PID: 999992}, 15*time.Minute)
			elsewhere := check("w1", Agent{Client: "a", Host: host + "-other", PID: 999991}, 15*time.Minute)

			n, err := s.RenewLeases(ctx, host, mine.PID, start.Add(10*time.Minute))
			if err != nil || n != 2 {
				t.Fatalf("RenewLeases = %d, %v; want 2 workers", n, err)
			}
			want := map[string]string{m1: "2026-03-01T09:25:00.000Z", m2: "2026-03-01T09:15:00.000Z",
				other: "2026-03-01T09:15:00.000Z", elsewhere: "2026-03-01T09:15:00.000Z"}
			for _, ws := range []string{"w1", "w2"} {
				rows, _, err := s.Snapshot(ctx, ws)
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range rows {
					if got := r.Leases[0].ExpiresAt; got != want[r.WorkerID] || r.UpdatedAt != "2026-03-01T09:00:00.000Z" {
						t.Errorf("%s in %s: lease until %s, updatedAt %s; want until %s, updatedAt kept", r.WorkerID, ws, got, r.UpdatedAt, want[r.WorkerID])
					}
				}
			}
			// An earlier call moves nothing back.
			if n, err := s.RenewLeases(ctx, host, mine.PID, start.Add(time.Minute)); err != nil || n != 0 {
				t.Fatalf("an earlier renewal moved %d workers (%v)", n, err)
			}
		})
	}
}
