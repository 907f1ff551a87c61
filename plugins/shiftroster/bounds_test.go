package shiftroster

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	_ "github.com/glebarez/go-sqlite" // the "sqlite" driver the store uses

	"github.com/fluxgit/fluxgit/internal/roster"
	"github.com/fluxgit/fluxgit/schemas"
)

// worstRow is the most expensive row the inputSchema allows: every
// character a control character, which JSON spells as 6 bytes.
func worstRow(id string) roster.Row {
	files := make([]string, roster.MaxFiles)
	for i := range files {
		files[i] = fmt.Sprintf("%03d", i) + strings.Repeat("\x01", roster.MaxFileLen-3)
	}
	return roster.Row{WorkerID: id, Gist: strings.Repeat("\x01", roster.MaxGistLen), Files: files,
		CheckedInAt: "2026-03-01T09:15:00.000Z", UpdatedAt: "2026-03-01T09:15:00.000Z"}
}

func smallRow(i int) roster.Row {
	return roster.Row{WorkerID: fmt.Sprintf("W%05d", i), Gist: "g", Files: []string{"a", "b"},
		CheckedInAt: "2026-03-01T09:15:00.000Z", UpdatedAt: "2026-03-01T09:15:00.000Z"}
}

func TestListRowsBounds(t *testing.T) {
	many := make([]roster.Row, 0, roster.MaxListedWorkers+50)
	for i := range roster.MaxListedWorkers + 50 {
		many = append(many, smallRow(i))
	}
	worst := []roster.Row{worstRow("AAAAAA"), worstRow("BBBBBB"), worstRow("CCCCCC")}
	tests := []struct {
		name         string
		rows         []roster.Row
		totals       roster.Totals
		wantListed   int
		wantOmitted  int
		wantOmFiles  int
		wantNotShown bool
	}{
		{"empty", nil, roster.Totals{}, 0, 0, 0, false},
		{"all fit", many[:3], roster.Totals{Workers: 3, Files: 6}, 3, 0, 0, false},
		// The store hands over at most MaxListedWorkers rows; totals count all.
		{"row cap", many[:roster.MaxListedWorkers], roster.Totals{Workers: 150, Files: 300}, roster.MaxListedWorkers, 50, 100, true},
		{"more rows than the cap", many, roster.Totals{Workers: 150, Files: 300}, roster.MaxListedWorkers, 50, 100, true},
		// Worst rows: the byte budget stops after one.
		{"byte budget", worst, roster.Totals{Workers: 3, Files: 3 * roster.MaxFiles}, 1, 2, 2 * roster.MaxFiles, true},
		// A clipped row lists MaxFiles of the 500 it declared.
		{"clipped files", []roster.Row{{WorkerID: "AAAAAA", Gist: "g", Files: []string{"x"}, Clipped: true,
			CheckedInAt: "2026-03-01T09:15:00.000Z", UpdatedAt: "2026-03-01T09:15:00.000Z"}}, roster.Totals{Workers: 1, Files: 500}, 1, 0, 499, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := ListRows(tt.rows, tt.totals)
			if len(l.Rows) != tt.wantListed || l.OmittedWorkers != tt.wantOmitted || l.OmittedFiles != tt.wantOmFiles {
				t.Fatalf("listed %d, omitted %d workers and %d files; want %d, %d, %d",
					len(l.Rows), l.OmittedWorkers, l.OmittedFiles, tt.wantListed, tt.wantOmitted, tt.wantOmFiles)
			}
			raw, _ := json.Marshal(l.Rows)
			table, _ := json.Marshal(rosterSection(l, ""))
			if len(raw) > MaxListedBytes+2 || len(table) > MaxListedBytes+4096 {
				t.Fatalf("listing is %d bytes of JSON and %d of table", len(raw), len(table))
			}
			md := StatusMarkdown("ws", l)
			line := fmt.Sprintf("Not shown: %d more %s and %d declared", tt.wantOmitted, plural(tt.wantOmitted, "worker", "workers"), tt.wantOmFiles)
			if strings.Contains(md, line) != tt.wantNotShown {
				t.Fatalf("status Markdown, want the line %q = %v:\n%.2000s", line, tt.wantNotShown, md)
			}
			if !strings.Contains(md, fmt.Sprintf("## Active Workers (%d)", tt.totals.Workers)) {
				t.Fatalf("heading does not count every worker:\n%.300s", md)
			}
		})
	}
}

// The worst reply the provider can build stays inside what the host and
// the gRPC transport between them accept.
func TestWorstReplyIsBounded(t *testing.T) {
	rows := []roster.Row{worstRow("AAAAAA"), worstRow("BBBBBB")}
	self := rows[0]
	l := ListRows(rows, roster.Totals{Workers: 2, Files: 2 * roster.MaxFiles})
	d := &CheckInData{WorkerID: self.WorkerID, Gist: self.Gist, Files: self.Files, CheckedInAt: self.CheckedInAt,
		UpdatedAt: self.UpdatedAt, Change: roster.Updated, Workspace: "w", StatusURI: QualifiedStatusURI("w"),
		ActiveWorkers: l.Rows, OmittedWorkers: l.OmittedWorkers, OmittedFiles: l.OmittedFiles, Notice: Notice(false)}
	res, err := ok(d, CheckInMarkdown(d))
	if err != nil {
		t.Fatal(err)
	}
	wire, _ := json.Marshal(res)
	// 4 MiB is gRPC's default message limit; the host's frame limit is 8 MiB.
	if len(wire) >= 4<<20 {
		t.Fatalf("worst check-in result is %d bytes on the wire", len(wire))
	}
	t.Logf("worst check-in result: %d bytes", len(wire))
}

