package tests

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/glebarez/go-sqlite" // registers the "sqlite" driver the roster uses
)

// rosterEnv is the environment of a fluxgit sharing the roster in
// stateDir; workspace, when set, is SHIFT_WORKSPACE. stateDir must be
// reached without symbolic links (canonicalTempDir: macOS puts temporary
// directories under the /var link), or the roster refuses it.
func rosterEnv(t testing.TB, stateDir, workspace string) []string {
	env := append(baseEnv(t), "SHIFT_STATE_DIR="+stateDir)
	if workspace != "" {
		env = append(env, "SHIFT_WORKSPACE="+workspace)
	}
	return env
}

// rosterCall runs a roster tool and returns its structuredContent and its
// text. The roster tools keep the shift server's own result: the object is
// the provider's (session fields, activeWorkers, workspace, statusUri,
// notice, or an error object alone), never the FluxGit envelope, and the
// only text item is the Markdown, with the coordination notice at most
// once.
func rosterCall(t testing.TB, s *server, id any, tool string, args map[string]any) (map[string]any, string) {
	t.Helper()
	return rosterCallResult(t, tool, s.call(id, "tools/call", map[string]any{"name": tool, "arguments": args}))
}

// rosterCallResult checks and splits the reply of a roster tools/call (see
// rosterCall).
func rosterCallResult(t testing.TB, tool string, r response) (map[string]any, string) {
	t.Helper()
	if r.Error != nil {
		t.Fatalf("%s: %s", tool, r.raw)
	}
	var res struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		StructuredContent map[string]any `json:"structuredContent"`
		IsError           bool           `json:"isError"`
	}
	if err := json.Unmarshal(r.Result, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Content) != 1 || res.Content[0].Type != "text" {
		t.Fatalf("%s: want the Markdown as the only content item, got %d: %s", tool, len(res.Content), r.raw)
	}
	text := res.Content[0].Text
	sc := res.StructuredContent
	if sc == nil {
		t.Fatalf("%s: no structuredContent: %s", tool, r.raw)
	}
	for _, k := range []string{"tool", "readOnly", "source", "tier", "data", "repoPath"} {
		if _, ok := sc[k]; ok {
			t.Fatalf("%s: structuredContent carries the envelope field %q: %v", tool, k, sc)
		}
	}
	if _, isErr := sc["error"]; isErr != res.IsError || (isErr && len(sc) != 1) {
		t.Fatalf("%s: isError %v with structuredContent %v", tool, res.IsError, sc)
	}
	if strings.HasPrefix(strings.TrimSpace(text), "{") {
		t.Fatalf("%s: the text is JSON, not the Markdown:\n%s", tool, text)
	}
	if n := strings.Count(text, "## Coordination Protocol"); n > 1 {
		t.Fatalf("%s: the coordination notice appears %d times:\n%s", tool, n, text)
	}
	return sc, text
}

// dataOf returns a successful result's object (failing on a tool error).
func dataOf(t testing.TB, payload map[string]any) map[string]any {
	t.Helper()
	if _, ok := payload["error"]; ok {
		t.Fatalf("tool error: %v", payload)
	}
	return payload
}

func workerIDs(d map[string]any) []string {
	var ids []string
	rows, _ := d["activeWorkers"].([]any)
	for _, r := range rows {
		if m, ok := r.(map[string]any); ok {
			ids = append(ids, m["workerId"].(string))
		}
	}
	return ids
}

func readResource(t testing.TB, s *server, id any, params map[string]any) response {
	t.Helper()
	return s.call(id, "resources/read", params)
}

func resourceText(t testing.TB, r response) string {
	t.Helper()
	if r.Error != nil {
		t.Fatalf("resources/read: %s", r.raw)
	}
	var res struct {
		Contents []struct {
			URI      string `json:"uri"`
			MimeType string `json:"mimeType"`
			Text     string `json:"text"`
		} `json:"contents"`
	}
	if err := json.Unmarshal(r.Result, &res); err != nil || len(res.Contents) != 1 || res.Contents[0].MimeType != "text/markdown" {
		t.Fatalf("resources/read result: %s", r.raw)
	}
	return res.Contents[0].Text
}

