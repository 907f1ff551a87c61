package roster

// Row bounds, in characters; they mirror the shift_check_in inputSchema
// (spec/tools/shift.*) and schemas/roster-row.schema.json. Every
// JSON-escaped character costs at most 6 bytes, so one row is at most
// about 620 KB in any reply, whatever it holds; rows stored beyond them
// are read back clipped (Row.Clipped).
const (
	MaxGistLen = 1000
	MaxFiles   = 100
	MaxFileLen = 1024
)

// MaxListedWorkers bounds the rows one snapshot returns; Totals count the
// rest, so the roster always answers and says what it left out.
const MaxListedWorkers = 100
