package audit

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Export formats (docs/audit.md).
const (
	FormatJSONL = "jsonl"
	FormatCSV   = "csv"
	FormatJSON  = "json"
)

// Formats lists the export formats.
var Formats = []string{FormatJSONL, FormatCSV, FormatJSON}

// CSVColumns are the columns of a CSV export, in order.
var CSVColumns = []string{"sequence", "time", "tool", "event_type", "result", "approval", "risk", "readOnly",
	"duration_ms", "session_id", "repo_scope", "args_fingerprint", "count", "summary", "segmentId", "entryHash",
	"previousHash", "signed"}

// timeLayout is RFC 3339 in UTC with milliseconds, the ledger's precision.
const timeLayout = "2006-01-02T15:04:05.000Z07:00"

// Filter selects the entries an export or the statistics cover. The whole
// ledger is verified whatever it selects.
type Filter struct {
	// Since (inclusive) and Until (exclusive) bound the entry's timestamp;
	// zero leaves that side open. An entry without a timestamp (a legacy
	// record) is selected only when both are zero.
	Since, Until time.Time
	// Tools are exact tool names; empty selects every tool.
	Tools []string
}

// Match reports whether the filter selects the entry o.
func (f Filter) Match(o Object) bool {
	if len(f.Tools) > 0 {
		tool, _ := stringField(o, "tool")
		if !slices.Contains(f.Tools, tool) {
			return false
		}
	}
	if f.Since.IsZero() && f.Until.IsZero() {
		return true
	}
	ts, ok := entryTime(o)
	if !ok {
		return false
	}
	if !f.Since.IsZero() && ts < f.Since.UnixMilli() {
		return false
	}
	if !f.Until.IsZero() && ts >= f.Until.UnixMilli() {
		return false
	}
	return true
}

// MarshalJSON writes the filter as the JSON export records it: since and
// until in RFC 3339 UTC (null when open), tools as a list.
func (f Filter) MarshalJSON() ([]byte, error) {
	bound := func(t time.Time) any {
		if t.IsZero() {
			return nil
		}
		return t.UTC().Format(timeLayout)
	}
	tools := f.Tools
	if tools == nil {
		tools = []string{}
	}
	return json.Marshal(struct {
		Since any      `json:"since"`
		Until any      `json:"until"`
		Tools []string `json:"tools"`
	}{bound(f.Since), bound(f.Until), tools})
}

// entryTime is an entry's timestamp in ms since the epoch.
func entryTime(o Object) (int64, bool) {
	n, ok := mustNumber(o, "timestamp")
	if !ok {
		return 0, false
	}
	ts, err := strconv.ParseInt(string(n), 10, 64)
	return ts, err == nil
}

// ParseTimeBound reads a --since or --until value: RFC 3339
// ("2026-11-30T08:00:00Z"), a UTC date ("2026-11-30", its midnight), Unix
// seconds ("1764489600"), or an age ("7d", "24h": that long before now).
func ParseTimeBound(v string, now time.Time) (time.Time, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return time.Time{}, errors.New(`empty time; use RFC 3339 (2026-11-30T08:00:00Z), a UTC date (2026-11-30), Unix seconds, or an age (7d, 24h)`)
	}
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t, nil
	}
	if t, err := time.Parse("2006-01-02", v); err == nil {
		return t.UTC(), nil
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n < 0 {
			return time.Time{}, fmt.Errorf("%q: Unix seconds cannot be negative", v)
		}
		return time.Unix(n, 0).UTC(), nil
	}
	if d, err := ParseAge(v); err == nil {
		return now.Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("%q is not a time; use RFC 3339 (2026-11-30T08:00:00Z), a UTC date (2026-11-30), Unix seconds (1764489600), or an age such as 7d or 24h (that long ago)", v)
}

// ExportOptions configures Export.
type ExportOptions struct {
	Verify VerifyOptions
	Filter Filter
	// Format is FormatJSONL (the default when empty), FormatCSV or
	// FormatJSON.
	Format string
	// TempDir holds the staging file ("" for the system's temporary
	// directory); put it on the output's file system to avoid a copy
	// across devices.
	TempDir string
}

// ExportResult is what an export wrote.
type ExportResult struct {
	// Report is the verification of the whole ledger.
	Report Report
	// Selected counts the entries the filter selected and the export wrote.
	Selected uint64
}

