package journal

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

var allStatuses = []Status{Pending, Approved, Executing, Completed, Failed, Rejected, Expired, Cancelled}

func open(t testing.TB) *Journal {
	t.Helper()
	j, err := Open(PathIn(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = j.Close() })
	return j
}

// proposal is a realistic new proposal: a merge body of a few hundred
// bytes with a binding and a review.
func proposal(n int) Proposal {
	id := fmt.Sprintf("0b6b3c1e-6f1a-4d3b-9a51-%012d", n)
	body := fmt.Sprintf(`{"agentId":"claude-code","idempotencyKey":"merge:client:k%d","operationType":"merge","previewId":%q,`+
		`"reason":"merge the feature branch after review","repoPath":"/home/dev/repo","requestedAt":"2026-05-28T11:42:09.512Z",`+
		`"sourceRef":"feature/x","strategy":"merge","targetRef":"main"}`, n, id)
	return Proposal{
		ID:             id,
		AgentID:        "claude-code",
		IdempotencyKey: fmt.Sprintf("merge:client:k%d", n),
		Fingerprint:    fmt.Sprintf("%064x", n),
		OperationType:  "merge",
		RepoPath:       "/home/dev/repo",
		Reason:         "merge the feature branch after review",
		RequestedAt:    "2026-05-28T11:42:09.512Z",
		ExpiresAt:      time.Now().Add(5 * time.Minute),
		Body:           json.RawMessage(body),
		Binding:        json.RawMessage(`{"repoPath":"/home/dev/repo","refs":{"feature/x":"1111111111111111111111111111111111111111","main":"2222222222222222222222222222222222222222"}}`),
		Review:         json.RawMessage(`{"merge":{"ahead":3,"behind":0,"fastForward":false,"files":["a.go","b.go"]}}`),
	}
}

func submit(t testing.TB, j *Journal, p Proposal) Proposal {
	t.Helper()
	got, created, err := j.Submit(p)
	if err != nil || !created {
		t.Fatalf("submit %s: created=%v err=%v", p.ID, created, err)
	}
	return got
}

// pathTo are the transitions that bring a pending proposal to each state.
var pathTo = map[Status][]Status{
	Pending:   nil,
	Approved:  {Approved},
	Executing: {Approved, Executing},
	Completed: {Approved, Executing, Completed},
	Failed:    {Approved, Executing, Failed},
	Rejected:  {Rejected},
	Expired:   {Expired},
	Cancelled: {Cancelled},
}

func drive(t testing.TB, j *Journal, id string, to Status) {
	t.Helper()
	cur := Pending
	for _, next := range pathTo[to] {
		if _, err := j.Transition(id, []Status{cur}, next, nil); err != nil {
			t.Fatalf("drive %s %s → %s: %v", id, cur, next, err)
		}
		cur = next
	}
}

func TestOpenFiles(t *testing.T) {
	run := t.TempDir()
	path := PathIn(run)
	j, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	submit(t, j, proposal(1))
	var mode string
	var sync, version int
	if err := j.db.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Fatalf("journal_mode %q (%v), want wal", mode, err)
	}
	if err := j.db.QueryRow("PRAGMA synchronous").Scan(&sync); err != nil || sync != 2 {
		t.Fatalf("synchronous %d (%v), want 2 (FULL)", sync, err)
	}
	if err := j.db.QueryRow("PRAGMA user_version").Scan(&version); err != nil || version != 3 {
		t.Fatalf("user_version %d (%v), want 3", version, err)
	}
	if runtime.GOOS == "windows" {
		return
	}
	for _, tc := range []struct {
		path string
		perm os.FileMode
	}{
		{filepath.Join(run, "gateway"), 0o700},
		{path, 0o600},
		{path + "-wal", 0o600},
	} {
		st, err := os.Stat(tc.path)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != tc.perm {
			t.Errorf("%s has mode %04o, want %04o", tc.path, st.Mode().Perm(), tc.perm)
		}
	}
}

