package tests

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/tools/txtar"
)

var update = flag.Bool("update", false, "rewrite golden transcripts and tool snapshots with the server's current output")

// TestTranscripts replays every testdata/transcripts/*.txtar against a
// fresh fluxgit process. Each archive has:
//
//	-- setup --   lines "repo: fixture", "env: KEY=VALUE", "config: example"
//	              (registers the example provider) and "answer: METHOD
//	              JSON": the client's result for each request the server
//	              sends with that method (all optional)
//	-- client --  one message per line: JSON sent as a line, or
//	              RAW "<Go-quoted bytes>" sent verbatim (for framing tests)
//	-- server --  every message the server wrote, in order, each one
//	              pretty-printed (a stream of JSON values)
//
// $REPO, $OUTSIDE and $VERSION stand for the fixture repository, a
// directory outside the allowed roots, and the binary's version; $STATE
// for the requestState of the latest input_required result (a random
// token), so a client line can send it back. A request
// line waits for the reply with its id; anything else is followed by a
// sync ping whose reply marks the end of what that line produced.
//
// Tool definitions are not part of the transcripts: a successful tools/list
// reply is recorded as a summary (the number of tools, the fields each
// definition carries at that protocol version, and the names), written
// under the key "tools (summary)". What each tool's definition says is kept
// in testdata/tools/<name>.json, one file per tool (TestToolSnapshots), so a
// description edit is a small diff of one file.
func TestTranscripts(t *testing.T) {
	files, err := filepath.Glob("testdata/transcripts/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no transcripts: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			runTranscript(t, file)
		})
	}
}

func runTranscript(t *testing.T, file string) {
	ar, err := txtar.ParseFile(file)
	if err != nil {
		t.Fatal(err)
	}
	sections := map[string]string{}
	for _, f := range ar.Files {
		sections[f.Name] = string(f.Data)
	}
	subst := map[string]string{"$OUTSIDE": canonicalTempDir(t), "$VERSION": binVersion}
	env := baseEnv(t)
	answers := map[string]json.RawMessage{}
	anyOrder := false
	for _, line := range strings.Split(sections["setup"], "\n") {
		key, val, _ := strings.Cut(strings.TrimSpace(line), ": ")
		switch key {
		case "config":
			if val == "example" {
				env = exampleEnv(t)
			}
		case "answer":
			method, result, _ := strings.Cut(val, " ")
			answers[method] = json.RawMessage(result)
		case "repo":
			if val == "fixture" {
				subst["$REPO"] = fixtureRepo(t)
			}
		case "env":
			env = append(env, expand(val, subst))
		case "order":
			// "order: any": requests run concurrently, so the reply to a
			// request inside a RAW frame (which gets no id of its own to
			// wait for) may come after the sync ping that follows it. Such
			// a transcript is compared as a multiset of messages.
			anyOrder = val == "any"
		}
	}
	srv := startServer(t, env)
	var got []string
	toolLists := map[string]bool{} // ids of tools/list requests, as JSON
	syncN := 0
	for _, line := range strings.Split(strings.TrimRight(sections["client"], "\n"), "\n") {
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		line = expand(line, subst)
		payload := line + "\n"
		if rest, ok := strings.CutPrefix(line, "RAW "); ok {
			payload, err = strconv.Unquote(rest)
			if err != nil {
				t.Fatalf("bad RAW line %q: %v", line, err)
			}
		}
		srv.send(payload)
		want := requestID(line)
		if want != nil && requestMethod(line) == "tools/list" {
			toolLists[string(want)] = true
		}
		if want == nil {
			syncN++
			want = json.RawMessage(strconv.Quote("sync-" + strconv.Itoa(syncN)))
			srv.send(`{"jsonrpc":"2.0","id":` + string(want) + `,"method":"ping"}` + "\n")
		}
		for {
			out := srv.next(30 * time.Second)
			r := decodeResponse(t, out)
			if m := requestMethod(out); m != "" && r.ID != nil {
				// A request from the server: answer it as the setup says.
				got = append(got, prettyJSON(t, unexpand(out, subst)))
				result, ok := answers[m]
				if !ok {
					t.Fatalf("server sent %s, which the setup has no answer for", m)
				}
				srv.send(`{"jsonrpc":"2.0","id":` + string(r.ID) + `,"result":` + string(result) + "}\n")
				continue
			}
			if st := requestState(out); st != "" {
				subst["$STATE"] = st
			}
			isSync := strings.HasPrefix(string(r.ID), `"sync-`)
			if !isSync {
				if toolLists[string(r.ID)] && r.Result != nil {
					out = summarizeToolList(t, out)
				}
				got = append(got, prettyJSON(t, unexpand(out, subst)))
			}
			if string(r.ID) == string(want) {
				break
			}
		}
	}
	gotText := strings.Join(got, "")
	if *update {
		found := false
		for i := range ar.Files {
			if ar.Files[i].Name == "server" {
				ar.Files[i].Data = []byte(gotText)
				found = true
			}
		}
		if !found {
			ar.Files = append(ar.Files, txtar.File{Name: "server", Data: []byte(gotText)})
		}
		if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	wantValues := jsonStream(t, sections["server"])
	if anyOrder {
		wantValues, got = sortedCompact(wantValues), sortedCompact(got)
	}
	if len(wantValues) != len(got) {
		t.Errorf("server wrote %d messages, golden has %d (run with -update after checking)", len(got), len(wantValues))
	}
	for i := 0; i < len(wantValues) && i < len(got); i++ {
		if !jsonEqual(wantValues[i], got[i]) {
			t.Errorf("message %d differs\nwant: %s\n got: %s", i+1, compactJSON(wantValues[i]), compactJSON(got[i]))
		}
	}
}

// sortedCompact returns the messages in compact form, sorted, so that two
// transcripts whose messages differ only in order compare equal.
func sortedCompact(msgs []string) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = compactJSON(m)
	}
	sort.Strings(out)
	return out
}

