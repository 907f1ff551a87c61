package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestParseTimeBound(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		in      string
		want    time.Time
		wantErr string
	}{
		{"2026-11-29T08:30:00Z", time.Date(2026, 11, 29, 8, 30, 0, 0, time.UTC), ""},
		{"2026-11-29T09:30:00+01:00", time.Date(2026, 11, 29, 8, 30, 0, 0, time.UTC), ""},
		{"2026-11-29", time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC), ""},
		{"1764489600", time.Unix(1764489600, 0), ""},
		{"7d", now.Add(-7 * 24 * time.Hour), ""},
		{"24h", now.Add(-24 * time.Hour), ""},
		{"", time.Time{}, "empty time"},
		{"yesterday", time.Time{}, "RFC 3339"},
		{"-5", time.Time{}, "cannot be negative"},
		{"2026-13-01", time.Time{}, "is not a time"},
	} {
		got, err := ParseTimeBound(tc.in, now)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%q: err %v, want %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil || !got.Equal(tc.want) {
			t.Errorf("%q: %v %v, want %v", tc.in, got, err, tc.want)
		}
	}
}

func TestFilterMatch(t *testing.T) {
	at := func(ms int64, tool string) Object {
		return Object{{"timestamp", Number(fmt.Sprint(ms))}, {"tool", tool}}
	}
	t0 := time.UnixMilli(1_700_000_000_000)
	for _, tc := range []struct {
		name string
		f    Filter
		o    Object
		want bool
	}{
		{"no filter", Filter{}, at(1, "repo.status"), true},
		{"no filter, no timestamp", Filter{}, Object{{"tool", "x"}}, true},
		{"since is inclusive", Filter{Since: t0}, at(t0.UnixMilli(), "a"), true},
		{"before since", Filter{Since: t0}, at(t0.UnixMilli()-1, "a"), false},
		{"until is exclusive", Filter{Until: t0}, at(t0.UnixMilli(), "a"), false},
		{"before until", Filter{Until: t0}, at(t0.UnixMilli()-1, "a"), true},
		{"time filter, no timestamp", Filter{Since: t0}, Object{{"tool", "a"}}, false},
		{"tool listed", Filter{Tools: []string{"repo.status", "fleet.radar"}}, at(1, "fleet.radar"), true},
		{"tool not listed", Filter{Tools: []string{"repo.status"}}, at(1, "repo.statusX"), false},
		{"tool and time", Filter{Tools: []string{"a"}, Since: t0}, at(t0.UnixMilli()+5, "a"), true},
	} {
		if got := tc.f.Match(tc.o); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestCSVCell(t *testing.T) {
	for in, want := range map[string]string{
		"":                  "",
		"repo.status":       "repo.status",
		"=HYPERLINK(\"x\")": "'=HYPERLINK(\"x\")",
		"+1":                "'+1",
		"-2+3":              "'-2+3",
		"@SUM(A1)":          "'@SUM(A1)",
		"\tx":               "'\tx",
		"\rx":               "'\rx",
		"a=b":               "a=b",
		"'quoted":           "'quoted",
	} {
		if got := CSVCell(in); got != want {
			t.Errorf("CSVCell(%q) = %q, want %q", in, got, want)
		}
	}
}

// storedLines is every line of the ledger's files in order, without
// newlines.
func storedLines(t *testing.T, path string) [][]byte {
	var out [][]byte
	for _, f := range ledgerFileNames(t, path) {
		for _, l := range readLines(t, f) {
			out = append(out, bytes.TrimSuffix(l, []byte("\n")))
		}
	}
	return out
}

// Export in each format from a rotated, pruned, signed ledger: jsonl is the
// stored lines byte for byte, the entry hashes digest to the report's
// chain_digest, and filters select without changing what is verified.
func TestExportFormats(t *testing.T) {
	path := ledgerPath(t)
	s := testSigner(31)
	lim := smallLimits()
	l := openTest(t, path, s, lim)
	appendN(t, l, 0, 40)
	// An unknown tool named like a formula reaches the CSV guarded.
	if _, err := l.Append(EventFromCall(CallRecord{Tool: "=cmd|' /C calc'!A0", Outcome: OutcomeBlocked, ClientName: "x",
		Start: time.UnixMilli(1_800_000_000_000)})); err != nil {
		t.Fatal(err)
	}
	stored := storedLines(t, path)
	opts := VerifyOptions{PublicKeys: nil, limits: lim}
	opts.PublicKeys = append(opts.PublicKeys, s.Public())
	for _, tc := range []struct {
		name   string
		format string
		filter Filter
		// want counts the stored lines the filter selects.
		want func(o Object) bool
	}{
		{"jsonl", FormatJSONL, Filter{}, func(Object) bool { return true }},
		{"csv", FormatCSV, Filter{}, func(Object) bool { return true }},
		{"json", FormatJSON, Filter{}, func(Object) bool { return true }},
		{"jsonl, one tool", FormatJSONL, Filter{Tools: []string{"repo.status"}}, func(o Object) bool { v, _ := stringField(o, "tool"); return v == "repo.status" }},
		{"json, since", FormatJSON, Filter{Since: time.UnixMilli(1_700_000_000_020)}, func(o Object) bool { ts, _ := entryTime(o); return ts >= 1_700_000_000_020 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var want [][]byte
			for _, line := range stored {
				o, _ := parseObject(line)
				if tc.want(o) {
					want = append(want, line)
				}
			}
			var buf bytes.Buffer
			res, err := Export(path, ExportOptions{Verify: opts, Filter: tc.filter, Format: tc.format, TempDir: t.TempDir()}, &buf)
			if err != nil {
				t.Fatal(err)
			}
			if res.Selected != uint64(len(want)) || res.Report.Entries != uint64(len(stored)) || res.Report.PruningCount == 0 {
				t.Fatalf("selected %d of %d (want %d of %d), report %+v", res.Selected, res.Report.Entries, len(want), len(stored), res.Report)
			}
			switch tc.format {
			case FormatJSONL:
				if got := buf.Bytes(); !bytes.Equal(got, append(bytes.Join(want, []byte("\n")), '\n')) {
					t.Fatalf("jsonl export differs from the stored lines")
				}
				if len(tc.filter.Tools) == 0 {
					d := sha256.New()
					var last string
					for _, line := range want {
						o, _ := parseObject(line)
						last, _ = stringField(o, "entryHash")
						d.Write([]byte(last + "\n"))
					}
					if "sha256:"+hex.EncodeToString(d.Sum(nil)) != res.Report.ChainDigest || last != res.Report.HeadHash {
						t.Fatalf("the exported hashes do not digest to %s / head %s", res.Report.ChainDigest, res.Report.HeadHash)
					}
				}
			case FormatCSV:
				rows, err := csv.NewReader(&buf).ReadAll()
				if err != nil {
					t.Fatal(err)
				}
				if len(rows) != len(want)+1 || strings.Join(rows[0], ",") != strings.Join(CSVColumns, ",") {
					t.Fatalf("%d rows, header %v", len(rows), rows[0])
				}
				var guarded []string
				for _, row := range rows[1:] {
					if strings.Contains(row[2], "calc") {
						guarded = row
					}
				}
				if guarded == nil || guarded[2] != "'=cmd|' /C calc'!A0" || guarded[1] != "2027-01-15T08:00:00.000Z" || guarded[17] != "true" || guarded[4] != ResultBlocked {
					t.Fatalf("the formula-like tool's row %q", guarded)
				}
				for i, row := range rows[1:] {
					o, _ := parseObject(want[i])
					seq, _ := uintField(o, "sequence")
					if row[0] != fmt.Sprint(seq) {
						t.Fatalf("row %d: sequence %q, want %d", i+1, row[0], seq)
					}
				}
			case FormatJSON:
				var doc struct {
					Ledger   string            `json:"ledger"`
					Verified Report            `json:"verified"`
					Filters  map[string]any    `json:"filters"`
					Entries  []json.RawMessage `json:"entries"`
				}
				if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
					t.Fatalf("json export: %v\n%s", err, buf.String())
				}
				if doc.Ledger != "mcp.jsonl" || doc.Verified.ChainDigest != res.Report.ChainDigest || len(doc.Entries) != len(want) {
					t.Fatalf("ledger %q, %d entries (want %d), verified %+v", doc.Ledger, len(doc.Entries), len(want), doc.Verified)
				}
				for i := range want {
					if !bytes.Equal(doc.Entries[i], want[i]) {
						t.Fatalf("entry %d is not the stored line", i)
					}
				}
				if _, open := doc.Filters["since"]; !open {
					t.Fatalf("filters %v", doc.Filters)
				}
			}
		})
	}
}

// A broken or unverified ledger exports nothing at all.
func TestExportWritesNothingOnFailure(t *testing.T) {
	fx := newFixture(t, true)
	for _, tc := range []struct {
		name   string
		keys   bool
		tamper bool
		check  func(error) bool
	}{
		{"tampered", true, true, func(err error) bool { var ie *IntegrityError; return errors.As(err, &ie) }},
		{"signatures unchecked", false, false, func(err error) bool { return errors.Is(err, ErrSignaturesUnchecked) }},
	} {
		for _, format := range Formats {
			t.Run(tc.name+"/"+format, func(t *testing.T) {
				cp := copyLedger(t, fx.path)
				if tc.tamper {
					ls := readLines(t, cp)
					ls[1] = []byte(strings.Replace(string(ls[1]), `"duration_ms":`, `"duration_ms":9`, 1))
					writeLines(t, cp, ls)
				}
				opts := VerifyOptions{limits: fx.lim}
				if tc.keys {
					opts.PublicKeys = fx.keys
				}
				var buf bytes.Buffer
				_, err := Export(cp, ExportOptions{Verify: opts, Format: format, TempDir: t.TempDir()}, &buf)
				if !tc.check(err) || buf.Len() != 0 {
					t.Fatalf("err %v, %d bytes written", err, buf.Len())
				}
			})
		}
	}
}

// Exports taken while other writers append, rotate and prune are each a
// verified, gap-free prefix of the ledger: the snapshot is consistent.
func TestExportSnapshotUnderConcurrentAppends(t *testing.T) {
	path := ledgerPath(t)
	lim := smallLimits()
	lim.noSync = true
	appendN(t, openTest(t, path, nil, lim), 0, 20)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := 0; w < 2; w++ {
		l := openTest(t, path, nil, lim) // its own lock descriptor: another writer
		wg.Add(1)
		go func(base int) {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := l.Append(EventFromCall(testRecord(base + i))); err != nil {
					t.Error(err)
					return
				}
			}
		}(1000 * (w + 1))
	}
	prev := uint64(0)
	for i := 0; i < 15; i++ {
		var buf bytes.Buffer
		res, err := Export(path, ExportOptions{Verify: VerifyOptions{limits: lim}, TempDir: t.TempDir()}, &buf)
		if err != nil {
			close(stop)
			wg.Wait()
			t.Fatalf("export %d during appends: %v", i, err)
		}
		lines := bytes.Split(bytes.TrimSuffix(buf.Bytes(), []byte("\n")), []byte("\n"))
		if uint64(len(lines)) != res.Report.Entries {
			t.Fatalf("export %d: %d lines, report %d entries", i, len(lines), res.Report.Entries)
		}
		var seq uint64
		for j, line := range lines {
			o, err := parseObject(line)
			if err != nil {
				t.Fatalf("export %d line %d: %v", i, j+1, err)
			}
			s, _ := uintField(o, "sequence")
			if j > 0 && s != seq+1 {
				t.Fatalf("export %d: sequence %d after %d", i, s, seq)
			}
			seq = s
		}
		if seq < prev {
			t.Fatalf("export %d ends at %d, an earlier one at %d", i, seq, prev)
		}
		prev = seq
	}
	close(stop)
	wg.Wait()
	if rep := mustVerify(t, path, verifyOpts(nil, false, lim)); rep.PruningCount == 0 || rep.LastSequence <= prev {
		t.Fatalf("the writers did not rotate and prune during the exports: %+v", rep)
	}
}

