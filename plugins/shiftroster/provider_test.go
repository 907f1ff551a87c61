package shiftroster

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fluxgit/fluxgit/internal/roster"
	"github.com/fluxgit/fluxgit/plugins/sdk"
)

const defaultWS = "/home/dev/src/webshop"

func TestCheckInPatchSemantics(t *testing.T) {
	eachBackend(t, func(t *testing.T, base Config) {
		p := providerOn(t, base, defaultWS)
		first := checkIn(t, p, map[string]any{"gist": "cart totals", "files": []string{"a.go", "b.go"}})
		if first.Change != roster.Created || len(first.WorkerID) != 6 || first.WorkerID != strings.ToUpper(first.WorkerID) {
			t.Fatalf("new session: %+v", first)
		}
		if first.Workspace != defaultWS || first.StatusURI != "shift://status?workspace=%2Fhome%2Fdev%2Fsrc%2Fwebshop" {
			t.Fatalf("workspace/statusUri: %q %q", first.Workspace, first.StatusURI)
		}
		if first.CheckedInAt != first.UpdatedAt {
			t.Fatalf("a new session has updatedAt == checkedInAt: %+v", first)
		}
		lower := strings.ToLower(first.WorkerID)
		tests := []struct {
			name       string
			args       map[string]any
			wantGist   string
			wantFiles  []string
			wantChange roster.Change
		}{
			{"gist replaced, omitted files kept", map[string]any{"gist": "cart totals v2"}, "cart totals v2", []string{"a.go", "b.go"}, roster.Updated},
			{"same gist, files omitted: no change", map[string]any{"gist": "cart totals v2"}, "cart totals v2", []string{"a.go", "b.go"}, roster.Unchanged},
			{"same gist and files: no change", map[string]any{"gist": "cart totals v2", "files": []string{"a.go", "b.go"}}, "cart totals v2", []string{"a.go", "b.go"}, roster.Unchanged},
			{"files replaced", map[string]any{"gist": "cart totals v2", "files": []string{"c.go"}}, "cart totals v2", []string{"c.go"}, roster.Updated},
			{"empty files clears", map[string]any{"gist": "cart totals v2", "files": []string{}}, "cart totals v2", []string{}, roster.Updated},
			{"explicit empty workspace is the default", map[string]any{"gist": "g3", "workspace": ""}, "g3", []string{}, roster.Updated},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				args := map[string]any{"workerId": lower}
				for k, v := range tc.args {
					args[k] = v
				}
				d := checkIn(t, p, args)
				if d.WorkerID != first.WorkerID {
					t.Errorf("workerId %q, want %q (stored and returned upper-case)", d.WorkerID, first.WorkerID)
				}
				if d.Gist != tc.wantGist || !slices.Equal(d.Files, tc.wantFiles) || d.Change != tc.wantChange {
					t.Errorf("got gist %q files %q change %s; want %q %q %s", d.Gist, d.Files, d.Change, tc.wantGist, tc.wantFiles, tc.wantChange)
				}
				if d.CheckedInAt != first.CheckedInAt {
					t.Errorf("checkedInAt changed: %s -> %s", first.CheckedInAt, d.CheckedInAt)
				}
				if d.Files == nil {
					t.Error("files must be an array, never null")
				}
			})
		}
	})
}

func TestUpdatedAtMovesOnlyOnRealChange(t *testing.T) {
	eachBackend(t, func(t *testing.T, base Config) {
		now := time.Date(2026, 3, 1, 9, 15, 0, 0, time.UTC)
		base.Store.Now = func() time.Time { return now }
		p := providerOn(t, base, defaultWS)
		t.Cleanup(func() { _ = p.Close() })
		d := checkIn(t, p, map[string]any{"gist": "g"})
		now = now.Add(time.Minute)
		same := checkIn(t, p, map[string]any{"gist": "g", "workerId": d.WorkerID})
		if same.UpdatedAt != d.UpdatedAt || same.Change != roster.Unchanged {
			t.Fatalf("no-op check-in moved updatedAt: %+v", same)
		}
		now = now.Add(time.Minute)
		changed := checkIn(t, p, map[string]any{"gist": "g2", "workerId": d.WorkerID})
		if changed.UpdatedAt != "2026-03-01T09:17:00.000Z" || changed.CheckedInAt != "2026-03-01T09:15:00.000Z" {
			t.Fatalf("times after update: %+v", changed)
		}
	})
}

