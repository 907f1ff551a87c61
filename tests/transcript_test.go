package tests

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/tools/txtar"
)

var update = flag.Bool("update", false, "rewrite golden transcripts with the server's current replies")

// TestTranscripts replays every testdata/transcripts/*.txtar against a
// fresh fluxgit process. Each archive has:
//
//	-- setup --   lines "repo: fixture" and "env: KEY=VALUE" (optional)
//	-- client --  one message per line: JSON sent as a line, or
//	              RAW "<Go-quoted bytes>" sent verbatim (for framing tests)
//	-- server --  every stdout line the server wrote, in order
//
// $REPO, $OUTSIDE and $VERSION stand for the fixture repository, a
// directory outside the allowed roots, and the binary's version. A request
// line waits for the reply with its id; anything else is followed by a
// sync ping whose reply marks the end of what that line produced.
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
	for _, line := range strings.Split(sections["setup"], "\n") {
		key, val, _ := strings.Cut(strings.TrimSpace(line), ": ")
		switch key {
		case "repo":
			if val == "fixture" {
				subst["$REPO"] = fixtureRepo(t)
			}
		case "env":
			env = append(env, expand(val, subst))
		}
	}
	srv := startServer(t, env)
	var got []string
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
		if want == nil {
			syncN++
			want = json.RawMessage(strconv.Quote("sync-" + strconv.Itoa(syncN)))
			srv.send(`{"jsonrpc":"2.0","id":` + string(want) + `,"method":"ping"}` + "\n")
		}
		for {
			out := srv.next(30 * time.Second)
			r := decodeResponse(t, out)
			isSync := strings.HasPrefix(string(r.ID), `"sync-`)
			if !isSync {
				got = append(got, unexpand(out, subst))
			}
			if string(r.ID) == string(want) {
				break
			}
		}
	}
	gotText := strings.Join(got, "\n") + "\n"
	if *update {
		for i := range ar.Files {
			if ar.Files[i].Name == "server" {
				ar.Files[i].Data = []byte(gotText)
			}
		}
		if _, ok := sections["server"]; !ok {
			ar.Files = append(ar.Files, txtar.File{Name: "server", Data: []byte(gotText)})
		}
		if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	wantLines := strings.Split(strings.TrimRight(sections["server"], "\n"), "\n")
	if len(wantLines) != len(got) {
		t.Errorf("server wrote %d lines, golden has %d (run with -update after checking)", len(got), len(wantLines))
	}
	for i := 0; i < len(wantLines) && i < len(got); i++ {
		if !jsonEqual(wantLines[i], got[i]) {
			t.Errorf("line %d differs\nwant: %s\n got: %s", i+1, wantLines[i], got[i])
		}
	}
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
	for i := range keys {
		for j := i + 1; j < len(keys); j++ {
			if len(subst[keys[j]]) > len(subst[keys[i]]) {
				keys[i], keys[j] = keys[j], keys[i]
			}
		}
	}
	for _, k := range keys {
		if subst[k] != "" {
			s = strings.ReplaceAll(s, subst[k], k)
		}
	}
	return s
}

// jsonEqual compares two JSON texts structurally (key order is free).
func jsonEqual(a, b string) bool {
	var va, vb any
	if json.Unmarshal([]byte(a), &va) != nil || json.Unmarshal([]byte(b), &vb) != nil {
		return a == b
	}
	ja, _ := json.Marshal(va)
	jb, _ := json.Marshal(vb)
	return string(ja) == string(jb)
}