// summarizeToolList replaces the tool definitions of a tools/list reply by
// their count, names and the fields they carry; every definition must carry
// the same fields, which is what the protocol version decides.
func summarizeToolList(t *testing.T, line string) string {
	t.Helper()
	var msg map[string]json.RawMessage
	if err := json.Unmarshal([]byte(line), &msg); err != nil {
		t.Fatal(err)
	}
	var result map[string]json.RawMessage
	if err := json.Unmarshal(msg["result"], &result); err != nil {
		t.Fatal(err)
	}
	var tools []map[string]json.RawMessage
	if err := json.Unmarshal(result["tools"], &tools); err != nil {
		t.Fatalf("tools/list result.tools: %v", err)
	}
	names := make([]string, 0, len(tools))
	var fields []string
	// execution (2025-11-25 taskSupport) is on the tools that take tasks
	// only; the summary lists them apart.
	tasks := map[string]json.RawMessage{}
	for i, tool := range tools {
		var name string
		_ = json.Unmarshal(tool["name"], &name)
		names = append(names, name)
		keys := make([]string, 0, len(tool))
		for k := range tool {
			if k == "execution" {
				tasks[name] = tool[k]
				continue
			}
			keys = append(keys, k)
		}
		sort.Strings(keys)
		if i == 0 {
			fields = keys
		} else if !slices.Equal(keys, fields) {
			t.Fatalf("tools/list: %s carries fields %v, %s carries %v", name, keys, names[0], fields)
		}
	}
	delete(result, "tools")
	sum := map[string]any{"count": len(tools), "fields": fields, "names": names}
	if len(tasks) > 0 {
		sum["execution"] = tasks
	}
	summary, _ := json.Marshal(sum)
	result["tools (summary)"] = summary
	msg["result"], _ = json.Marshal(result)
	out, _ := json.Marshal(msg)
	return string(out)
}

// prettyJSON indents one message for the golden file, keeping the server's
// key order, followed by a newline.
func prettyJSON(t *testing.T, s string) string {
	t.Helper()
	var buf bytes.Buffer
	if err := json.Indent(&buf, []byte(s), "", "  "); err != nil {
		// Not JSON: keep the line as written (the comparison will show it).
		return s + "\n"
	}
	buf.WriteByte('\n')
	return buf.String()
}

// jsonStream splits a golden server section into its JSON values.
func jsonStream(t *testing.T, s string) []string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	var out []string
	for {
		var v json.RawMessage
		err := dec.Decode(&v)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("golden server section is not a stream of JSON values: %v", err)
		}
		out = append(out, string(v))
	}
}

