package shiftroster

import (
	"fmt"
	"strings"
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

func filesCell(files []string) string {
	if len(files) == 0 {
		return noFiles
	}
	cells := make([]string, len(files))
	for i, f := range files {
		cells[i] = EscapeCell(f)
	}
	return strings.Join(cells, ", ")
}

// tableHeader is the header and delimiter row of the roster table.
const tableHeader = "| Worker | Checked In | Updated | Working On | Files |\n| --- | --- | --- | --- | --- |\n"

// RosterTable renders rows as a Markdown table, one line per worker; self,
// when non-empty, marks the caller's own row.
func RosterTable(rows []Row, self string) string {
	var b strings.Builder
	b.WriteString(tableHeader)
	for _, r := range rows {
		id := EscapeCell(r.WorkerID)
		if self != "" && r.WorkerID == self {
			id += " (you)"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", id, EscapeCell(r.CheckedInAt), EscapeCell(r.UpdatedAt), EscapeCell(r.Gist), filesCell(r.Files))
	}
	return b.String()
}

// rosterSection is "## Active Workers (N)" with the table or EmptyRoster.
func rosterSection(rows []Row, self string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## Active Workers (%d)\n\n", len(rows))
	if len(rows) == 0 {
		b.WriteString(EmptyRoster + "\n")
	} else {
		b.WriteString(RosterTable(rows, self))
	}
	return b.String()
}

// StatusMarkdown is the text of the status resource for one workspace.
func StatusMarkdown(workspace string, rows []Row) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## Active Workers (%d)\n\nWorkspace: %s\n\n", len(rows), EscapeCell(workspace))
	if len(rows) == 0 {
		b.WriteString(EmptyRoster + "\n")
	} else {
		b.WriteString(RosterTable(rows, ""))
	}
	return b.String()
}

var changeText = map[Change]string{
	Created:   "new session",
	Updated:   "session updated",
	Unchanged: "no change: gist and files were already as given",
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
	fmt.Fprintf(&b, "- Files: %s\n", filesCell(d.Files))
	fmt.Fprintf(&b, "- Checked in: %s\n", d.CheckedInAt)
	fmt.Fprintf(&b, "- Updated: %s\n", d.UpdatedAt)
	b.WriteString("\n")
	if !soloRoster(d.ActiveWorkers, d.WorkerID) {
		b.WriteString(rosterSection(d.ActiveWorkers, d.WorkerID))
		b.WriteString("\n")
	}
	b.WriteString(d.Notice)
	b.WriteString("\n")
	return b.String()
}

// soloRoster reports whether rows hold nobody but self.
func soloRoster(rows []Row, self string) bool {
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
	b.WriteString(rosterSection(d.ActiveWorkers, ""))
	return b.String()
}

// UnknownWorkerMarkdown is the text of the unknown_worker tool error: what
// failed, how to recover, and the roster to recover from in the same turn.
func UnknownWorkerMarkdown(d *UnknownWorkerData, message string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\nRecovery: %s\n\n", message, d.Recovery.Hint)
	fmt.Fprintf(&b, "- Workspace: %s\n- Status URI: %s\n\n", EscapeCell(d.Workspace), d.StatusURI)
	b.WriteString(rosterSection(d.ActiveWorkers, ""))
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