// Export verifies the ledger at path and, in the same pass, stages the
// entries opts.Filter selects in a private temporary file; only when the
// whole ledger verified does it copy them to w (and on any failure it
// writes nothing to w). jsonl writes each entry's line byte for byte as
// stored; json one object {"ledger", "verified", "filters", "entries"};
// csv a header and the CSVColumns, cells that a spreadsheet would run as
// a formula prefixed with a quote (see CSVCell).
func Export(path string, opts ExportOptions, w io.Writer) (ExportResult, error) {
	format := opts.Format
	if format == "" {
		format = FormatJSONL
	}
	if !slices.Contains(Formats, format) {
		return ExportResult{}, fmt.Errorf("unknown export format %q; use %s", format, strings.Join(Formats, ", "))
	}
	stage, err := os.CreateTemp(opts.TempDir, ".fluxgit-audit-export-*.tmp")
	if err != nil {
		return ExportResult{}, fmt.Errorf("staging file: %w", err)
	}
	defer func() {
		stage.Close()
		os.Remove(stage.Name())
	}()
	bw := bufio.NewWriterSize(stage, 256<<10)
	var cw *csv.Writer
	if format == FormatCSV {
		cw = csv.NewWriter(bw)
		if err := cw.Write(CSVColumns); err != nil {
			return ExportResult{}, fmt.Errorf("staging file: %w", err)
		}
	}
	var res ExportResult
	row := make([]string, len(CSVColumns))
	rep, err := verifyLedger(path, opts.Verify, func(line []byte, o Object) error {
		if !opts.Filter.Match(o) {
			return nil
		}
		var err error
		switch format {
		case FormatJSONL:
			_, err = bw.Write(line)
			if err == nil {
				err = bw.WriteByte('\n')
			}
		case FormatJSON:
			if res.Selected > 0 {
				_, err = bw.WriteString(",\n")
			} else {
				err = bw.WriteByte('\n')
			}
			if err == nil {
				_, err = bw.Write(line)
			}
		case FormatCSV:
			csvRow(row, o)
			err = cw.Write(row)
		}
		if err != nil {
			return fmt.Errorf("staging file: %w", err)
		}
		res.Selected++
		return nil
	})
	res.Report = rep
	if err != nil {
		return res, err
	}
	if cw != nil {
		cw.Flush()
		if err := cw.Error(); err != nil {
			return res, fmt.Errorf("staging file: %w", err)
		}
	}
	if err := bw.Flush(); err != nil {
		return res, fmt.Errorf("staging file: %w", err)
	}
	if _, err := stage.Seek(0, io.SeekStart); err != nil {
		return res, fmt.Errorf("staging file: %w", err)
	}
	out := bufio.NewWriterSize(w, 256<<10)
	if format == FormatJSON {
		head, err := json.Marshal(struct {
			Ledger   string `json:"ledger"`
			Verified Report `json:"verified"`
			Filters  Filter `json:"filters"`
		}{filepath.Base(path), rep, opts.Filter})
		if err != nil {
			return res, err
		}
		// The object's last member, "entries", is the staged array body.
		head = append(head[:len(head)-1], `,"entries":[`...)
		if _, err := out.Write(head); err != nil {
			return res, fmt.Errorf("write export: %w", err)
		}
	}
	if _, err := io.Copy(out, stage); err != nil {
		return res, fmt.Errorf("write export: %w", err)
	}
	if format == FormatJSON {
		tail := "]}\n"
		if res.Selected > 0 {
			tail = "\n]}\n"
		}
		if _, err := out.WriteString(tail); err != nil {
			return res, fmt.Errorf("write export: %w", err)
		}
	}
	if err := out.Flush(); err != nil {
		return res, fmt.Errorf("write export: %w", err)
	}
	return res, nil
}

// csvRow fills row with the CSV cells of entry o.
func csvRow(row []string, o Object) {
	for i, col := range CSVColumns {
		var cell string
		switch col {
		case "time":
			if ts, ok := entryTime(o); ok {
				cell = time.UnixMilli(ts).UTC().Format(timeLayout)
			}
		case "signed":
			_, signed := o.Get("signature")
			cell = strconv.FormatBool(signed)
		default:
			v, _ := o.Get(col)
			cell = cellText(v)
		}
		row[i] = CSVCell(cell)
	}
}

// cellText is a JSON value as one CSV cell: strings as they are, numbers
// and booleans as written, null as empty, anything else as canonical JSON.
func cellText(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case Number:
		return string(x)
	case bool:
		return strconv.FormatBool(x)
	default:
		b, err := Canonical(x)
		if err != nil {
			return ""
		}
		return string(b)
	}
}

// CSVCell guards a cell against spreadsheet formula injection: a cell
// starting with =, +, -, @, a tab or a carriage return would be run as a
// formula by spreadsheet programs, so it gets a leading apostrophe
// (shown as text, not evaluated). Ledger fields an agent influences, such
// as an unknown tool's name, reach the export.
func CSVCell(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}