func compactJSON(s string) string {
	var buf bytes.Buffer
	if json.Compact(&buf, []byte(s)) != nil {
		return s
	}
	return buf.String()
}

// requestID returns the id a line's reply will carry when the line is a
// well-formed request, or nil when the line gets no reply or an id:null one.
func requestID(line string) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(line), &m) != nil {
		return nil
	}
	id, ok := m["id"]
	if !ok {
		return nil
	}
	if _, ok := m["method"]; !ok {
		return nil
	}
	var s string
	if json.Unmarshal(id, &s) == nil && len(s) <= 1024 {
		return id
	}
	if _, err := strconv.ParseInt(string(id), 10, 64); err == nil {
		return id
	}
	return nil
}

// requestState returns the requestState of an input_required result.
func requestState(line string) string {
	var m struct {
		Result struct {
			RequestState string `json:"requestState"`
		} `json:"result"`
	}
	_ = json.Unmarshal([]byte(line), &m)
	return m.Result.RequestState
}

func requestMethod(line string) string {
	var m struct {
		Method string `json:"method"`
	}
	_ = json.Unmarshal([]byte(line), &m)
	return m.Method
}

func expand(s string, subst map[string]string) string {
	for k, v := range subst {
		s = strings.ReplaceAll(s, k, v)
	}
	return s
}

func unexpand(s string, subst map[string]string) string {
	// Longest values first, so a path never half-matches a shorter one.
	keys := make([]string, 0, len(subst))
	for k := range subst {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return len(subst[keys[i]]) > len(subst[keys[j]]) })
	for _, k := range keys {
		if subst[k] != "" {
			s = strings.ReplaceAll(s, subst[k], k)
		}
	}
	return s
}

// jsonEqual compares two JSON texts structurally (key order and layout are
// free; numbers compare by their text, so large ids stay exact).
func jsonEqual(a, b string) bool {
	decode := func(s string) (any, error) {
		dec := json.NewDecoder(strings.NewReader(s))
		dec.UseNumber()
		var v any
		err := dec.Decode(&v)
		return v, err
	}
	va, errA := decode(a)
	vb, errB := decode(b)
	if errA != nil || errB != nil {
		return a == b
	}
	ja, _ := json.Marshal(va)
	jb, _ := json.Marshal(vb)
	return string(ja) == string(jb)
}

// TestToolSnapshots keeps one pretty-printed file per tool,
// testdata/tools/<name>.json: the definition tools/list serves in the newest
// protocol generation. A changed description or schema shows as a diff of
// that tool's file; -update rewrites them (and removes files of tools no
// longer served).
func TestToolSnapshots(t *testing.T) {
	s := startServer(t, baseEnv(t))
	r := s.call(1, "tools/list", map[string]any{"_meta": modernMeta()})
	if r.Error != nil {
		t.Fatalf("tools/list: %s", r.raw)
	}
	var res struct {
		Tools []json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(r.Result, &res); err != nil || len(res.Tools) == 0 {
		t.Fatalf("tools/list result: %v: %s", err, r.raw)
	}
	dir := filepath.Join("testdata", "tools")
	served := map[string]bool{}
	for _, raw := range res.Tools {
		var def struct {
			Name string `json:"name"`
		}
		if err := json.Unmarshal(raw, &def); err != nil || def.Name == "" || strings.ContainsAny(def.Name, `/\`) {
			t.Fatalf("tool without a usable name: %s", raw)
		}
		served[def.Name] = true
		path := filepath.Join(dir, def.Name+".json")
		pretty := prettyJSON(t, string(raw))
		if *update {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(pretty), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("%s is served but has no snapshot %s (run with -update after checking)", def.Name, path)
			continue
		}
		if !jsonEqual(string(want), pretty) {
			t.Errorf("%s differs from %s (run with -update after checking):\n got: %s", def.Name, path, compactJSON(pretty))
		}
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		if served[name] {
			continue
		}
		if *update {
			if err := os.Remove(f); err != nil {
				t.Fatal(err)
			}
			continue
		}
		t.Errorf("snapshot %s names a tool tools/list does not serve", f)
	}
	if !*update && len(files) != len(served) {
		t.Errorf("%d snapshots for %d tools", len(files), len(served))
	}
}
