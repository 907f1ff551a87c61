package tests

import (
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fluxgit/fluxgit/internal/roster/pgtest"
)

// assertNoSecret fails when any file under dirs, or any text, holds one of
// the secrets.
func assertNoSecret(t *testing.T, secrets []string, texts map[string]string, dirs ...string) {
	t.Helper()
	for name, text := range texts {
		for _, s := range secrets {
			if strings.Contains(text, s) {
				t.Errorf("%s shows a database secret", name)
			}
		}
	}
	for _, d := range dirs {
		_ = filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() {
				return nil
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return nil
			}
			for _, s := range secrets {
				if strings.Contains(string(b), s) {
					t.Errorf("%s holds a database secret", p)
				}
			}
			return nil
		})
	}
}

// Two fluxgit processes with separate state directories and one
// PostgreSQL roster (SHIFT_DATABASE_URL): a check-in in one is seen by the
// other and notified to its shift://status subscribers in both protocol
// generations (LISTEN/NOTIFY); the password shows in no log, reply,
// ledger or file.
func TestRosterPostgresAcrossProcesses(t *testing.T) {
	srv := pgtest.Start(t)
	dbURL := srv.NewDatabase(t)
	envA := append(rosterEnv(t, canonicalTempDir(t), "team-app"), "SHIFT_DATABASE_URL="+dbURL)
	envB := append(rosterEnv(t, canonicalTempDir(t), "team-app"), "SHIFT_DATABASE_URL="+dbURL)
	a := startServer(t, envA)
	b := startServer(t, envB)
	initialize(t, a)
	initialize(t, b)

	const qualified = "shift://status?workspace=team-app"
	if r := b.call(1, "resources/subscribe", map[string]any{"uri": qualified}); r.Error != nil {
		t.Fatalf("subscribe: %s", r.raw)
	}
	listen := map[string]any{"_meta": modernMeta(), "notifications": map[string]any{"resourceSubscriptions": []string{"shift://status"}}}
	b.sendJSON(map[string]any{"jsonrpc": "2.0", "id": "listen-1", "method": "subscriptions/listen", "params": listen})
	if got := b.notifications(2 * time.Second); len(got) != 1 || got[0].Method != "notifications/subscriptions/acknowledged" {
		t.Fatalf("listen acknowledgement: %+v", got)
	}
	count := func() (legacy, modern int) {
		for _, n := range b.notifications(2 * time.Second) {
			switch {
			case n.Method != "notifications/resources/updated":
				t.Fatalf("unexpected notification %+v", n)
			case n.Params.URI == qualified && n.Params.Meta == nil:
				legacy++
			case n.Params.URI == "shift://status" && n.Params.Meta["io.modelcontextprotocol/subscriptionId"] == "listen-1":
				modern++
			default:
				t.Fatalf("notification for an unexpected subscription: %+v", n)
			}
		}
		return
	}

	pa, _ := rosterCall(t, a, 2, "shift_check_in", map[string]any{"gist": "Cart totals", "files": []string{"src/cart.ts"}})
	idA := dataOf(t, pa)["workerId"].(string)
	if l, m := count(); l != 1 || m != 1 {
		t.Fatalf("A's check-in reached B as %d legacy and %d modern updates; want 1 and 1", l, m)
	}
	if text := resourceText(t, readResource(t, b, 3, map[string]any{"uri": "shift://status"})); !strings.Contains(text, idA) || !strings.Contains(text, "Cart totals") {
		t.Fatalf("B's status misses A's check-in:\n%s", text)
	}
	pb, _ := rosterCall(t, b, 4, "shift_check_in", map[string]any{"gist": "Checkout"})
	if ids := workerIDs(dataOf(t, pb)); len(ids) != 2 || ids[0] != idA {
		t.Fatalf("B's check-in sees %v, want A first", ids)
	}
	if l, m := count(); l != 1 || m != 1 { // B's own change, published once (its echo is skipped)
		t.Fatalf("B's own check-in: %d legacy, %d modern; want 1 and 1", l, m)
	}
	rosterCall(t, a, 5, "shift_check_out", map[string]any{"workerId": idA})
	if l, m := count(); l != 1 || m != 1 {
		t.Fatalf("A's check-out reached B as %d legacy and %d modern updates; want 1 and 1", l, m)
	}

	// A third process with a wrong password: a clear tool error that names
	// the database without any password.
	u, _ := url.Parse(dbURL)
	u.User = url.UserPassword(pgtest.Superuser, "wrong-Secret-42")
	envC := append(rosterEnv(t, canonicalTempDir(t), "team-app"), "SHIFT_DATABASE_URL="+u.String())
	c := startServer(t, envC)
	initialize(t, c)
	pc, textC := rosterCall(t, c, 1, "shift_check_in", map[string]any{"gist": "g"})
	e, _ := pc["error"].(map[string]any)
	ed, _ := e["data"].(map[string]any)
	if e == nil || e["code"] != float64(10024) || ed["reason"] != "store_unavailable" || !strings.Contains(ed["database"].(string), "xxxxx") {
		t.Fatalf("wrong password: %v", pc)
	}
	a.stop()
	b.stop()
	c.stop()
	secrets := []string{srv.Password, url.QueryEscape(srv.Password), url.PathEscape(srv.Password), "wrong-Secret-42"}
	assertNoSecret(t, secrets, map[string]string{"A's stderr": a.stderr.String(), "B's stderr": b.stderr.String(), "C's stderr": c.stderr.String(), "C's reply": textC},
		envValue(envA, "FLUXGIT_RUN_DIR"), envValue(envB, "FLUXGIT_RUN_DIR"), envValue(envC, "FLUXGIT_RUN_DIR"))
}

// doctor shows the PostgreSQL roster with its password redacted: OK with
// the schema version when it answers, a FAIL row with a fix when it does
// not; the password is never printed.
func TestDoctorRosterDatabase(t *testing.T) {
	srv := pgtest.Start(t)
	dbURL := srv.NewDatabase(t)
	dead, _ := url.Parse(dbURL)
	dead.Host = "127.0.0.1:1"
	secrets := []string{srv.Password, url.QueryEscape(srv.Password), url.PathEscape(srv.Password)}
	rowOf := func(out string) string {
		for _, l := range strings.Split(out, "\n") {
			if f := strings.Fields(l); len(f) > 1 && f[0] == "roster-db" {
				return l
			}
		}
		return ""
	}
	for _, tc := range []struct {
		name, url, status, want string
	}{
		{"fresh database", dbURL, "OK", "fluxgit creates the schema on first use"},
		{"nothing listening", dead.String(), "FAIL", "cannot reach the PostgreSQL roster"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := append(baseEnv(t), "SHIFT_DATABASE_URL="+tc.url)
			out, errOut, _ := runCLI(t, env, "doctor")
			row := rowOf(out)
			if !strings.Contains(row, tc.status) || !strings.Contains(row, tc.want) || !strings.Contains(row, "xxxxx") {
				t.Fatalf("roster-db row %q, want %s and %q with the password redacted:\n%s", row, tc.status, tc.want, out)
			}
			if tc.status == "FAIL" && !strings.Contains(out, "fix: ") {
				t.Errorf("no fix:\n%s", out)
			}
			assertNoSecret(t, secrets, map[string]string{"doctor stdout": out, "doctor stderr": errOut})
		})
	}
}