// Two separate fluxgit processes sharing a state directory see each
// other's check-ins and check-outs at once.
func TestRosterSharedBetweenProcesses(t *testing.T) {
	state := canonicalTempDir(t)
	a := startServer(t, rosterEnv(t, state, "team-app"))
	b := startServer(t, rosterEnv(t, state, "team-app"))
	initialize(t, a)
	initialize(t, b)

	pa, textA := rosterCall(t, a, 1, "shift_check_in", map[string]any{"gist": "Cart totals", "files": []string{"src/cart.ts"}})
	da := dataOf(t, pa)
	idA := da["workerId"].(string)
	if da["workspace"] != "team-app" || da["statusUri"] != "shift://status?workspace=team-app" || da["change"] != "created" {
		t.Fatalf("check-in A: %v", da)
	}
	if !strings.Contains(textA, "## Your Session") || !strings.HasSuffix(strings.TrimSpace(textA), "No other agents are currently active.") {
		t.Fatalf("solo check-in text:\n%s", textA)
	}
	// The notice is in the object and ends the text, once.
	if notice, _ := da["notice"].(string); notice == "" || !strings.HasSuffix(textA, notice+"\n") || strings.Count(textA, notice) != 1 {
		t.Fatalf("notice %q is not the end of the text exactly once:\n%s", da["notice"], textA)
	}

	pb, textB := rosterCall(t, b, 1, "shift_check_in", map[string]any{"gist": "Checkout | rename", "workspace": ""})
	db := dataOf(t, pb)
	idB := db["workerId"].(string)
	if ids := workerIDs(db); len(ids) != 2 || ids[0] != idA || ids[1] != idB {
		t.Fatalf("B sees %v, want [%s %s]", ids, idA, idB)
	}
	if !strings.Contains(textB, "| "+idA+" |") || !strings.Contains(textB, `Checkout \| rename`) {
		t.Fatalf("B's table:\n%s", textB)
	}
	if text := resourceText(t, readResource(t, a, 2, map[string]any{"uri": "shift://status"})); !strings.Contains(text, idB) || !strings.Contains(text, "## Active Workers (2)") {
		t.Fatalf("A's status misses B's check-in:\n%s", text)
	}

	// B checks A out (ids are coordination selectors, not credentials);
	// A sees it at once, and a second check-out changes nothing.
	po, _ := rosterCall(t, b, 3, "shift_check_out", map[string]any{"workerId": strings.ToLower(idA), "summary": "Handed over."})
	if do := dataOf(t, po); do["removed"] != true || do["workerId"] != idA || do["summary"] != "Handed over." {
		t.Fatalf("check-out: %v", do)
	}
	if text := resourceText(t, readResource(t, a, 4, map[string]any{"uri": "shift://status?workspace=team-app"})); strings.Contains(text, idA) || !strings.Contains(text, idB) {
		t.Fatalf("A still sees itself after B checked it out:\n%s", text)
	}
	po, _ = rosterCall(t, a, 5, "shift_check_out", map[string]any{"workerId": idA})
	if do := dataOf(t, po); do["removed"] != false || len(workerIDs(do)) != 1 {
		t.Fatalf("second check-out: %v", do)
	}

	// A's id is gone: updating it is unknown_worker with the roster.
	pe, textE := rosterCall(t, a, 6, "shift_check_in", map[string]any{"gist": "resume", "workerId": idA})
	e, _ := pe["error"].(map[string]any)
	ed, _ := e["data"].(map[string]any)
	if e == nil || e["code"] != float64(10020) || ed["reason"] != "unknown_worker" || len(workerIDs(ed)) != 1 {
		t.Fatalf("unknown worker: %v", pe)
	}
	if !strings.Contains(textE, idB) || !strings.Contains(textE, "(reason unknown_worker)") {
		t.Fatalf("unknown worker text:\n%s", textE)
	}
}

