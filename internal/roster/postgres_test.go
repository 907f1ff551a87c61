package roster

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fluxgit/fluxgit/internal/roster/pgtest"
)

// TestMain stops the shared PostgreSQL cluster after the tests.
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// storeBackend opens fresh, empty rosters of one kind; every store opened
// from one factory shares one roster, as processes do.
type storeBackend struct {
	name string
	open func(t *testing.T) func(opts Options) Store
}

var storeBackends = []storeBackend{
	{BackendSQLite, func(t *testing.T) func(Options) Store {
		dir := realTempDir(t)
		return func(o Options) Store { return openStore(t, dir, o) }
	}},
	{BackendPostgres, func(t *testing.T) func(Options) Store {
		u := pgtest.Shared(t).NewDatabase(t)
		return func(o Options) Store { return openPG(t, u, o) }
	}},
}

func openPG(t testing.TB, u string, o Options) *Postgres {
	t.Helper()
	s, err := OpenPostgres(context.Background(), u, o)
	if err != nil {
		t.Fatalf("OpenPostgres: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// The semantics both stores share, value for value: exact workspaces
// (NUL and all), patch updates, unknown workers with the roster, check-out
// of an unknown id, the workspace listing.
func TestStoreSemantics(t *testing.T) {
	ctx := context.Background()
	for _, b := range storeBackends {
		t.Run(b.name, func(t *testing.T) {
			s := b.open(t)(Options{})
			odd := "ws\x00with nul | and ünïcode"
			a, err := s.CheckIn(ctx, CheckInInput{Workspace: odd, Gist: "gist\x00nul", Files: []string{"a.go", "b\x00.go"}, HasFiles: true})
			if err != nil {
				t.Fatal(err)
			}
			if a.Change != Created || a.Session.Gist != "gist\x00nul" || !slices.Equal(a.Session.Files, []string{"a.go", "b\x00.go"}) || len(a.Workers) != 1 {
				t.Fatalf("created %+v", a)
			}
			if _, ok := NormalizeWorkerID(a.Session.WorkerID); !ok || strings.ToUpper(a.Session.WorkerID) != a.Session.WorkerID {
				t.Fatalf("id %q", a.Session.WorkerID)
			}
			// Patch: files omitted are kept, checkedInAt kept.
			u, err := s.CheckIn(ctx, CheckInInput{Workspace: odd, WorkerID: a.Session.WorkerID, Gist: "new"})
			if err != nil || u.Change != Updated || !slices.Equal(u.Session.Files, a.Session.Files) || u.Session.CheckedInAt != a.Session.CheckedInAt {
				t.Fatalf("patch %+v %v", u, err)
			}
			same, err := s.CheckIn(ctx, CheckInInput{Workspace: odd, WorkerID: a.Session.WorkerID, Gist: "new", Files: a.Session.Files, HasFiles: true})
			if err != nil || same.Change != Unchanged {
				t.Fatalf("no-op %+v %v", same, err)
			}
			// The same id in another workspace is unknown there, with that
			// workspace's roster.
			if _, err := s.CheckIn(ctx, CheckInInput{Workspace: "other", Gist: "o"}); err != nil {
				t.Fatal(err)
			}
			_, err = s.CheckIn(ctx, CheckInInput{Workspace: "other", WorkerID: a.Session.WorkerID, Gist: "x"})
			var uw *UnknownWorkerError
			if !errors.As(err, &uw) || len(uw.Workers) != 1 || uw.Totals.Workers != 1 {
				t.Fatalf("unknown worker: %v %+v", err, uw)
			}
			names, err := s.Workspaces(ctx, 10)
			if err != nil || !slices.Equal(names, []string{"other", odd}) {
				t.Fatalf("workspaces %q %v", names, err)
			}
			out, err := s.CheckOut(ctx, odd, "ZZZZZZ")
			if err != nil || out.Removed || len(out.Workers) != 1 {
				t.Fatalf("unknown check-out %+v %v", out, err)
			}
			out, err = s.CheckOut(ctx, odd, a.Session.WorkerID)
			if err != nil || !out.Removed || len(out.Workers) != 0 {
				t.Fatalf("check-out %+v %v", out, err)
			}
		})
	}
}

// 64 concurrent check-ins through 8 stores (8 connection pools, as 8
// processes have) keep every row and hand out no id twice; conflicts are
// retried inside the budget, never lost.
func TestConcurrentCheckInsKeepEveryRow(t *testing.T) {
	ctx := context.Background()
	for _, b := range storeBackends {
		t.Run(b.name, func(t *testing.T) {
			open := b.open(t)
			var stores []Store
			for range 8 {
				stores = append(stores, open(Options{Budget: 30 * time.Second}))
			}
			var (
				wg   sync.WaitGroup
				mu   sync.Mutex
				ids  = map[string]bool{}
				errs []error
			)
			for i := range 64 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					s := stores[i%8]
					r, err := s.CheckIn(ctx, CheckInInput{Workspace: "team", Gist: fmt.Sprintf("agent %d", i), Files: []string{fmt.Sprintf("f%d.go", i)}, HasFiles: true})
					if err == nil {
						_, err = s.CheckIn(ctx, CheckInInput{Workspace: "team", WorkerID: r.Session.WorkerID, Gist: fmt.Sprintf("agent %d-updated", i)})
					}
					mu.Lock()
					defer mu.Unlock()
					if err != nil {
						errs = append(errs, err)
						return
					}
					ids[r.Session.WorkerID] = true
				}()
			}
			wg.Wait()
			if len(errs) > 0 {
				t.Fatalf("%d check-ins failed, first: %v", len(errs), errs[0])
			}
			rows, totals, err := stores[0].Snapshot(ctx, "team")
			if err != nil {
				t.Fatal(err)
			}
			if len(ids) != 64 || totals.Workers != 64 || totals.Files != 64 || len(rows) != 64 {
				t.Fatalf("%d ids, totals %+v, %d rows; want 64 of each", len(ids), totals, len(rows))
			}
			for _, r := range rows {
				if !ids[r.WorkerID] || !strings.HasSuffix(r.Gist, "-updated") {
					t.Fatalf("row %+v lost its update or is not one of ours", r)
				}
			}
		})
	}
}

// A check-in on one PostgreSQL store reaches the other's Changes (LISTEN/
// NOTIFY), never its own, and only on a real change; a workspace too long
// for a payload comes as its hash.
func TestPostgresNotifiesOtherProcesses(t *testing.T) {
	ctx := context.Background()
	u := pgtest.Shared(t).NewDatabase(t)
	a, b := openPG(t, u, Options{}), openPG(t, u, Options{})
	expect := func(s *Postgres, want ChangeEvent) {
		t.Helper()
		select {
		case ev := <-s.Changes():
			if ev != want {
				t.Fatalf("event %+v, want %+v", ev, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no notification %+v", want)
		}
	}
	quiet := func(s *Postgres) {
		t.Helper()
		select {
		case ev := <-s.Changes():
			t.Fatalf("unexpected event %+v", ev)
		case <-time.After(300 * time.Millisecond):
		}
	}
	// The listener connects in the background; a first change proves it
	// listens (retry until heard).
	var r *CheckInResult
	deadline := time.Now().Add(10 * time.Second)
	for heard := false; !heard; {
		var err error
		if r, err = a.CheckIn(ctx, CheckInInput{Workspace: "w", Gist: "hello"}); err != nil {
			t.Fatal(err)
		}
		select {
		case ev := <-b.Changes():
			heard = ev.Workspace == "w"
		case <-time.After(200 * time.Millisecond):
			if time.Now().After(deadline) {
				t.Fatal("b never heard a's check-in")
			}
		}
	}
	for len(b.Changes()) > 0 {
		<-b.Changes()
	}
	quiet(a)
	if _, err := a.CheckIn(ctx, CheckInInput{Workspace: "w", WorkerID: r.Session.WorkerID, Gist: "hello"}); err != nil {
		t.Fatal(err)
	}
	quiet(b) // unchanged: nothing committed, nothing said
	if _, err := b.CheckOut(ctx, "w", r.Session.WorkerID); err != nil {
		t.Fatal(err)
	}
	expect(a, ChangeEvent{Workspace: "w"})
	long := strings.Repeat("ü", 4000)
	if _, err := a.CheckIn(ctx, CheckInInput{Workspace: long, Gist: "long"}); err != nil {
		t.Fatal(err)
	}
	expect(b, ChangeEvent{Hash: WorkspaceHash(long)})
}

// Killing the server inside a mutation (after its statements, before its
// commit) fails that call with a clear unavailable error, keeps failing
// (no in-memory fallback) while the server is down, and loses no committed
// row; after a restart the store works again.
func TestPostgresKilledMidMutation(t *testing.T) {
	ctx := context.Background()
	srv := pgtest.Start(t)
	u := srv.NewDatabase(t)
	hold, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	armed := false
	var mu sync.Mutex
	s := openPG(t, u, Options{TxHook: func(op, stage string) {
		mu.Lock()
		a := armed
		mu.Unlock()
		if a && stage == "commit" {
			once.Do(func() { close(hold) })
			<-release
		}
	}})
	committed, err := s.CheckIn(ctx, CheckInInput{Workspace: "w", Gist: "committed", Files: []string{"keep.go"}, HasFiles: true})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	armed = true
	mu.Unlock()
	done := make(chan error, 1)
	go func() {
		_, err := s.CheckIn(ctx, CheckInInput{Workspace: "w", Gist: "never committed"})
		done <- err
	}()
	<-hold
	if err := srv.Kill(); err != nil {
		t.Fatal(err)
	}
	close(release)
	err = <-done
	var se *StoreError
	if !errors.As(err, &se) || se.Reason != ReasonUnavailable || se.Backend != BackendPostgres || !strings.Contains(err.Error(), "PostgreSQL roster") {
		t.Fatalf("mid-mutation death: %v", err)
	}
	if strings.Contains(err.Error(), srv.Password) || strings.Contains(err.Error(), url.QueryEscape(srv.Password)) {
		t.Fatalf("error shows the password: %v", err)
	}
	if _, _, err := s.Snapshot(ctx, "w"); !errors.As(err, &se) || se.Reason != ReasonUnavailable {
		t.Fatalf("read with the server down: %v (want unavailable, never a fallback)", err)
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	var rows []Row
	deadline := time.Now().Add(20 * time.Second)
	for {
		if rows, _, err = s.Snapshot(ctx, "w"); err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("after the restart: %v", err)
	}
	if len(rows) != 1 || rows[0].WorkerID != committed.Session.WorkerID || !slices.Equal(rows[0].Files, []string{"keep.go"}) {
		t.Fatalf("after the restart the roster is %+v; want exactly the committed row", rows)
	}
}

// The password never shows: not in RedactURL, not in any error of a wrong
// port, a wrong password or a missing database.
func TestPostgresCredentialsRedacted(t *testing.T) {
	srv := pgtest.Shared(t)
	good := srv.NewDatabase(t)
	pu, _ := url.Parse(good)
	wrongPW := *pu
	wrongPW.User = url.UserPassword(pgtest.Superuser, "s3cret-wrong-pw")
	noDB := *pu
	noDB.Path = "/no_such_roster_db"
	port := *pu
	port.Host = "127.0.0.1:1"
	inQuery := *pu
	inQuery.User = url.User(pgtest.Superuser)
	inQuery.RawQuery = "sslmode=disable&password=" + url.QueryEscape("qu3ry-secret")
	secrets := []string{srv.Password, url.QueryEscape(srv.Password), url.PathEscape(srv.Password), "s3cret-wrong-pw", "qu3ry-secret"}
	for _, tc := range []struct {
		name, url string
		reason    string
	}{
		{"wrong password", wrongPW.String(), ReasonUnavailable},
		{"missing database", noDB.String(), ReasonUnavailable},
		{"nothing listening", port.String(), ReasonUnavailable},
		{"password in the query, wrong", inQuery.String(), ReasonUnavailable},
		{"not postgres", strings.Replace(good, "postgres://", "mysql://", 1), ReasonUnavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			red := RedactURL(tc.url)
			_, err := OpenPostgres(context.Background(), tc.url, Options{Budget: 2 * time.Second})
			var se *StoreError
			if !errors.As(err, &se) || se.Reason != tc.reason || se.Path != red {
				t.Fatalf("err %v (path %q), want %s at %s", err, se.Path, tc.reason, red)
			}
			for _, text := range []string{err.Error(), red, fmt.Sprintf("%+v", err)} {
				for _, s := range secrets {
					if strings.Contains(text, s) {
						t.Fatalf("%q shows the secret %q", text, s)
					}
				}
			}
		})
	}
	if got := RedactURL("postgres://u:p%40ss@h:5432/db?sslmode=verify-full&sslpassword=k"); got != "postgres://u:xxxxx@h:5432/db?sslmode=verify-full&sslpassword=xxxxx" {
		t.Fatalf("RedactURL: %s", got)
	}
	if got := RedactURL("::not a url"); strings.Contains(got, "not a url") {
		t.Fatalf("an unparsable URL is shown: %s", got)
	}
}

// The schema is created and versioned by fluxgit; a newer version is
// refused, not overwritten.
func TestPostgresSchemaVersion(t *testing.T) {
	ctx := context.Background()
	u := pgtest.Shared(t).NewDatabase(t)
	s := openPG(t, u, Options{})
	v, err := s.Ping(ctx)
	if err != nil || v != PostgresSchemaVersion {
		t.Fatalf("version %d %v, want %d", v, err, PostgresSchemaVersion)
	}
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `UPDATE shift_roster_schema SET version = 99`); err != nil {
		t.Fatal(err)
	}
	_, err = OpenPostgres(ctx, u, Options{})
	var se *StoreError
	if !errors.As(err, &se) || se.Reason != ReasonIncompatible {
		t.Fatalf("newer schema: %v", err)
	}
}

// Presence reads the PostgreSQL roster read-only: the workspaces naming
// the work tree and only those; a database without the schema is empty
// and stays without it.
func TestActiveForWorkTreePostgres(t *testing.T) {
	ctx := context.Background()
	root := filepath.Join(realTempDir(t), "webshop")
	u := pgtest.Shared(t).NewDatabase(t)
	got, err := ActiveForWorkTreePostgres(ctx, u, root)
	if err != nil || got != nil {
		t.Fatalf("no schema: %v %v", got, err)
	}
	if v, err := ProbePostgres(ctx, u); err != nil || v != 0 {
		t.Fatalf("reading created the schema: version %d %v", v, err)
	}
	s := openPG(t, u, Options{})
	var want []string
	for _, c := range []struct {
		ws   string
		want bool
	}{{root, true}, {"webshop", true}, {filepath.Join(root, "src"), true}, {root + "-fork", false}, {"shop", false}} {
		r, err := s.CheckIn(ctx, CheckInInput{Workspace: c.ws, Gist: "g " + c.ws})
		if err != nil {
			t.Fatal(err)
		}
		if c.want {
			want = append(want, r.Session.WorkerID)
		}
	}
	got, err = ActiveForWorkTreePostgres(ctx, u, root)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range got {
		ids = append(ids, r.WorkerID)
	}
	slices.Sort(ids)
	slices.Sort(want)
	if !slices.Equal(ids, want) {
		t.Fatalf("found %v, want %v", ids, want)
	}
}