func TestOpenFailures(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("permission bits and symbolic links are Unix checks")
	}
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, run string) string // returns the journal path
		want  string
	}{
		{"group-readable directory", func(t *testing.T, run string) string {
			dir := filepath.Join(run, "gateway")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			return filepath.Join(dir, FileName)
		}, "chmod 700"},
		{"symbolic link directory", func(t *testing.T, run string) string {
			if err := os.Mkdir(filepath.Join(run, "real"), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Join(run, "real"), filepath.Join(run, "gateway")); err != nil {
				t.Fatal(err)
			}
			return PathIn(run)
		}, "symbolic link"},
		{"journal is a directory", func(t *testing.T, run string) string {
			if err := os.MkdirAll(PathIn(run), 0o700); err != nil {
				t.Fatal(err)
			}
			return PathIn(run)
		}, "not a regular file"},
		{"journal is not SQLite", func(t *testing.T, run string) string {
			if err := os.MkdirAll(filepath.Join(run, "gateway"), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(PathIn(run), []byte(strings.Repeat("not a database ", 100)), 0o600); err != nil {
				t.Fatal(err)
			}
			return PathIn(run)
		}, "open journal"},
		{"newer schema", func(t *testing.T, run string) string {
			j, err := Open(PathIn(run))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := j.db.Exec("PRAGMA user_version = 99"); err != nil {
				t.Fatal(err)
			}
			j.Close()
			return PathIn(run)
		}, "schema version 99 is newer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := t.TempDir()
			path := tc.setup(t, run)
			j, err := Open(path)
			if err == nil {
				j.Close()
				t.Fatal("Open succeeded")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q does not mention %q", err, tc.want)
			}
		})
	}
}

func TestOpenTightensFileMode(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("permission bits are a Unix check")
	}
	run := t.TempDir()
	j, err := Open(PathIn(run))
	if err != nil {
		t.Fatal(err)
	}
	submit(t, j, proposal(1))
	j.Close()
	if err := os.Chmod(PathIn(run), 0o644); err != nil {
		t.Fatal(err)
	}
	j, err = Open(PathIn(run))
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	if st, _ := os.Stat(PathIn(run)); st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %04o after reopening, want 0600", st.Mode().Perm())
	}
	if _, err := j.Get(proposal(1).ID); err != nil {
		t.Fatalf("row lost across reopen: %v", err)
	}
}

func TestSubmitIdempotency(t *testing.T) {
	j := open(t)
	first := submit(t, j, proposal(1))
	if first.Status != Pending || first.UpdatedAt.IsZero() || first.CreatedAt.IsZero() {
		t.Fatalf("new proposal %+v: want pending with times set", first)
	}
	for _, tc := range []struct {
		name    string
		mut     func(*Proposal)
		created bool
		err     error
		sameID  bool
	}{
		{"replay with a new previewId", func(p *Proposal) { p.ID = "replay-id" }, false, nil, true},
		{"replay of the same request", func(p *Proposal) {}, false, nil, true},
		{"same key, other intent", func(p *Proposal) { p.ID = "other-id"; p.Fingerprint = "f2" }, false, ErrKeyConflict, false},
		{"same key, other agent", func(p *Proposal) { p.ID = "agent2-id"; p.AgentID = "codex" }, true, nil, false},
		{"previewId taken under another key", func(p *Proposal) { p.IdempotencyKey = "merge:client:new" }, false, ErrDuplicateID, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := proposal(1)
			tc.mut(&p)
			got, created, err := j.Submit(p)
			if !errors.Is(err, tc.err) || (tc.err == nil) != (err == nil) {
				t.Fatalf("err %v, want %v", err, tc.err)
			}
			if created != tc.created {
				t.Fatalf("created %v, want %v", created, tc.created)
			}
			if tc.sameID && (got.ID != first.ID || !got.CreatedAt.Equal(first.CreatedAt)) {
				t.Fatalf("replay returned %s created %v, want the existing %s", got.ID, got.CreatedAt, first.ID)
			}
		})
	}
	// A replay returns the row as it is now, decided or not.
	drive(t, j, first.ID, Rejected)
	got, created, err := j.Submit(proposal(1))
	if err != nil || created || got.Status != Rejected {
		t.Fatalf("replay after rejection: %v created=%v err=%v; want the rejected row", got.Status, created, err)
	}
	if rows, _ := j.List(Filter{}); len(rows) != 2 {
		t.Fatalf("%d rows, want 2 (the original and the other agent's)", len(rows))
	}
}

