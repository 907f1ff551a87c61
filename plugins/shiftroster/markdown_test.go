package shiftroster

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/fluxgit/fluxgit/internal/roster"
	"github.com/fluxgit/fluxgit/plugins/sdk"
)

func TestEscapeCell(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain", "plain"},
		{"a|b", `a\|b`},
		{`a\b`, `a\\b`},
		{`trailing\`, `trailing\\`},
		{`\|`, `\\\|`},
		{"l1\nl2", "l1 l2"},
		{"l1\r\nl2", "l1 l2"},
		{"l1\rl2", "l1 l2"},
		{"\n\r\n\r", "   "},
		{"\r\r\n", "  "},
		{"日本|語", `日本\|語`},
	} {
		if got := EscapeCell(tc.in); got != tc.want {
			t.Errorf("EscapeCell(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// splitRow splits a table row the way GitHub-flavoured Markdown does: a
// backslash escapes the next character, and any other pipe separates
// cells. It returns the raw cells between the outer pipes.
func splitRow(t *testing.T, line string) []string {
	t.Helper()
	if !strings.HasPrefix(line, "| ") || !strings.HasSuffix(line, " |") {
		t.Fatalf("row not delimited by pipes: %q", line)
	}
	var cells []string
	var cur strings.Builder
	for i := 1; i < len(line); i++ {
		switch c := line[i]; c {
		case '\\':
			cur.WriteByte(c)
			if i+1 < len(line) {
				i++
				cur.WriteByte(line[i])
			}
		case '|':
			cells = append(cells, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(c)
		}
	}
	if cur.Len() != 0 {
		t.Fatalf("text after the last pipe in %q", line)
	}
	return cells
}

// unescapeCell reverses EscapeCell on the content of one cell.
func unescapeCell(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// flatten is what a cell must show: the value with line breaks as spaces.
func flatten(s string) string {
	s = strings.ReplaceAll(s, "\r\n", " ")
	s = strings.ReplaceAll(s, "\r", " ")
	return strings.ReplaceAll(s, "\n", " ")
}

// checkTable asserts that text holds exactly one roster table with one row
// per worker, five cells each, and that every cell decodes to the
// flattened value it renders.
func checkTable(t *testing.T, text string, rows []roster.Row) {
	t.Helper()
	var lines []string
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "|") {
			lines = append(lines, l)
		}
	}
	if len(rows) == 0 {
		if len(lines) != 0 {
			t.Fatalf("no rows, but table lines:\n%s", text)
		}
		return
	}
	if len(lines) != 2+len(rows) {
		t.Fatalf("table has %d lines, want %d:\n%s", len(lines), 2+len(rows), text)
	}
	if lines[0]+"\n"+lines[1]+"\n" != tableHeader {
		t.Fatalf("header changed:\n%s", text)
	}
	for i, r := range rows {
		cells := splitRow(t, lines[2+i])
		if len(cells) != 5 {
			t.Fatalf("row %d has %d cells: %q", i, len(cells), lines[2+i])
		}
		for j, c := range cells {
			if !strings.HasPrefix(c, " ") || !strings.HasSuffix(c, " ") {
				t.Fatalf("cell %d of row %d lost its padding: %q", j, i, c)
			}
			cells[j] = unescapeCell(c[1 : len(c)-1])
		}
		id, _ := strings.CutSuffix(cells[0], " (you)")
		files := noFiles
		if len(r.Files) > 0 {
			fs := make([]string, len(r.Files))
			for k, f := range r.Files {
				fs[k] = flatten(f)
			}
			files = strings.Join(fs, ", ")
		}
		want := []string{r.WorkerID, r.CheckedInAt, r.UpdatedAt, flatten(r.Gist), files}
		if got := []string{id, cells[1], cells[2], cells[3], cells[4]}; !slices.Equal(got, want) {
			t.Fatalf("row %d decodes to %q, want %q", i, got, want)
		}
	}
}

// FuzzMarkdownTable checks, for arbitrary gists, file names and workspace
// names, that the roster Markdown never breaks the table (one line per
// worker, five cells, each decoding to the flattened value) and that the
// stored and structured values round-trip unchanged through a real store.
func FuzzMarkdownTable(f *testing.F) {
	seeds := [][4]string{
		{"plain gist", "a.go", "b.go", "ws"},
		{"pipe | inside", "x|y", "|", "a|b"},
		{`back\slash\`, `C:\dir\`, `\`, `\`},
		{"line\nbreak\r\nmore\rend", "f\n", "\r\n", "w\r\nx"},
		{`\|`, `|\`, `\\|`, `||`},
		{"  ", "—", " ", " "},
		{"日本語｜テスト", "ファイル.go", "\u2028", "ワークスペース"},
		{"`code | span`", "<br>", "**bold**", "#heading"},
		{"| --- | --- |", "-", ":---:", "| Worker |"},
		{"nul\x00byte", "tab\tfile", "\x7f", "ctl\x01"},
	}
	for _, s := range seeds {
		f.Add(s[0], s[1], s[2], s[3])
	}
	p := NewWithConfig(Config{StateDir: f.TempDir(), DefaultWorkspace: "default", Logger: slog.New(slog.DiscardHandler)})
	f.Cleanup(func() { _ = p.Close() })
	f.Fuzz(func(t *testing.T, gist, file1, file2, workspace string) {
		row := roster.Row{WorkerID: "AB12CD", Gist: gist, Files: []string{file1, file2}, CheckedInAt: "2026-03-01T09:15:00.000Z", UpdatedAt: "2026-03-01T09:15:00.000Z"}
		other := roster.Row{WorkerID: "ZZ99YY", Gist: file2, Files: nil, CheckedInAt: "2026-03-01T09:16:00.000Z", UpdatedAt: "2026-03-01T09:17:00.000Z"}
		checkTable(t, RosterTable([]roster.Row{row, other}, "AB12CD"), []roster.Row{row, other})
		status := StatusMarkdown(workspace, ListRows([]roster.Row{row}, roster.Totals{Workers: 1, Files: len(row.Files)}))
		checkTable(t, status, []roster.Row{row})
		if strings.Count(status, "\n") != 7 {
			t.Fatalf("status text has extra lines (a value broke out of its line):\n%q", status)
		}

		// Round trip through the provider and SQLite, for values a tool
		// call can carry (JSON strings are valid UTF-8; schema bounds).
		if gist == "" || file1 == "" || file2 == "" || workspace == "" ||
			!utf8.ValidString(gist) || !utf8.ValidString(file1) || !utf8.ValidString(file2) || !utf8.ValidString(workspace) ||
			utf8.RuneCountInString(gist) > roster.MaxGistLen || utf8.RuneCountInString(file1) > roster.MaxFileLen ||
			utf8.RuneCountInString(file2) > roster.MaxFileLen || utf8.RuneCountInString(workspace) > roster.MaxWorkspaceLen {
			return
		}
		d := checkIn(t, p, map[string]any{"gist": gist, "files": []string{file1, file2}, "workspace": workspace})
		if d.Gist != gist || !slices.Equal(d.Files, []string{file1, file2}) || d.Workspace != workspace {
			t.Fatalf("structured output changed the values: %q %q %q", d.Gist, d.Files, d.Workspace)
		}
		var mine *roster.Row
		for i := range d.ActiveWorkers {
			if d.ActiveWorkers[i].WorkerID == d.WorkerID {
				mine = &d.ActiveWorkers[i]
			}
		}
		if mine == nil || mine.Gist != gist || !slices.Equal(mine.Files, []string{file1, file2}) {
			t.Fatalf("roster row changed the values: %+v", mine)
		}
		checkTable(t, strings.SplitN(CheckInMarkdown(d), "## Coordination Protocol", 2)[0], tableRows(d))
		res, err := p.ReadResource(context.Background(), d.StatusURI, sdk.Meta{})
		if err != nil {
			t.Fatalf("read %s: %v", d.StatusURI, err)
		}
		checkTable(t, res.Text, d.ActiveWorkers)
		raw, _ := json.Marshal(d.ActiveWorkers)
		var back []roster.Row
		if err := json.Unmarshal(raw, &back); err != nil || back[len(back)-1].Gist != d.ActiveWorkers[len(back)-1].Gist {
			t.Fatalf("JSON round trip: %v", err)
		}
		checkOut(t, p, map[string]any{"workerId": d.WorkerID, "workspace": workspace})
	})
}

// tableRows is what a check-in text's table shows: nothing when the caller
// is alone (the solo note replaces the table), else every worker.
func tableRows(d *CheckInData) []roster.Row {
	if soloRoster(d.ActiveWorkers, d.WorkerID) {
		return nil
	}
	return d.ActiveWorkers
}