// resources/list, resources/templates/list and resources/read of the
// roster in both protocol generations.
func TestRosterResourcesBothGenerations(t *testing.T) {
	state := canonicalTempDir(t)
	s := startServer(t, rosterEnv(t, state, "/srv/app"))
	initialize(t, s)
	if r := s.call(1, "resources/list", nil); !strings.Contains(string(r.Result), `"uri":"shift://status"`) {
		t.Fatalf("resources/list: %s", r.raw)
	}
	if r := s.call(2, "resources/templates/list", nil); !strings.Contains(string(r.Result), `"uriTemplate":"shift://status{?workspace}"`) {
		t.Fatalf("resources/templates/list: %s", r.raw)
	}
	p, _ := rosterCall(t, s, 3, "shift_check_in", map[string]any{"gist": "default ws"})
	d := dataOf(t, p)
	id := d["workerId"].(string)
	if d["statusUri"] != "shift://status?workspace=%2Fsrv%2Fapp" {
		t.Fatalf("statusUri %v", d["statusUri"])
	}
	p, _ = rosterCall(t, s, 4, "shift_check_in", map[string]any{"gist": "named", "workspace": "my project"})
	named := dataOf(t, p)["workerId"].(string)

	for i, gen := range []struct {
		name string
		meta map[string]any
	}{{"legacy", nil}, {"modern", modernMeta()}} {
		t.Run(gen.name, func(t *testing.T) {
			params := func(uri string) map[string]any {
				m := map[string]any{"uri": uri}
				if gen.meta != nil {
					m["_meta"] = gen.meta
				}
				return m
			}
			base := 100 * (i + 1)
			for j, c := range []struct {
				uri, has, lacks string
			}{
				{"shift://status", id, named},
				{"shift://status?workspace=%2Fsrv%2Fapp", id, named},
				{"shift://status?workspace=my%20project", named, id},
				{"shift://status?workspace=nobody", "No agents are currently active.", id},
			} {
				r := readResource(t, s, base+j, params(c.uri))
				text := resourceText(t, r)
				if !strings.Contains(text, c.has) || strings.Contains(text, c.lacks) {
					t.Errorf("%s: want %q and not %q:\n%s", c.uri, c.has, c.lacks, text)
				}
				if gen.meta != nil && !strings.Contains(string(r.Result), `"resultType":"complete"`) {
					t.Errorf("modern read without resultType: %s", r.raw)
				}
			}
			wantCode := -32002
			if gen.meta != nil {
				wantCode = -32602
			}
			r := readResource(t, s, base+50, params("shift://status?workspace=a&x=1"))
			if r.Error == nil || r.Error.Code != wantCode {
				t.Errorf("malformed roster URI: want %d, got %s", wantCode, r.raw)
			}
		})
	}
}

// Without SHIFT_WORKSPACE the default workspace is the real path of the
// git work tree the server was started in (the tests run inside this
// repository's work tree, or outside any: then the directory itself).
func TestRosterDefaultWorkspaceFromStartDirectory(t *testing.T) {
	cwd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	want, _ := filepath.EvalSymlinks(cwd)
	if out, err := exec.Command("git", "-C", cwd, "rev-parse", "--show-toplevel").Output(); err == nil {
		if top, err := filepath.EvalSymlinks(strings.TrimSpace(string(out))); err == nil {
			want = top
		}
	}
	s := startServer(t, rosterEnv(t, canonicalTempDir(t), ""))
	initialize(t, s)
	p, _ := rosterCall(t, s, 1, "shift_check_in", map[string]any{"gist": "where am I"})
	if got := dataOf(t, p)["workspace"]; got != want {
		t.Fatalf("default workspace %q, want %q", got, want)
	}
}

// A corrupt roster is an explicit tool error in the envelope, never an
// in-memory fallback.
func TestRosterCorruptStore(t *testing.T) {
	state := canonicalTempDir(t)
	if err := os.WriteFile(filepath.Join(state, "roster.sqlite"), []byte(strings.Repeat("garbage ", 1000)), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, rosterEnv(t, state, "w"))
	initialize(t, s)
	p, text := rosterCall(t, s, 1, "shift_check_in", map[string]any{"gist": "g"})
	e, _ := p["error"].(map[string]any)
	ed, _ := e["data"].(map[string]any)
	if e == nil || e["code"] != float64(10022) || ed["reason"] != "store_corrupt" || !strings.Contains(e["message"].(string), "roster.sqlite") {
		t.Fatalf("corrupt store: %v", p)
	}
	if !strings.Contains(text, "(reason store_corrupt)") {
		t.Fatalf("text:\n%s", text)
	}
	if r := readResource(t, s, 2, map[string]any{"uri": "shift://status"}); r.Error == nil || !strings.Contains(string(r.Error.Data), "store_corrupt") {
		t.Fatalf("resources/read of a corrupt store: %s", r.raw)
	}
}