func TestUnknownWorker(t *testing.T) {
	eachBackend(t, func(t *testing.T, base Config) {
		p := providerOn(t, base, defaultWS)
		other := checkIn(t, p, map[string]any{"gist": "someone else | with a pipe", "workspace": "ws"})
		res := call(t, p, ToolCheckIn, map[string]any{"gist": "resume", "workerId": "zzzzzz", "workspace": "ws"})
		if res.Error == nil || res.Error.Code != CodeUnknownWorker {
			t.Fatalf("want tool error %d, got %+v", CodeUnknownWorker, res)
		}
		var d UnknownWorkerData
		if err := json.Unmarshal(res.Error.Data, &d); err != nil {
			t.Fatal(err)
		}
		if d.Reason != "unknown_worker" || d.WorkerID != "ZZZZZZ" || d.Workspace != "ws" || d.Recovery.Hint == "" ||
			len(d.ActiveWorkers) != 1 || d.ActiveWorkers[0].WorkerID != other.WorkerID || d.StatusURI != "shift://status?workspace=ws" {
			t.Fatalf("unknown_worker data: %+v", d)
		}
		for _, want := range []string{"ZZZZZZ", "Omit workerId", other.WorkerID, `someone else \| with a pipe`, "(reason unknown_worker)"} {
			if !strings.Contains(res.Text, want) {
				t.Errorf("error text lacks %q:\n%s", want, res.Text)
			}
		}
		// An id of another workspace is unknown here too, and nothing changed.
		res = call(t, p, ToolCheckIn, map[string]any{"gist": "x", "workerId": other.WorkerID})
		if res.Error == nil || res.Error.Code != CodeUnknownWorker {
			t.Fatalf("id of another workspace: %+v", res)
		}
		if err := json.Unmarshal(res.Error.Data, &d); err != nil || len(d.ActiveWorkers) != 0 {
			t.Fatalf("roster of the default workspace should be empty: %+v %v", d, err)
		}
	})
}

func TestCheckOut(t *testing.T) {
	eachBackend(t, func(t *testing.T, base Config) {
		p := providerOn(t, base, defaultWS)
		a := checkIn(t, p, map[string]any{"gist": "a"})
		b := checkIn(t, p, map[string]any{"gist": "b"})
		out := checkOut(t, p, map[string]any{"workerId": strings.ToLower(a.WorkerID), "summary": "Done with a."})
		if !out.Removed || out.WorkerID != a.WorkerID || out.Summary != "Done with a." || out.Workspace != defaultWS ||
			out.StatusURI != QualifiedStatusURI(defaultWS) || len(out.ActiveWorkers) != 1 || out.ActiveWorkers[0].WorkerID != b.WorkerID {
			t.Fatalf("check-out: %+v", out)
		}
		again := checkOut(t, p, map[string]any{"workerId": a.WorkerID})
		if again.Removed || len(again.ActiveWorkers) != 1 || again.Summary != "" {
			t.Fatalf("second check-out: %+v", again)
		}
		// Another workspace's id is not removed from here, and vice versa.
		c := checkIn(t, p, map[string]any{"gist": "c", "workspace": "elsewhere"})
		if d := checkOut(t, p, map[string]any{"workerId": c.WorkerID}); d.Removed {
			t.Fatalf("removed a session of another workspace: %+v", d)
		}
		if d := checkOut(t, p, map[string]any{"workerId": c.WorkerID, "workspace": "elsewhere"}); !d.Removed || len(d.ActiveWorkers) != 0 {
			t.Fatalf("check-out in its own workspace: %+v", d)
		}
	})
}