// Stats counts what the filter selects; coalesced entries count as the
// calls they stand for.
func TestComputeStats(t *testing.T) {
	path := ledgerPath(t)
	lim := smallLimits()
	lim.retainBytes = 0
	l := openTest(t, path, nil, lim)
	day1 := time.Date(2026, 11, 29, 23, 59, 0, 0, time.UTC)
	day2 := day1.Add(2 * time.Minute)
	recs := []CallRecord{
		{Tool: "repo.status", Known: true, ReadOnly: true, Outcome: OutcomeSuccess, Start: day1},
		{Tool: "repo.status", Known: true, ReadOnly: true, Outcome: OutcomeError, Start: day1},
		{Tool: "repo.status", Known: true, ReadOnly: true, Outcome: OutcomeBlocked, ErrorCode: -32602, Start: day2},
		{Tool: "fleet.radar", Known: true, ReadOnly: true, Outcome: OutcomeSuccess, Start: day2},
	}
	for _, r := range recs {
		r.ClientName = "stats"
		if _, err := l.Append(EventFromCall(r)); err != nil {
			t.Fatal(err)
		}
	}
	// A coalesced entry standing for 5 refusals.
	ev := EventFromCall(CallRecord{Tool: "repo.status", Known: true, ReadOnly: true, Outcome: OutcomeBlocked, ErrorCode: -32602, ClientName: "stats", Start: day2})
	o := ev.object().Set("count", int64(5)).Set("firstAt", day2.UnixMilli()).Set("lastAt", day2.UnixMilli())
	l.mu.Lock()
	_, err := l.appendLocked(o)
	l.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name                      string
		f                         Filter
		entries, calls, refusals  uint64
		tools, days               int
		first                     string
		statusErrors, statusCalls uint64
	}{
		{"all", Filter{}, 5, 9, 6, 2, 2, "2026-11-29T23:59:00.000Z", 1, 8},
		{"second day", Filter{Since: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)}, 3, 7, 6, 2, 1, "2026-11-30T00:01:00.000Z", 0, 6},
		{"one tool", Filter{Tools: []string{"fleet.radar"}}, 1, 1, 0, 1, 1, "2026-11-30T00:01:00.000Z", 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, err := ComputeStats(path, VerifyOptions{limits: lim}, tc.f)
			if err != nil {
				t.Fatal(err)
			}
			if st.Entries != tc.entries || st.Calls != tc.calls || st.Refusals != tc.refusals || len(st.Tools) != tc.tools ||
				len(st.Days) != tc.days || st.First != tc.first || st.Verified.Entries != 5 {
				t.Fatalf("stats %+v", st)
			}
			for _, ts := range st.Tools {
				if ts.Tool == "repo.status" && (ts.Errors != tc.statusErrors || ts.Calls != tc.statusCalls) {
					t.Fatalf("repo.status %+v", ts)
				}
			}
		})
	}
}