// Subscriptions to the roster in both generations: one update per real
// change, none for a no-op check-in or check-out.
func TestRosterSubscriptions(t *testing.T) {
	state := canonicalTempDir(t)
	s := startServer(t, rosterEnv(t, state, "sub-ws"))
	initialize(t, s)
	const qualified = "shift://status?workspace=sub-ws"
	if r := s.call(1, "resources/subscribe", map[string]any{"uri": qualified}); r.Error != nil {
		t.Fatalf("subscribe: %s", r.raw)
	}
	listen := map[string]any{"_meta": modernMeta(), "notifications": map[string]any{"resourceSubscriptions": []string{"shift://status"}}}
	s.sendJSON(map[string]any{"jsonrpc": "2.0", "id": "listen-1", "method": "subscriptions/listen", "params": listen})
	if got := s.notifications(time.Second); len(got) != 1 || got[0].Method != "notifications/subscriptions/acknowledged" {
		t.Fatalf("listen acknowledgement: %+v", got)
	}
	count := func() (legacy, modern int) {
		for _, n := range s.notifications(500 * time.Millisecond) {
			if n.Method != "notifications/resources/updated" {
				t.Fatalf("unexpected notification %+v", n)
			}
			switch {
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
	p, _ := rosterCall(t, s, 2, "shift_check_in", map[string]any{"gist": "g"})
	id := dataOf(t, p)["workerId"].(string)
	if l, m := count(); l != 1 || m != 1 {
		t.Fatalf("check-in: %d legacy, %d modern updates; want 1 and 1", l, m)
	}
	rosterCall(t, s, 3, "shift_check_in", map[string]any{"gist": "g", "workerId": id})
	if l, m := count(); l != 0 || m != 0 {
		t.Fatalf("no-op check-in notified: %d %d", l, m)
	}
	rosterCall(t, s, 4, "shift_check_out", map[string]any{"workerId": id})
	if l, m := count(); l != 1 || m != 1 {
		t.Fatalf("check-out: %d legacy, %d modern updates; want 1 and 1", l, m)
	}
	rosterCall(t, s, 5, "shift_check_out", map[string]any{"workerId": id})
	if l, m := count(); l != 0 || m != 0 {
		t.Fatalf("no-op check-out notified: %d %d", l, m)
	}
	s.sendJSON(map[string]any{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": map[string]any{"requestId": "listen-1"}})
}

// worstFiles is the most expensive files list the inputSchema allows:
// 100 entries of 1024 characters, almost all control characters, which
// JSON spells as 6 bytes each.
func worstFiles(tag string) []string {
	files := make([]string, 100)
	for i := range files {
		p := fmt.Sprintf("%s-%03d", tag, i)
		files[i] = p + strings.Repeat("\x01", 1024-len(p))
	}
	return files
}

// rosterRefusal reports whether a tools/call was refused for its
// arguments, as -32602 or as an isError result, and the text saying why.
func rosterRefusal(t testing.TB, r response) (bool, string) {
	t.Helper()
	if r.Error != nil {
		return r.Error.Code == -32602, r.raw
	}
	var res struct {
		IsError bool `json:"isError"`
	}
	_ = json.Unmarshal(r.Result, &res)
	return res.IsError, r.raw
}

// One agent cannot make a workspace unanswerable: rows are bounded when
// written (the old limits, a 4000-character gist and 500 files of 4096
// characters, are refused), rows an older version stored bigger are read
// back clipped, and every reply lists only what fits, counting what it left
// out. Three processes fill one workspace with the worst rows allowed;
// check-in, check-out and shift://status keep answering from each of them,
// every reply under the 8 MiB frame, with omittedWorkers and omittedFiles
// exactly what the table leaves out.
func TestRosterWorstRowsStillAnswer(t *testing.T) {
	state := canonicalTempDir(t)
	servers := []*server{
		startServer(t, rosterEnv(t, state, "crowd")),
		startServer(t, rosterEnv(t, state, "crowd")),
		startServer(t, rosterEnv(t, state, "crowd")),
	}
	for _, s := range servers {
		initialize(t, s)
	}
	const frameLimit = 8 << 20
	files := map[string]int{} // expected roster: worker id -> declared files
	totalFiles := func() (n int) {
		for _, f := range files {
			n += f
		}
		return n
	}
	// checkListing verifies a result's or resource's counts against the
	// expected roster.
	checkListing := func(what string, d map[string]any, text string) {
		t.Helper()
		rows, _ := d["activeWorkers"].([]any)
		listedFiles := 0
		for _, r := range rows {
			fs, _ := r.(map[string]any)["files"].([]any)
			listedFiles += len(fs)
		}
		ow, _ := d["omittedWorkers"].(float64)
		of, _ := d["omittedFiles"].(float64)
		if len(rows)+int(ow) != len(files) || listedFiles+int(of) != totalFiles() {
			t.Fatalf("%s: %d rows listed + %v omitted, %d files listed + %v omitted; the roster has %d workers and %d files",
				what, len(rows), ow, listedFiles, of, len(files), totalFiles())
		}
		if text != "" && ow+of > 0 && !strings.Contains(text, fmt.Sprintf("Not shown: %d more ", int(ow))) {
			t.Fatalf("%s: the table does not say what it left out:\n%.3000s", what, text)
		}
	}
	largest := 0
	defer func() { t.Logf("largest reply: %d bytes", largest) }()
	call := func(s *server, id int, tool string, args map[string]any) (map[string]any, string) {
		t.Helper()
		start := time.Now()
		r := s.call(id, "tools/call", map[string]any{"name": tool, "arguments": args})
		t.Logf("%s: %d bytes in %v", tool, len(r.raw), time.Since(start).Round(time.Millisecond))
		largest = max(largest, len(r.raw))
		if len(r.raw) >= frameLimit {
			t.Fatalf("%s reply is %d bytes", tool, len(r.raw))
		}
		return rosterCallResult(t, tool, r)
	}

	// Control: the limits that allowed the 12 MB reply are refused now,
	// with the reason in the text the model receives.
	for i, args := range []map[string]any{
		{"gist": strings.Repeat("g", 4000)},
		{"gist": "g", "files": make([]string, 500)},
		{"gist": "g", "files": []string{strings.Repeat("f", 4096)}},
	} {
		if args["files"] != nil {
			if fs := args["files"].([]string); fs[0] == "" {
				for j := range fs {
					fs[j] = fmt.Sprint(j)
				}
			}
		}
		r := servers[0].call(100+i, "tools/call", map[string]any{"name": "shift_check_in", "arguments": args})
		refused, raw := rosterRefusal(t, r)
		if !refused || !(strings.Contains(raw, "1000") || strings.Contains(raw, "100") || strings.Contains(raw, "1024")) {
			t.Fatalf("old-limit check-in %d was not refused with its bound: %.500s", i, raw)
		}
	}

	first, _ := call(servers[0], 1, "shift_check_in", map[string]any{"gist": "first", "files": []string{"a.go"}})
	files[first["workerId"].(string)] = 1

	// A row an older version (or another program) stored at the old
	// limits, oldest of all, so every listing starts with it.
	db, err := sql.Open("sqlite", filepath.Join(state, "roster.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	oldFiles := make([]string, 500)
	for i := range oldFiles {
		oldFiles[i] = fmt.Sprintf("%03d", i) + strings.Repeat("x", 4093)
	}
	oldJSON, _ := json.Marshal(oldFiles)
	if _, err := db.Exec(`INSERT INTO workers (worker_id, workspace, gist, files, checked_in_at, updated_at) VALUES ('OLD001', 'crowd', ?, ?, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')`,
		strings.Repeat("y", 4000), string(oldJSON)); err != nil {
		t.Fatal(err)
	}
	_ = db.Close()
	files["OLD001"] = 500

	// Every process adds two worst rows.
	var worst []string
	id := 10
	for p, s := range servers {
		for k := range 2 {
			id++
			d, text := call(s, id, "shift_check_in", map[string]any{"gist": strings.Repeat("\x01", 1000), "files": worstFiles(fmt.Sprintf("p%dk%d", p, k))})
			files[d["workerId"].(string)] = 100
			worst = append(worst, d["workerId"].(string))
			checkListing(fmt.Sprintf("worst check-in %d/%d", p, k), d, text)
		}
	}
	if len(files) != 8 {
		t.Fatalf("roster %v", files)
	}

	// Now every process still answers all three ways.
	for p, s := range servers {
		id += 10
		d, text := call(s, id, "shift_check_in", map[string]any{"gist": fmt.Sprintf("late %d", p), "files": []string{"x.go", "y.go"}})
		files[d["workerId"].(string)] = 2
		checkListing(fmt.Sprintf("late check-in %d", p), d, text)
		rows, _ := d["activeWorkers"].([]any)
		if old := rows[0].(map[string]any); old["workerId"] != "OLD001" || old["clipped"] != true || len(old["files"].([]any)) != 100 || len(old["gist"].(string)) != 1000 {
			t.Fatalf("the old row is not listed first, clipped: %.300v", old)
		}

		out, outText := call(s, id+1, "shift_check_out", map[string]any{"workerId": worst[p]})
		if out["removed"] != true {
			t.Fatalf("check-out of %s: %v", worst[p], out)
		}
		delete(files, worst[p])
		checkListing(fmt.Sprintf("check-out %d", p), out, outText)

		r := readResource(t, s, id+2, map[string]any{"uri": "shift://status"})
		if len(r.raw) >= frameLimit {
			t.Fatalf("status reply is %d bytes", len(r.raw))
		}
		status := resourceText(t, r)
		if !strings.Contains(status, fmt.Sprintf("## Active Workers (%d)", len(files))) || !strings.Contains(status, "Not shown: ") || !strings.Contains(status, "(shortened") {
			t.Fatalf("status of process %d:\n%.2000s", p, status)
		}

		// unknown_worker carries a bounded roster too.
		e, eText := call(s, id+3, "shift_check_in", map[string]any{"gist": "resume", "workerId": worst[p]})
		ed, _ := e["error"].(map[string]any)["data"].(map[string]any)
		if ed["reason"] != "unknown_worker" || !strings.Contains(eText, "(reason unknown_worker)") {
			t.Fatalf("unknown worker: %.500v", e)
		}
		checkListing(fmt.Sprintf("unknown worker %d", p), ed, eText)
	}
}

// A symlinked or world-writable SHIFT_STATE_DIR is refused through the
// real binary with 10024 state_dir_unsafe, a fix in the text the model
// receives, and nothing written through the link; a private directory
// (the control) works.
func TestRosterUnsafeStateDir(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(base, "target")
	if err := os.Mkdir(target, 0o700); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(base, "link")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	open := filepath.Join(base, "open")
	if err := os.Mkdir(open, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, dir, fix string }{
		{"symlink", link, "real path"},
		{"world-writable", open, "chmod go-w " + open},
		{"control", filepath.Join(base, "private"), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := startServer(t, rosterEnv(t, c.dir, "w"))
			initialize(t, s)
			p, text := rosterCall(t, s, 1, "shift_check_in", map[string]any{"gist": "g"})
			if c.fix == "" {
				dataOf(t, p)
				return
			}
			e, _ := p["error"].(map[string]any)
			ed, _ := e["data"].(map[string]any)
			if e == nil || e["code"] != float64(10024) || ed["reason"] != "state_dir_unsafe" || !strings.Contains(text, c.fix) || !strings.Contains(text, "SHIFT_STATE_DIR") {
				t.Fatalf("unsafe state dir: %v\n%s", p, text)
			}
		})
	}
	if entries, _ := os.ReadDir(target); len(entries) != 0 {
		t.Fatalf("the link's target holds %d entries after the refused check-in", len(entries))
	}
}

// Clients before structured content get the Markdown alone: no JSON text
// item, and a tool error still flagged isError with its reason in the text.
func TestRosterLegacyClientGetsMarkdown(t *testing.T) {
	s := startServer(t, rosterEnv(t, canonicalTempDir(t), "legacy"))
	if r := s.call(0, "initialize", map[string]any{"protocolVersion": "2025-03-26", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "old", "version": "1"}}); r.Error != nil {
		t.Fatal(r.raw)
	}
	for i, c := range []struct {
		args    map[string]any
		isError bool
		has     string
	}{
		{map[string]any{"gist": "g"}, false, "## Coordination Protocol"},
		{map[string]any{"gist": "g", "workerId": "ZZZZZZ"}, true, "(reason unknown_worker)"},
	} {
		r := s.call(i+1, "tools/call", map[string]any{"name": "shift_check_in", "arguments": c.args})
		var res struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
			StructuredContent json.RawMessage `json:"structuredContent"`
			IsError           bool            `json:"isError"`
		}
		if err := json.Unmarshal(r.Result, &res); err != nil || r.Error != nil {
			t.Fatalf("%s", r.raw)
		}
		if len(res.Content) != 1 || res.StructuredContent != nil || res.IsError != c.isError ||
			!strings.Contains(res.Content[0].Text, c.has) || strings.HasPrefix(res.Content[0].Text, "{") {
			t.Fatalf("legacy result %d: %s", i, r.raw)
		}
	}
}