func TestSubmitRequiresFields(t *testing.T) {
	j := open(t)
	for _, field := range []string{"ID", "AgentID", "IdempotencyKey", "Fingerprint", "OperationType", "ExpiresAt", "Body"} {
		p := proposal(1)
		switch field {
		case "ID":
			p.ID = ""
		case "AgentID":
			p.AgentID = ""
		case "IdempotencyKey":
			p.IdempotencyKey = ""
		case "Fingerprint":
			p.Fingerprint = ""
		case "OperationType":
			p.OperationType = ""
		case "ExpiresAt":
			p.ExpiresAt = time.Time{}
		case "Body":
			p.Body = nil
		}
		if _, _, err := j.Submit(p); err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("without %s: err %v, want one naming it", field, err)
		}
	}
}

// Concurrent submits of one key create exactly one row.
func TestSubmitConcurrent(t *testing.T) {
	j := open(t)
	var wg sync.WaitGroup
	var mu sync.Mutex
	created := 0
	ids := map[string]bool{}
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := proposal(1)
			p.ID = fmt.Sprintf("attempt-%d", i)
			got, c, err := j.Submit(p)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if c {
				created++
			}
			ids[got.ID] = true
		}()
	}
	wg.Wait()
	if created != 1 || len(ids) != 1 {
		t.Fatalf("created %d rows, ids %v; want one row every caller sees", created, ids)
	}
}

