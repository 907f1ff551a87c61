package shiftroster

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/fluxgit/fluxgit/internal/roster"
)

// Protocol is the coordination protocol every check-in hands the agent, so
// the rules arrive without any client-side configuration.
const Protocol = `## Coordination Protocol
- Other agents may be changing files in this workspace at the same time as you.
- Re-read a file right before you edit it: what you read earlier may be stale.
- Stay within the scope you declared. When it changes noticeably, call shift_check_in again with your workerId so the roster stays accurate.
- When you are done, call shift_check_out with your workerId.`

// SoloNote completes the notice when the caller is the only active worker.
const SoloNote = "You're the first to check in. No other agents are currently active."

// EmptyRoster is what a roster with no active worker renders as.
const EmptyRoster = "No agents are currently active."

// Notice is the structured notice of a check-in: the protocol, plus the
// solo note when nobody else is active.
func Notice(solo bool) string {
	if solo {
		return Protocol + "\n\n" + SoloNote
	}
	return Protocol
}

// EscapeCell makes s safe inside one GitHub-flavoured Markdown table cell:
// a backslash becomes \\ and a pipe \| (so neither can end the cell), and
// CRLF, LF and CR each become one space (so nothing can end the row).
// Stored and structured values are never escaped; only the rendering is.
func EscapeCell(s string) string {
	if !strings.ContainsAny(s, "\\|\r\n") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			b.WriteString(`\\`)
		case '|':
			b.WriteString(`\|`)
		case '\r':
			if i+1 < len(s) && s[i+1] == '\n' {
				i++
			}
			b.WriteByte(' ')
		case '\n':
			b.WriteByte(' ')
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// noFiles stands for an empty file list.
const noFiles = "—"

func filesCell(files []string, leases []roster.Lease) string {
	if len(files) == 0 {
		return noFiles
	}
	cells := make([]string, len(files))
	for i, f := range files {
		cells[i] = EscapeCell(f)
		for _, l := range leases {
			if l.File == f {
				cells[i] += " " + leaseMark(l)
			}
		}
	}
	return strings.Join(cells, ", ")
}

// leaseMark follows a claimed file: its mode and until when, or that it
// expired (expired leases stay on the row until renewed or released).
func leaseMark(l roster.Lease) string {
	if l.Expired {
		return "(" + l.Mode + " lease expired " + l.ExpiresAt + ")"
	}
	return "(" + l.Mode + " until " + l.ExpiresAt + ")"
}

// staleMark follows the worker id of a stale row.
const staleMark = " (stale)"

// maxOverlaps bounds the overlaps one line names.
const maxOverlaps = 20

// OverlapLine names, in one line the model reads, the files one worker
// claims (a live lease) that another worker declared too. With self set
// (a check-in) only overlaps involving self are named. "" when none.
func OverlapLine(rows []roster.Row, self string) string {
	var parts []string
	n := 0
	for _, holder := range rows {
		for _, l := range holder.Leases {
			if l.Expired {
				continue
			}
			var others []string
			for _, o := range rows {
				if o.WorkerID == holder.WorkerID || !slices.Contains(o.Files, l.File) {
					continue
				}
				if self != "" && o.WorkerID != self && holder.WorkerID != self {
					continue
				}
				others = append(others, o.WorkerID)
			}
			if len(others) == 0 {
				continue
			}
			if n++; n > maxOverlaps {
				continue
			}
			parts = append(parts, fmt.Sprintf("%s is held %s by %s (%s) until %s, also declared by %s",
				EscapeCell(l.File), l.Mode, holder.WorkerID, EscapeCell(clip(holder.Gist, 80)), l.ExpiresAt, strings.Join(others, ", ")))
		}
	}
	if n == 0 {
		return ""
	}
	line := "Overlaps: " + strings.Join(parts, "; ")
	if n > maxOverlaps {
		line += fmt.Sprintf("; and %d more", n-maxOverlaps)
	}
	return line + "."
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// tableHeader is the header and delimiter row of the roster table.
const tableHeader = "| Worker | Checked In | Updated | Working On | Files |\n| --- | --- | --- | --- | --- |\n"

// RosterTable renders rows as a Markdown table, one line per worker; self,
// when non-empty, marks the caller's own row.
func RosterTable(rows []roster.Row, self string) string {
	var b strings.Builder
	b.WriteString(tableHeader)
	for _, r := range rows {
		b.WriteString(tableRow(r, self))
	}
	return b.String()
}

// tableRow is one line of the roster table. A clipped row says so in its
// gist cell.
func tableRow(r roster.Row, self string) string {
	id := EscapeCell(r.WorkerID)
	if self != "" && r.WorkerID == self {
		id += youMark
	}
	if r.Stale {
		id += staleMark
	}
	gist := EscapeCell(r.Gist)
	if r.Clipped {
		gist += " " + clippedMark
	}
	return fmt.Sprintf("| %s | %s | %s | %s | %s |\n", id, EscapeCell(r.CheckedInAt), EscapeCell(r.UpdatedAt), gist, filesCell(r.Files, r.Leases))
}

// youMark follows the caller's own worker id in the table.
const youMark = " (you)"

// clippedMark ends the gist cell of a row stored beyond today's bounds.
const clippedMark = "(shortened: stored beyond today's limits)"

// Listing is the part of a workspace's roster one reply shows: the oldest
// rows that fit the reply bounds, how many workers the workspace has, and
// how many workers and declared files were left out.
type Listing struct {
	Rows           []roster.Row
	Workers        int
	OmittedWorkers int
	OmittedFiles   int
}

// ListRows picks the rows a reply shows: oldest first, at most
// MaxListedWorkers, and only while neither their JSON nor their table
// lines (each as a JSON string, which is what they cost in a reply) pass
// MaxListedBytes. At least one row is shown when there is one; the row
// bounds keep it far below the budget. totals count the whole workspace.
func ListRows(rows []roster.Row, totals roster.Totals) Listing {
	l := Listing{Rows: []roster.Row{}, Workers: max(totals.Workers, len(rows))}
	var jsonBytes, textBytes, files int
	for _, r := range rows {
		if len(l.Rows) == roster.MaxListedWorkers {
			break
		}
		j, _ := json.Marshal(r)
		t, _ := json.Marshal(tableRow(r, ""))
		tn := len(t) + len(youMark) // whoever reads it may be this row's worker
		if len(l.Rows) > 0 && (jsonBytes+len(j) > MaxListedBytes || textBytes+tn > MaxListedBytes) {
			break
		}
		jsonBytes += len(j)
		textBytes += tn
		files += len(r.Files)
		l.Rows = append(l.Rows, r)
	}
	l.OmittedWorkers = l.Workers - len(l.Rows)
	l.OmittedFiles = max(totals.Files-files, 0)
	return l
}

// solo reports that nobody but self is active.
func (l Listing) solo(self string) bool {
	return l.OmittedWorkers == 0 && soloRoster(l.Rows, self)
}

// omissionLine is the final line under a table that left something out.
func (l Listing) omissionLine() string {
	if l.OmittedWorkers == 0 && l.OmittedFiles == 0 {
		return ""
	}
	return fmt.Sprintf("\nNot shown: %d more %s and %d declared %s (a reply lists at most %d workers and %d KiB of roster, oldest check-ins first; rows stored beyond today's limits are shortened).\n",
		l.OmittedWorkers, plural(l.OmittedWorkers, "worker", "workers"), l.OmittedFiles, plural(l.OmittedFiles, "file", "files"), roster.MaxListedWorkers, MaxListedBytes>>10)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// rosterSection is "## Active Workers (N)" with the table (and what it
// left out) or EmptyRoster. N counts every active worker.
func rosterSection(l Listing, self string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## Active Workers (%d)\n\n", l.Workers)
	if l.Workers == 0 {
		b.WriteString(EmptyRoster + "\n")
	} else {
		b.WriteString(RosterTable(l.Rows, self))
		b.WriteString(l.omissionLine())
	}
	return b.String()
}

// StatusMarkdown is the text of the status resource for one workspace.
func StatusMarkdown(workspace string, l Listing) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## Active Workers (%d)\n\nWorkspace: %s\n\n", l.Workers, EscapeCell(workspace))
	if l.Workers == 0 {
		b.WriteString(EmptyRoster + "\n")
	} else {
		b.WriteString(RosterTable(l.Rows, ""))
		b.WriteString(l.omissionLine())
		if o := OverlapLine(l.Rows, ""); o != "" {
			b.WriteString("\n" + o + "\n")
		}
	}
	return b.String()
}

func listing(rows []roster.Row, omittedWorkers, omittedFiles int) Listing {
	return Listing{Rows: rows, Workers: len(rows) + omittedWorkers, OmittedWorkers: omittedWorkers, OmittedFiles: omittedFiles}
}

var changeText = map[roster.Change]string{
	roster.Created:   "new session",
	roster.Updated:   "session updated",
	roster.Unchanged: "no change: gist and files were already as given",
}

// CheckInMarkdown renders a check-in result: the session, the roster table
// when others are active, and the notice once, at the end.
func CheckInMarkdown(d *CheckInData) string {
	var b strings.Builder
	b.WriteString("## Your Session\n")
	fmt.Fprintf(&b, "- Worker ID: %s (%s)\n", d.WorkerID, changeText[d.Change])
	fmt.Fprintf(&b, "- Workspace: %s\n", EscapeCell(d.Workspace))
	fmt.Fprintf(&b, "- Status URI: %s\n", d.StatusURI)
	fmt.Fprintf(&b, "- Working on: %s\n", EscapeCell(d.Gist))
	fmt.Fprintf(&b, "- Files: %s\n", filesCell(d.Files, d.Leases))
	fmt.Fprintf(&b, "- Checked in: %s\n", d.CheckedInAt)
	fmt.Fprintf(&b, "- Updated: %s\n", d.UpdatedAt)
	if d.Overlaps != "" {
		fmt.Fprintf(&b, "- %s\n", d.Overlaps)
	}
	b.WriteString("\n")
	if l := listing(d.ActiveWorkers, d.OmittedWorkers, d.OmittedFiles); !l.solo(d.WorkerID) {
		b.WriteString(rosterSection(l, d.WorkerID))
		b.WriteString("\n")
	}
	b.WriteString(d.Notice)
	b.WriteString("\n")
	return b.String()
}

// soloRoster reports whether rows hold nobody but self.
func soloRoster(rows []roster.Row, self string) bool {
	for _, r := range rows {
		if r.WorkerID != self {
			return false
		}
	}
	return true
}

// CheckOutMarkdown renders a check-out result.
func CheckOutMarkdown(d *CheckOutData) string {
	var b strings.Builder
	if d.Removed {
		fmt.Fprintf(&b, "Checked out Worker %s from workspace %s. Session ended.\n", d.WorkerID, EscapeCell(d.Workspace))
	} else {
		fmt.Fprintf(&b, "Worker %s has no active session in workspace %s; nothing was removed.\n", d.WorkerID, EscapeCell(d.Workspace))
	}
	if d.Summary != "" {
		fmt.Fprintf(&b, "\nSummary: %s\n", EscapeCell(d.Summary))
	}
	fmt.Fprintf(&b, "\nStatus URI: %s\n\n", d.StatusURI)
	b.WriteString(rosterSection(listing(d.ActiveWorkers, d.OmittedWorkers, d.OmittedFiles), ""))
	return b.String()
}

// UnknownWorkerMarkdown is the text of the unknown_worker tool error: what
// failed, how to recover, and the roster to recover from in the same turn.
func UnknownWorkerMarkdown(d *UnknownWorkerData, message string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\nRecovery: %s\n\n", message, d.Recovery.Hint)
	fmt.Fprintf(&b, "- Workspace: %s\n- Status URI: %s\n\n", EscapeCell(d.Workspace), d.StatusURI)
	b.WriteString(rosterSection(listing(d.ActiveWorkers, d.OmittedWorkers, d.OmittedFiles), ""))
	fmt.Fprintf(&b, "\n(reason %s)\n", d.Reason)
	return b.String()
}

// StoreErrorMarkdown is the text of a store tool error.
func StoreErrorMarkdown(d *StoreErrorData, message string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\n", message)
	fmt.Fprintf(&b, "- Operation: %s\n- Database: %s\n- State directory: %s\n- Details: %s\n\n", d.Operation, EscapeCell(d.Database), EscapeCell(d.StateDir), EscapeCell(d.Details))
	fmt.Fprintf(&b, "Recovery: %s\n\n(reason %s)\n", d.Recovery.Hint, d.Reason)
	return b.String()
}