func TestWorkspacesAreOpaqueAndExact(t *testing.T) {
	eachBackend(t, func(t *testing.T, base Config) {
		p := providerOn(t, base, defaultWS)
		names := []string{"my-project", "/path/my-project", "My-Project", "my-project ", " ", "ws|with|pipes", "日本語"}
		ids := map[string]string{}
		for _, n := range names {
			d := checkIn(t, p, map[string]any{"gist": "in " + n, "workspace": n})
			if d.Workspace != n || len(d.ActiveWorkers) != 1 {
				t.Fatalf("workspace %q: %+v", n, d)
			}
			ids[n] = d.WorkerID
		}
		for _, n := range names {
			rows, err := mustStore(t, p).List(context.Background(), n)
			if err != nil || len(rows) != 1 || rows[0].WorkerID != ids[n] {
				t.Fatalf("roster of %q: %+v %v", n, rows, err)
			}
		}
		if d := checkIn(t, p, map[string]any{"gist": "default"}); len(d.ActiveWorkers) != 1 {
			t.Fatalf("default workspace sees others: %+v", d.ActiveWorkers)
		}
	})
}

func mustStore(t testing.TB, p *Provider) roster.Store {
	t.Helper()
	s, err := p.Store(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestRosterOrderAndSnapshot(t *testing.T) {
	eachBackend(t, func(t *testing.T, base Config) {
		now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
		base.Store.Now = func() time.Time { return now }
		p := providerOn(t, base, defaultWS)
		t.Cleanup(func() { _ = p.Close() })
		var ids []string
		for i := range 4 {
			now = now.Add(time.Second)
			d := checkIn(t, p, map[string]any{"gist": "w", "files": []string{}})
			ids = append(ids, d.WorkerID)
			if len(d.ActiveWorkers) != i+1 || d.ActiveWorkers[i].WorkerID != d.WorkerID {
				t.Fatalf("snapshot %d: %+v", i, d.ActiveWorkers)
			}
		}
		now = now.Add(time.Second)
		d := checkIn(t, p, map[string]any{"gist": "changed", "workerId": ids[0]})
		var got []string
		for _, r := range d.ActiveWorkers {
			got = append(got, r.WorkerID)
		}
		if !slices.Equal(got, ids) {
			t.Fatalf("roster order %v, want check-in order %v (updates keep the position)", got, ids)
		}
	})
}

func TestTextRendering(t *testing.T) {
	eachBackend(t, func(t *testing.T, base Config) {
		p := providerOn(t, base, defaultWS)
		solo := call(t, p, ToolCheckIn, map[string]any{"gist": "first\nline | two", "files": []string{`C:\dir\a.go`}})
		var d CheckInData
		if err := json.Unmarshal(solo.Data, &d); err != nil {
			t.Fatal(err)
		}
		if d.Gist != "first\nline | two" || d.Files[0] != `C:\dir\a.go` {
			t.Fatalf("stored values must be unchanged: %+v", d)
		}
		if !strings.HasSuffix(solo.Text, d.Notice+"\n") || strings.Count(solo.Text, "## Coordination Protocol") != 1 ||
			!strings.Contains(d.Notice, SoloNote) || strings.Count(solo.Text, SoloNote) != 1 {
			t.Fatalf("solo text must end with the notice, once:\n%s", solo.Text)
		}
		if strings.Contains(solo.Text, "| Worker |") {
			t.Fatalf("solo check-in renders the first-to-check-in note, not a table:\n%s", solo.Text)
		}
		for _, want := range []string{d.WorkerID, "(new session)", EscapeCell(defaultWS), d.StatusURI, `first line \| two`, `C:\\dir\\a.go`, d.CheckedInAt, d.UpdatedAt} {
			if !strings.Contains(solo.Text, want) {
				t.Errorf("check-in text lacks %q:\n%s", want, solo.Text)
			}
		}

		second := call(t, p, ToolCheckIn, map[string]any{"gist": "second"})
		if err := json.Unmarshal(second.Data, &d); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(d.Notice, SoloNote) || strings.Contains(second.Text, SoloNote) {
			t.Fatalf("two workers: no solo note:\n%s", second.Text)
		}
		if !strings.Contains(second.Text, "## Active Workers (2)") || !strings.Contains(second.Text, "| "+d.WorkerID+" (you) |") ||
			!strings.HasSuffix(second.Text, Protocol+"\n") {
			t.Fatalf("table with both workers, caller marked, protocol last:\n%s", second.Text)
		}

		out := call(t, p, ToolCheckOut, map[string]any{"workerId": d.WorkerID, "summary": "did | it"})
		for _, want := range []string{"Checked out Worker " + d.WorkerID, `Summary: did \| it`, "## Active Workers (1)", QualifiedStatusURI(defaultWS)} {
			if !strings.Contains(out.Text, want) {
				t.Errorf("check-out text lacks %q:\n%s", want, out.Text)
			}
		}
		none := call(t, p, ToolCheckOut, map[string]any{"workerId": d.WorkerID})
		if !strings.Contains(none.Text, "has no active session") {
			t.Errorf("no-op check-out text:\n%s", none.Text)
		}
	})
}

func TestArgumentErrors(t *testing.T) {
	p := testProvider(t, realTempDir(t), defaultWS)
	tests := []struct {
		tool string
		args string
		want string
	}{
		{ToolCheckIn, `{}`, "arguments.gist must not be empty"},
		{ToolCheckIn, `{"gist":""}`, "arguments.gist must not be empty"},
		{ToolCheckIn, `{"gist":"g","workerId":"abc"}`, "arguments.workerId"},
		{ToolCheckIn, `{"gist":"g","workerId":"ÄBCDE"}`, "arguments.workerId"},
		{ToolCheckIn, `{"gist":"g","files":[""]}`, "arguments.files[0] must not be empty"},
		{ToolCheckIn, `{"gist":"g","extra":1}`, "unknown field"},
		{ToolCheckIn, `{"gist":"` + strings.Repeat("x", roster.MaxGistLen+1) + `"}`, "at most 1000"},
		{ToolCheckOut, `{}`, "arguments.workerId"},
		{ToolCheckOut, `{"workerId":"ABCDEF","summary":"` + strings.Repeat("s", MaxSummaryLen+1) + `"}`, "arguments.summary"},
		{"shift_nope", `{}`, "unknown tool"},
	}
	for _, tc := range tests {
		_, err := p.CallTool(context.Background(), &sdk.Call{Tool: tc.tool, Arguments: json.RawMessage(tc.args)})
		var ae *sdk.ArgumentError
		if !errors.As(err, &ae) || !strings.Contains(ae.Details, tc.want) {
			t.Errorf("%s %s: got %v, want an argument error mentioning %q", tc.tool, tc.args, err, tc.want)
		}
	}
}

func TestNoDefaultWorkspace(t *testing.T) {
	p := testProvider(t, realTempDir(t), "")
	_, err := p.CallTool(context.Background(), &sdk.Call{Tool: ToolCheckIn, Arguments: json.RawMessage(`{"gist":"g"}`)})
	var ae *sdk.ArgumentError
	if !errors.As(err, &ae) || !strings.Contains(ae.Details, roster.EnvWorkspace) {
		t.Fatalf("want an argument error naming %s, got %v", roster.EnvWorkspace, err)
	}
	if d := checkIn(t, p, map[string]any{"gist": "g", "workspace": "named"}); d.Workspace != "named" {
		t.Fatal(d)
	}
	if _, err := p.ReadResource(context.Background(), StatusURI, sdk.Meta{}); !errors.Is(err, sdk.ErrResourceNotFound) {
		t.Fatalf("bare URI without a default workspace: %v", err)
	}
}

func TestReadResource(t *testing.T) {
	eachBackend(t, func(t *testing.T, base Config) {
		p := providerOn(t, base, defaultWS)
		// A second provider on the same state directory stands for another
		// process: reads must show what it committed.
		other := providerOn(t, base, "/somewhere/else")
		a := checkIn(t, other, map[string]any{"gist": "in default", "workspace": defaultWS})
		b := checkIn(t, other, map[string]any{"gist": "named | one", "files": []string{"x\ny"}, "workspace": "my project"})

		tests := []struct {
			uri      string
			contains []string
			notFound bool
		}{
			{uri: "shift://status", contains: []string{"## Active Workers (1)", a.WorkerID, "Workspace: " + defaultWS}},
			{uri: "shift://status?workspace=", contains: []string{"## Active Workers (1)", a.WorkerID}},
			{uri: QualifiedStatusURI(defaultWS), contains: []string{a.WorkerID}},
			{uri: "shift://status?workspace=my%20project", contains: []string{b.WorkerID, `named \| one`, "| x y |", "Workspace: my project"}},
			{uri: "shift://status?workspace=my+project", contains: []string{b.WorkerID}},
			{uri: "shift://status?workspace=nobody", contains: []string{"## Active Workers (0)", EmptyRoster}},
			{uri: "shift://status?workspace=%2fhome%2Fdev%2fsrc%2Fwebshop", contains: []string{a.WorkerID}},
			{uri: "shift://statusX", notFound: true},
			{uri: "shift://status?workspace=a&x=1", notFound: true},
			{uri: "shift://status?other=a", notFound: true},
			{uri: "shift://status?workspace=a#frag", notFound: true},
			{uri: "shift://status?workspace=%zz", notFound: true},
			{uri: "shift://status?workspace=%ff", notFound: true},
			{uri: "shift://status?workspace=a b", notFound: true},
			{uri: "shift://status/", notFound: true},
			{uri: "echo://counter", notFound: true},
		}
		for _, tc := range tests {
			res, err := p.ReadResource(context.Background(), tc.uri, sdk.Meta{})
			if tc.notFound {
				if !errors.Is(err, sdk.ErrResourceNotFound) {
					t.Errorf("%s: want not found, got %v %+v", tc.uri, err, res)
				}
				continue
			}
			if err != nil {
				t.Errorf("%s: %v", tc.uri, err)
				continue
			}
			if res.URI != tc.uri || res.MimeType != "text/markdown" {
				t.Errorf("%s: uri/mime %q %q", tc.uri, res.URI, res.MimeType)
			}
			for _, want := range tc.contains {
				if !strings.Contains(res.Text, want) {
					t.Errorf("%s lacks %q:\n%s", tc.uri, want, res.Text)
				}
			}
		}
		// Check-outs by the other process are seen at once, too.
		checkOut(t, other, map[string]any{"workerId": a.WorkerID, "workspace": defaultWS})
		res, err := p.ReadResource(context.Background(), StatusURI, sdk.Meta{})
		if err != nil || !strings.Contains(res.Text, EmptyRoster) {
			t.Fatalf("after the other process checked out: %v\n%+v", err, res)
		}
	})
}

func TestWatchResources(t *testing.T) {
	eachBackend(t, func(t *testing.T, base Config) {
		p := providerOn(t, base, defaultWS)
		w := startWatch(t, p)
		qualifiedDefault := QualifiedStatusURI(defaultWS)
		d := checkIn(t, p, map[string]any{"gist": "g"})
		steps := []struct {
			name string
			do   func()
			want []string
		}{
			{"new session in the default workspace", func() {}, []string{qualifiedDefault, StatusURI}},
			{"no-op check-in", func() { checkIn(t, p, map[string]any{"gist": "g", "workerId": d.WorkerID}) }, nil},
			{"real update", func() { checkIn(t, p, map[string]any{"gist": "g2", "workerId": d.WorkerID}) }, []string{qualifiedDefault, StatusURI}},
			{"files-only update", func() { checkIn(t, p, map[string]any{"gist": "g2", "workerId": d.WorkerID, "files": []string{"f"}}) }, []string{qualifiedDefault, StatusURI}},
			{"unknown worker", func() { call(t, p, ToolCheckIn, map[string]any{"gist": "g", "workerId": "QQQQQQ"}) }, nil},
			{"named workspace", func() { checkIn(t, p, map[string]any{"gist": "n", "workspace": "a b"}) }, []string{"shift://status?workspace=a%20b"}},
			{"default workspace named explicitly", func() { checkIn(t, p, map[string]any{"gist": "n", "workspace": defaultWS}) }, []string{qualifiedDefault, StatusURI}},
			{"real removal", func() { checkOut(t, p, map[string]any{"workerId": d.WorkerID}) }, []string{qualifiedDefault, StatusURI}},
			{"no-op check-out", func() { checkOut(t, p, map[string]any{"workerId": d.WorkerID}) }, nil},
		}
		for _, st := range steps {
			st.do()
			if got := w.take(); !reflect.DeepEqual(got, st.want) {
				t.Errorf("%s: events %q, want %q", st.name, got, st.want)
			}
		}
	})
}

// Reading the roster before anyone checked in creates nothing on disk.
func TestReadDoesNotCreateStore(t *testing.T) {
	dir := filepath.Join(realTempDir(t), "state")
	p := testProvider(t, dir, defaultWS)
	res, err := p.ReadResource(context.Background(), StatusURI, sdk.Meta{})
	if err != nil || !strings.Contains(res.Text, EmptyRoster) {
		t.Fatalf("read: %v %+v", err, res)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("a read created the state directory: %v", err)
	}
	checkIn(t, p, map[string]any{"gist": "g"})
	if res, err := p.ReadResource(context.Background(), StatusURI, sdk.Meta{}); err != nil || !strings.Contains(res.Text, "## Active Workers (1)") {
		t.Fatalf("read after check-in: %v %+v", err, res)
	}
}

// Claims: a check-in claims some of its files; the other worker's reply
// and shift://status name the overlap in one line; a lease past its time
// shows as expired and the overlap line drops it; a claim of an
// undeclared file is an argument error saying how to fix it.
func TestLeasesAndOverlaps(t *testing.T) {
	eachBackend(t, func(t *testing.T, base Config) {
		var mu sync.Mutex
		now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
		base.Store.Now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
		p := providerOn(t, base, defaultWS)
		a := checkIn(t, p, map[string]any{"gist": "Cart totals", "files": []string{"src/cart.ts", "src/util.ts"}, "claims": map[string]string{"src/cart.ts": "exclusive"}, "leaseMinutes": 30})
		if len(a.Leases) != 1 || a.Leases[0].Mode != "exclusive" || a.Leases[0].ExpiresAt != "2026-03-01T09:30:00.000Z" || a.Overlaps != "" {
			t.Fatalf("A's leases %+v overlaps %q", a.Leases, a.Overlaps)
		}
		raw, _ := json.Marshal(map[string]any{"gist": "Refactor", "files": []string{"src/cart.ts"}})
		res, err := p.CallTool(context.Background(), &sdk.Call{Tool: ToolCheckIn, Arguments: raw})
		if err != nil || res.Error != nil {
			t.Fatalf("B: %v %+v", err, res)
		}
		checkPayload(t, ToolCheckIn, res)
		var b CheckInData
		if err := json.Unmarshal(res.Data, &b); err != nil {
			t.Fatal(err)
		}
		want := "Overlaps: src/cart.ts is held exclusive by " + a.WorkerID + " (Cart totals) until 2026-03-01T09:30:00.000Z, also declared by " + b.WorkerID + "."
		if b.Overlaps != want || strings.Count(res.Text, want) != 1 {
			t.Fatalf("B's overlaps %q, want %q; text:\n%s", b.Overlaps, want, res.Text)
		}
		status, err := p.ReadResource(context.Background(), StatusURI, sdk.Meta{})
		if err != nil || !strings.Contains(status.Text, want) || !strings.Contains(status.Text, "src/cart.ts (exclusive until 2026-03-01T09:30:00.000Z)") {
			t.Fatalf("status lacks the overlap or the lease: %v\n%s", err, status.Text)
		}
		mu.Lock()
		now = now.Add(31 * time.Minute)
		mu.Unlock()
		status, err = p.ReadResource(context.Background(), StatusURI, sdk.Meta{})
		if err != nil || strings.Contains(status.Text, "Overlaps:") || !strings.Contains(status.Text, "src/cart.ts (exclusive lease expired 2026-03-01T09:30:00.000Z)") {
			t.Fatalf("expired lease: %v\n%s", err, status.Text)
		}
		raw, _ = json.Marshal(map[string]any{"gist": "x", "files": []string{"a"}, "claims": map[string]string{"b": "exclusive"}})
		_, err = p.CallTool(context.Background(), &sdk.Call{Tool: ToolCheckIn, Arguments: raw})
		var ae *sdk.ArgumentError
		if !errors.As(err, &ae) || !strings.Contains(ae.Details, "add it to files") {
			t.Fatalf("claim of an undeclared file: %v", err)
		}
	})
}