// A row stored beyond today's bounds (an older version allowed a
// 4000-character gist and 500 files of 4096 characters) is read back
// clipped and flagged, and rewritten within bounds by its next check-in.
func TestOversizedStoredRowIsClipped(t *testing.T) {
	dir := realTempDir(t)
	s := openStore(t, dir, roster.Options{})
	ctx := context.Background()
	if _, err := s.CheckIn(ctx, roster.CheckInInput{Workspace: "w", Gist: "small"}); err != nil {
		t.Fatal(err)
	}
	files := make([]string, 500)
	for i := range files {
		files[i] = fmt.Sprintf("%03d", i) + strings.Repeat("x", 4093)
	}
	many := make([]string, 500)
	for i := range many {
		many[i] = fmt.Sprintf("f%d", i)
	}
	// The rows are written beside the store, as another program would.
	raw, err := sql.Open("sqlite", s.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	nul := "before\x00after" + strings.Repeat("é", roster.MaxGistLen)
	for _, r := range []struct {
		id, gist string
		files    []string
	}{
		{"OLD001", strings.Repeat("ü", 4000), files}, // files JSON over the SQL cap
		{"OLD002", "short", many},                    // 500 short files: clipped in Go
		{"OLD003", nul, []string{"x"}},               // NUL inside a long gist
	} {
		fj, _ := json.Marshal(r.files)
		if _, err := raw.Exec(`INSERT INTO workers (worker_id, workspace, gist, files, checked_in_at, updated_at) VALUES (?, 'w', ?, ?, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')`,
			r.id, r.gist, string(fj)); err != nil {
			t.Fatal(err)
		}
	}
	rows, totals, err := s.Snapshot(ctx, "w")
	if err != nil {
		t.Fatal(err)
	}
	if totals.Workers != 4 || totals.Files != 1000+1 {
		t.Fatalf("totals %+v", totals)
	}
	for _, r := range rows {
		raw, _ := json.Marshal(r)
		validateRow(t, raw)
		old := strings.HasPrefix(r.WorkerID, "OLD")
		if r.Clipped != old {
			t.Fatalf("row %s clipped=%v", r.WorkerID, r.Clipped)
		}
		if utf8.RuneCountInString(r.Gist) > roster.MaxGistLen || len(r.Files) > roster.MaxFiles {
			t.Fatalf("row %s not clipped: %d characters, %d files", r.WorkerID, utf8.RuneCountInString(r.Gist), len(r.Files))
		}
	}
	byID := map[string]roster.Row{}
	for _, r := range rows {
		byID[r.WorkerID] = r
	}
	if g := byID["OLD003"].Gist; !strings.HasPrefix(g, "before\x00after") || utf8.RuneCountInString(g) != roster.MaxGistLen {
		t.Fatalf("NUL gist read back as %q…", g[:min(len(g), 20)])
	}
	if f := byID["OLD001"].Files; f[0] != files[0][:roster.MaxFileLen] || f[roster.MaxFiles-1] != files[roster.MaxFiles-1][:roster.MaxFileLen] {
		t.Fatalf("clipped files are not the first %d, cut to %d characters", roster.MaxFiles, roster.MaxFileLen)
	}
	l := ListRows(rows, totals)
	if l.OmittedFiles != totals.Files-(roster.MaxFiles+roster.MaxFiles+1) {
		t.Fatalf("omittedFiles %d", l.OmittedFiles)
	}

	// The next check-in of the old session rewrites it within bounds,
	// keeping the first MaxFiles files when files is omitted.
	res, err := s.CheckIn(ctx, roster.CheckInInput{Workspace: "w", WorkerID: "OLD002", Gist: "short"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Change != roster.Updated || res.Session.Clipped || len(res.Session.Files) != roster.MaxFiles || res.Session.Files[roster.MaxFiles-1] != many[roster.MaxFiles-1] {
		t.Fatalf("rewrite: change %s, clipped %v, %d files", res.Change, res.Session.Clipped, len(res.Session.Files))
	}
	if _, totals, _ = s.Snapshot(ctx, "w"); totals.Files != 500+roster.MaxFiles+1 {
		t.Fatalf("after the rewrite the store holds %d files", totals.Files)
	}
}

// The row bounds are stated three times: the constants here, the
// inputSchema of shift_check_in and schemas/roster-row.schema.json. They
// must agree, or the model is told one limit and held to another.
func TestBoundsMatchSchemas(t *testing.T) {
	loadSchemas(t)
	tool, _ := catalogVal.Tool(ToolCheckIn)
	var in struct {
		Properties struct {
			Gist  struct{ MaxLength int }
			Files struct {
				MaxItems int
				Items    struct{ MaxLength int }
			}
		}
	}
	if err := json.Unmarshal(tool.InputSchema, &in); err != nil {
		t.Fatal(err)
	}
	raw, err := schemas.FS.ReadFile("roster-row.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	row := in
	row.Properties.Gist.MaxLength, row.Properties.Files.MaxItems, row.Properties.Files.Items.MaxLength = 0, 0, 0
	if err := json.Unmarshal(raw, &row); err != nil {
		t.Fatal(err)
	}
	for name, got := range map[string][3]int{
		"gist maxLength":    {in.Properties.Gist.MaxLength, row.Properties.Gist.MaxLength, roster.MaxGistLen},
		"files maxItems":    {in.Properties.Files.MaxItems, row.Properties.Files.MaxItems, roster.MaxFiles},
		"files[] maxLength": {in.Properties.Files.Items.MaxLength, row.Properties.Files.Items.MaxLength, roster.MaxFileLen},
	} {
		if got[0] != got[2] || got[1] != got[2] {
			t.Errorf("%s: inputSchema %d, roster-row.schema.json %d, constant %d", name, got[0], got[1], got[2])
		}
	}
}
