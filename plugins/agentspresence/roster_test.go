//go:build unix

package agentspresence

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/fluxgit/fluxgit/internal/roster"
)

// RosterFromStore counts live workers and leaves out stale ones: a worker
// whose leases all expired and whose fluxgit process is gone is no other
// agent at work.
func TestRosterFromStoreSkipsStaleWorkers(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	state, root := filepath.Join(base, "state"), filepath.Join(base, "repo")
	t.Setenv(roster.EnvStateDir, state)
	t.Setenv(roster.EnvDatabaseURL, "")
	now := time.Now().Add(-time.Hour) // leases taken an hour ago are expired now
	s, err := roster.Open(context.Background(), state, roster.Options{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	ids := map[string]string{}
	for name, pid := range map[string]int{"live": os.Getpid(), "gone": dead.Process.Pid} {
		r, err := s.CheckIn(context.Background(), roster.CheckInInput{Workspace: root, Gist: name, Files: []string{"a.go"}, HasFiles: true,
			Claims: map[string]string{"a.go": roster.Exclusive}, HasClaims: true, Agent: roster.Agent{Host: host, PID: pid}})
		if err != nil {
			t.Fatal(err)
		}
		ids[name] = r.Session.WorkerID
	}
	got, err := RosterFromStore(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].WorkerID != ids["live"] {
		t.Fatalf("presence lists %+v; want only the live worker %s", got, ids["live"])
	}
}