func TestSubmitRoundTrip(t *testing.T) {
	j := open(t)
	p := proposal(7)
	p.CreatedAt = time.Date(2026, 5, 28, 11, 42, 9, 512_345_678, time.UTC)
	got := submit(t, j, p)
	read, err := j.Get(p.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !equalProposals(got, read) {
		t.Fatalf("Submit returned %+v, Get read %+v", got, read)
	}
	if !read.CreatedAt.Equal(time.Date(2026, 5, 28, 11, 42, 9, 512_000_000, time.UTC)) {
		t.Fatalf("CreatedAt %v, want millisecond precision of the given time", read.CreatedAt)
	}
	for name, pair := range map[string][2]string{
		"Body":    {string(p.Body), string(read.Body)},
		"Binding": {string(p.Binding), string(read.Binding)},
		"Review":  {string(p.Review), string(read.Review)},
		"Reason":  {p.Reason, read.Reason},
		"Request": {p.RequestedAt, read.RequestedAt},
		"Repo":    {p.RepoPath, read.RepoPath},
	} {
		if pair[0] != pair[1] {
			t.Errorf("%s stored %q, read %q", name, pair[0], pair[1])
		}
	}
	if read.Result != nil || read.Confirmations != nil {
		t.Errorf("unset JSON fields read back as %q, %q; want nil", read.Result, read.Confirmations)
	}
	if _, err := j.Get("missing"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get(missing): %v, want ErrNotFound", err)
	}
}

func equalProposals(a, b Proposal) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

// Every (state, target) pair: the lifecycle edges succeed, everything else
// is refused and leaves the row unchanged.
func TestTransitionMatrix(t *testing.T) {
	j := open(t)
	n := 0
	for _, from := range allStatuses {
		for _, to := range allStatuses {
			n++
			p := submit(t, j, proposal(n))
			drive(t, j, p.ID, from)
			before, _ := j.Get(p.ID)
			got, err := j.Transition(p.ID, []Status{from}, to, nil)
			if Allowed(from, to) {
				if err != nil || got.Status != to {
					t.Errorf("%s → %s: %v, %v; want it allowed", from, to, got.Status, err)
				}
				continue
			}
			if err == nil {
				t.Errorf("%s → %s was allowed", from, to)
				continue
			}
			if !strings.Contains(err.Error(), "not a lifecycle transition") {
				t.Errorf("%s → %s: %v, want 'not a lifecycle transition'", from, to, err)
			}
			if after, _ := j.Get(p.ID); !equalProposals(before, after) {
				t.Errorf("%s → %s: refused but the row changed", from, to)
			}
		}
	}
	want := map[Status][]Status{
		Pending:   {Approved, Rejected, Expired, Cancelled},
		Approved:  {Executing, Failed},
		Executing: {Completed, Failed, Executing},
	}
	for _, from := range allStatuses {
		for _, to := range allStatuses {
			if Allowed(from, to) != slices.Contains(want[from], to) {
				t.Errorf("Allowed(%s, %s) = %v", from, to, Allowed(from, to))
			}
		}
		if from.Terminal() != (len(want[from]) == 0) {
			t.Errorf("%s.Terminal() = %v", from, from.Terminal())
		}
	}
}

// A proposal in another state than the caller expects is a *StateError
// naming both, for every state.
func TestTransitionStateError(t *testing.T) {
	j := open(t)
	for i, cur := range allStatuses {
		p := submit(t, j, proposal(100+i))
		drive(t, j, p.ID, cur)
		for _, tc := range []struct {
			from []Status
			to   Status
		}{
			{[]Status{Pending}, Approved},
			{[]Status{Approved}, Executing},
			{[]Status{Executing}, Completed},
			{[]Status{Approved, Executing}, Failed},
		} {
			if slices.Contains(tc.from, cur) {
				continue // the allowed case, covered by TestTransitionMatrix
			}
			_, err := j.Transition(p.ID, tc.from, tc.to, func(p *Proposal) { p.RejectionReason = "must not be stored" })
			var se *StateError
			if !errors.As(err, &se) || se.ID != p.ID || se.Current != cur || !slices.Equal(se.Wanted, tc.from) {
				t.Errorf("%s with from %v: %v, want a *StateError", cur, tc.from, err)
			}
			if got, _ := j.Get(p.ID); got.Status != cur || got.RejectionReason != "" {
				t.Errorf("%s: a refused transition changed the row to %s %q", cur, got.Status, got.RejectionReason)
			}
		}
	}
	if _, err := j.Transition("missing", []Status{Pending}, Approved, nil); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown id: %v, want ErrNotFound", err)
	}
	if _, err := j.Transition("missing", nil, Approved, nil); err == nil {
		t.Fatal("a transition without source states was accepted")
	}
}

