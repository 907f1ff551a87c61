package rundir

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// MaxRecordBytes bounds a restore record read (and a kept patch's record
// is far below it): a hostile or corrupt run directory costs bounded work.
const MaxRecordBytes = 1 << 20

// Record is the restore record <runDir>/rebase/<repoId>.json (F§6.22): one
// per repository, a new restore point replaces the last one. The keys are
// the reference's snake_case ones; the gateway writes it, the flux.* and
// safety.* tools and the gateway's undo read it. Other writers (the FluxGit
// app) may leave fields null or write created_at as a number, so every
// optional field is a pointer and CreatedAt keeps what was written.
type Record struct {
	// Operation is the operation the restore point was taken before; ""
	// when the record has none (null or missing).
	Operation    string  `json:"operation"`
	BeforeCommit *string `json:"before_commit"`
	// AfterCommit is null while the operation runs.
	AfterCommit *string   `json:"after_commit"`
	BranchRef   *string   `json:"branch_ref"`
	Undone      bool      `json:"undone"`
	CreatedAt   CreatedAt `json:"created_at"`
	BeforeRef   *string   `json:"before_ref"`
	AfterRef    *string   `json:"after_ref"`
	UpstreamRef *string   `json:"upstream_ref"`
	ResetMode   *string   `json:"reset_mode"`
	// Plan is opaque to readers (plan steps, a safety stash, a kept patch).
	Plan json.RawMessage `json:"plan"`
}

// CreatedAtLayout is how the gateway writes created_at: RFC 3339 in UTC
// with milliseconds.
const CreatedAtLayout = "2006-01-02T15:04:05.000Z"

// CreatedAt is a record's created_at exactly as written: a string (the
// gateway's CreatedAtLayout, or any RFC 3339 time) or a number (Unix
// seconds or milliseconds). Its zero value is JSON null.
type CreatedAt struct{ raw json.RawMessage }

// NewCreatedAt is t as the gateway writes it.
func NewCreatedAt(t time.Time) CreatedAt {
	b, _ := json.Marshal(t.UTC().Format(CreatedAtLayout))
	return CreatedAt{raw: b}
}

// ParseCreatedAt wraps a created_at value as written (nil or empty is
// null).
func ParseCreatedAt(raw json.RawMessage) CreatedAt {
	var c CreatedAt
	_ = c.UnmarshalJSON(raw)
	return c
}

// MarshalJSON writes the value as it was read (null when absent).
func (c CreatedAt) MarshalJSON() ([]byte, error) { return c.Raw(), nil }

// UnmarshalJSON keeps any JSON value; readers interpret it.
func (c *CreatedAt) UnmarshalJSON(b []byte) error {
	c.raw = append(json.RawMessage(nil), bytes.TrimSpace(b)...)
	return nil
}

// Raw is the JSON value as written, "null" when absent.
func (c CreatedAt) Raw() json.RawMessage {
	if len(c.raw) == 0 {
		return json.RawMessage("null")
	}
	return c.raw
}

// Text renders the value for a restore point id: a string or a number as
// written, "" for null, "unknown" for anything else.
func (c CreatedAt) Text() string {
	var s string
	if json.Unmarshal(c.Raw(), &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(c.Raw(), &n) == nil {
		return n.String()
	}
	return "unknown"
}

// Unix converts the value to Unix seconds: a number of seconds or (above
// 1e12) milliseconds, an RFC 3339 string or a decimal string; 0 when
// unknown.
func (c CreatedAt) Unix() int64 {
	var n json.Number
	if json.Unmarshal(c.Raw(), &n) == nil {
		if f, err := n.Float64(); err == nil {
			if f > 1e12 {
				f /= 1000
			}
			return int64(f)
		}
	}
	var s string
	if json.Unmarshal(c.Raw(), &s) == nil {
		if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
			return t.Unix()
		}
		if v, err := strconv.ParseInt(s, 10, 64); err == nil {
			return v
		}
	}
	return 0
}

// RestoreID is the restore point id of a record: "restore:<repoId>:<created_at>"
// (F§6.20), the same on both ends — the gateway's results and the flux.*
// and safety.* tools.
func RestoreID(repoID string, created CreatedAt) string {
	return "restore:" + repoID + ":" + created.Text()
}

// ID is the record's restore point id for repository repoID.
func (r Record) ID(repoID string) string { return RestoreID(repoID, r.CreatedAt) }

// ParseRecord decodes a restore record.
func ParseRecord(b []byte) (Record, error) {
	var r Record
	if err := json.Unmarshal(b, &r); err != nil {
		return Record{}, err
	}
	return r, nil
}

// ReadRecordFile reads the restore record of repository id below runDir,
// bounded (MaxRecordBytes) and through no symbolic link below runDir (see
// ReadFile). A missing run directory or record is os.ErrNotExist.
func ReadRecordFile(runDir, id string, check Check) ([]byte, error) {
	if !ValidID(id) {
		return nil, ErrBadID
	}
	root, err := OpenRoot(runDir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	b, _, err := ReadFile(root, RebaseDir+"/"+id+".json", MaxRecordBytes, check)
	return b, err
}

// ReadRecord reads and decodes the restore record of repository id.
func ReadRecord(runDir, id string, check Check) (Record, error) {
	b, err := ReadRecordFile(runDir, id, check)
	if err != nil {
		return Record{}, err
	}
	r, err := ParseRecord(b)
	if err != nil {
		return Record{}, fmt.Errorf("the restore record %s/%s.json is not valid JSON: %w", RebaseDir, id, err)
	}
	return r, nil
}

// WriteRecord replaces the restore record of repository id atomically and
// durably. A nil Plan is written as null.
func WriteRecord(runDir, id string, r Record) error {
	if len(r.Plan) == 0 {
		r.Plan = json.RawMessage("null")
	}
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encode the restore record: %w", err)
	}
	return WriteRecordFile(runDir, id, b)
}

// WriteRecordFile puts raw record bytes back (a record read with
// ReadRecordFile, restored when an operation changed nothing).
func WriteRecordFile(runDir, id string, b []byte) error {
	if !ValidID(id) {
		return ErrBadID
	}
	return writeAtomic(runDir, RebaseDir, id+".json", b, true)
}

// RemoveRecord deletes the restore record of repository id.
func RemoveRecord(runDir, id string) error {
	if !ValidID(id) {
		return ErrBadID
	}
	return remove(runDir, RebaseDir, id+".json")
}

// WritePatch keeps the patch an operation applies beside the restore
// record of repository id (PatchPath), atomically and durably.
func WritePatch(runDir, id string, patch []byte) error {
	if !ValidID(id) {
		return ErrBadID
	}
	return writeAtomic(runDir, RebaseDir, PatchName(id), patch, true)
}
