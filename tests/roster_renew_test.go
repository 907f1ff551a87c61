package tests

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fluxgit/fluxgit/internal/roster"
	"github.com/fluxgit/fluxgit/internal/roster/pgtest"
)

// Tool calls renew leases in the store, not only on the reading side: two
// fluxgit processes with separate run directories (so neither can read
// the other's presence record) share one roster — one SQLite file, or one
// PostgreSQL database with separate state directories. After a tool call
// in A, B's shift://status shows A's lease extended from that call; the
// heartbeat never touches B's own worker.
func TestRosterRenewalAcrossProcesses(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			repo := e2eRepo(t)
			const ws = "team-app"
			shared := canonicalTempDir(t)
			envA, envB := rosterEnv(t, shared, ws), rosterEnv(t, shared, ws)
			var storeEnv []string
			if backend == "postgres" {
				u := pgtest.Start(t).NewDatabase(t)
				envA = append(rosterEnv(t, canonicalTempDir(t), ws), roster.EnvDatabaseURL+"="+u)
				envB = append(rosterEnv(t, canonicalTempDir(t), ws), roster.EnvDatabaseURL+"="+u)
				storeEnv = []string{u}
			}
			a, b := startServer(t, envA), startServer(t, envB)
			initialize(t, a)
			initialize(t, b)
			claim := func(s *server, id int, file string) (string, string) {
				p, _ := rosterCall(t, s, id, "shift_check_in", map[string]any{"gist": "g " + file, "files": []string{file},
					"claims": map[string]string{file: "exclusive"}, "leaseMinutes": 1})
				d := dataOf(t, p)
				return d["workerId"].(string), d["leases"].([]any)[0].(map[string]any)["expiresAt"].(string)
			}
			idA, first := claim(a, 1, "a.go")
			idB, untilB := claim(b, 1, "b.go")
			time.Sleep(20 * time.Millisecond)
			before := time.Now()
			if r := a.call(2, "tools/call", map[string]any{"name": "repo.status", "arguments": map[string]any{"repoPath": repo}}); r.Error != nil {
				t.Fatalf("repo.status in A: %s", r.raw)
			}
			floor := before.Add(time.Minute).UTC().Format("2006-01-02T15:04:05.000Z")
			held := regexp.MustCompile(`\| ` + idA + ` \|.*a\.go \(exclusive until (\S+)\)`)
			deadline := time.Now().Add(30 * time.Second) // several heartbeat checks
			var seen string
			for i := 10; ; i++ {
				text := resourceText(t, b.call(i, "resources/read", map[string]any{"uri": "shift://status?workspace=" + ws}))
				if m := held.FindStringSubmatch(text); m != nil {
					seen = m[1]
				}
				if seen >= floor {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("B still sees A's lease until %s (checked in until %s), want at least %s:\n%s", seen, first, floor, text)
				}
				time.Sleep(250 * time.Millisecond)
			}
			// B's own worker was not renewed by A's heartbeat: the store
			// (read here with no presence records) holds B's expiry as B's
			// check-in set it.
			t.Setenv("FLUXGIT_RUN_DIR", t.TempDir())
			var s roster.Store
			var err error
			if len(storeEnv) > 0 {
				s, err = roster.OpenPostgres(context.Background(), storeEnv[0], roster.Options{})
			} else {
				s, err = roster.Open(context.Background(), shared, roster.Options{})
			}
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			rows, err := s.List(context.Background(), ws)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, r := range rows {
				got[r.WorkerID] = r.Leases[0].ExpiresAt
			}
			if got[idB] != untilB || got[idA] < floor {
				t.Fatalf("stored expiries %v; want %s of B kept at %s and A's at least %s", fmt.Sprint(got), idB, untilB, floor)
			}
			if strings.Compare(seen, first) <= 0 {
				t.Fatalf("A's lease did not move: %s, was %s", seen, first)
			}
		})
	}
}