func TestTransitionMutation(t *testing.T) {
	j := open(t)
	p := submit(t, j, proposal(1))
	decided := time.Date(2026, 5, 28, 12, 0, 0, 0, time.UTC)
	before := time.Now().Add(-time.Second)
	got, err := j.Transition(p.ID, []Status{Pending}, Approved, func(p *Proposal) {
		p.DecidedBy = "page"
		p.DecidedAt = decided
		p.Confirmations = json.RawMessage(`{"typedBranch":"main"}`)
		p.Reason = "changed"           // not a mutable field: ignored
		p.Status = Rejected            // overridden by the target
		p.Body = json.RawMessage(`{}`) // ignored
	})
	if err != nil {
		t.Fatal(err)
	}
	drive := func(from, to Status, mut func(*Proposal)) {
		t.Helper()
		if _, err := j.Transition(p.ID, []Status{from}, to, mut); err != nil {
			t.Fatal(err)
		}
	}
	drive(Approved, Executing, nil)
	drive(Executing, Failed, func(p *Proposal) {
		p.Result = json.RawMessage(`{"status":"failed","message":"conflict"}`)
		p.NeedsReconciliation = true
		p.RejectionReason = "r"
	})
	read, err := j.Get(p.ID)
	if err != nil {
		t.Fatal(err)
	}
	for name, ok := range map[string]bool{
		"returned status":      got.Status == Approved,
		"status":               read.Status == Failed,
		"DecidedBy":            read.DecidedBy == "page",
		"DecidedAt":            read.DecidedAt.Equal(decided),
		"Confirmations":        string(read.Confirmations) == `{"typedBranch":"main"}`,
		"Result":               string(read.Result) == `{"status":"failed","message":"conflict"}`,
		"NeedsReconciliation":  read.NeedsReconciliation,
		"RejectionReason":      read.RejectionReason == "r",
		"Reason untouched":     read.Reason == p.Reason,
		"Body untouched":       string(read.Body) == string(p.Body),
		"UpdatedAt by journal": read.UpdatedAt.After(before),
	} {
		if !ok {
			t.Errorf("%s wrong in %+v", name, read)
		}
	}
}

func TestExpireDue(t *testing.T) {
	j := open(t)
	t0 := time.Date(2026, 5, 28, 12, 0, 0, 0, time.UTC)
	mk := func(n int, expires time.Time, state Status) string {
		p := proposal(n)
		p.ExpiresAt = expires
		submit(t, j, p)
		drive(t, j, p.ID, state)
		return p.ID
	}
	due := mk(1, t0.Add(-time.Minute), Pending)
	exact := mk(2, t0, Pending)
	later := mk(3, t0.Add(time.Millisecond), Pending)
	approved := mk(4, t0.Add(-time.Hour), Approved)
	rejected := mk(5, t0.Add(-time.Hour), Rejected)
	got, err := j.ExpireDue(t0)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, p := range got {
		ids = append(ids, p.ID)
		if p.Status != Expired || p.DecidedBy != "gateway" || !p.DecidedAt.Equal(t0) {
			t.Errorf("expired row %+v: want status expired by gateway at t0", p)
		}
	}
	if !slices.Equal(ids, []string{due, exact}) {
		t.Fatalf("expired %v, want %v", ids, []string{due, exact})
	}
	for id, want := range map[string]Status{due: Expired, exact: Expired, later: Pending, approved: Approved, rejected: Rejected} {
		if p, _ := j.Get(id); p.Status != want {
			t.Errorf("%s is %s, want %s", id, p.Status, want)
		}
	}
	if again, err := j.ExpireDue(t0); err != nil || len(again) != 0 {
		t.Fatalf("second ExpireDue: %d rows, %v; want none", len(again), err)
	}
}

func TestPrune(t *testing.T) {
	j := open(t)
	for i, s := range allStatuses {
		p := submit(t, j, proposal(i))
		drive(t, j, p.ID, s)
	}
	if n, err := j.Prune(time.Now().Add(-time.Hour)); err != nil || n != 0 {
		t.Fatalf("prune of nothing old: %d, %v", n, err)
	}
	n, err := j.Prune(time.Now().Add(time.Hour))
	if err != nil || n != 5 {
		t.Fatalf("pruned %d (%v), want the 5 terminal rows", n, err)
	}
	left, err := j.List(Filter{})
	if err != nil {
		t.Fatal(err)
	}
	var states []Status
	for _, p := range left {
		states = append(states, p.Status)
	}
	slices.Sort(states)
	if want := []Status{Approved, Executing, Pending}; !slices.Equal(states, want) {
		t.Fatalf("kept %v, want %v", states, want)
	}
}

func TestStartup(t *testing.T) {
	run := t.TempDir()
	j, err := Open(PathIn(run))
	if err != nil {
		t.Fatal(err)
	}
	ids := map[Status]string{}
	for i, s := range allStatuses {
		p := submit(t, j, proposal(i))
		drive(t, j, p.ID, s)
		ids[s] = p.ID
	}
	j.Close()
	// As after a restart.
	j, err = Open(PathIn(run))
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	for round := range 2 {
		approved, reconcile, err := j.Startup()
		if err != nil {
			t.Fatal(err)
		}
		if len(approved) != 1 || approved[0].ID != ids[Approved] || approved[0].NeedsReconciliation {
			t.Fatalf("round %d: approved %+v, want only %s, unflagged", round, approved, ids[Approved])
		}
		if len(reconcile) != 1 || reconcile[0].ID != ids[Executing] || !reconcile[0].NeedsReconciliation || reconcile[0].Status != Executing {
			t.Fatalf("round %d: reconcile %+v, want %s flagged and still executing", round, reconcile, ids[Executing])
		}
	}
	for s, id := range ids {
		p, _ := j.Get(id)
		if p.Status != s || p.NeedsReconciliation != (s == Executing) {
			t.Errorf("%s row after Startup: %s, flagged %v", s, p.Status, p.NeedsReconciliation)
		}
	}
	// Settling it is an ordinary transition.
	if _, err := j.Transition(ids[Executing], []Status{Executing}, Failed, nil); err != nil {
		t.Fatal(err)
	}
	if _, reconcile, _ := j.Startup(); len(reconcile) != 0 {
		t.Fatalf("a settled proposal still needs reconciliation: %+v", reconcile)
	}
}

func TestList(t *testing.T) {
	j := open(t)
	base := time.Date(2026, 5, 28, 12, 0, 0, 0, time.UTC)
	for i := range 6 {
		p := proposal(i)
		p.CreatedAt = base.Add(time.Duration(i) * time.Second)
		submit(t, j, p)
		if i%2 == 1 {
			drive(t, j, p.ID, Rejected)
		}
	}
	ids := func(ps []Proposal) []string {
		var out []string
		for _, p := range ps {
			out = append(out, p.ID[len(p.ID)-1:])
		}
		return out
	}
	for _, tc := range []struct {
		name string
		f    Filter
		want []string
	}{
		{"all newest first", Filter{}, []string{"5", "4", "3", "2", "1", "0"}},
		{"limit", Filter{Limit: 2}, []string{"5", "4"}},
		{"pending", Filter{Statuses: []Status{Pending}}, []string{"4", "2", "0"}},
		{"two states", Filter{Statuses: []Status{Pending, Rejected}, Limit: 3}, []string{"5", "4", "3"}},
		{"none", Filter{Statuses: []Status{Executing}}, nil},
	} {
		got, err := j.List(tc.f)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(ids(got), tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, ids(got), tc.want)
		}
	}
}

// TestRestoreActions records undo and redo actions and lists them newest
// first; an unknown action is refused.
func TestRestoreActions(t *testing.T) {
	j := open(t)
	tests := []RestoreAction{
		{Action: "undo", RepoPath: "/r", RestoreID: "restore:r:1", Operation: "commit", DecidedBy: "page", OK: true, Message: "git reset --soft x"},
		{Action: "redo", RepoPath: "/r", DecidedBy: "cli", OK: false, Message: "HEAD moved"},
	}
	for _, a := range tests {
		if _, err := j.RecordAction(a); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := j.RecordAction(RestoreAction{Action: "drop"}); err == nil {
		t.Fatal("an unknown action was recorded")
	}
	got, err := j.Actions(10)
	if err != nil || len(got) != 2 || got[0].Action != "redo" || got[0].OK || got[1].RestoreID != "restore:r:1" || !got[1].OK || got[1].At.IsZero() {
		t.Fatalf("%+v %v", got, err)
	}
}
