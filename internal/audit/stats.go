package audit

import (
	"sort"
	"time"
)

// Stats summarizes the entries a Filter selects from a verified ledger.
// Memory is bounded by the distinct tools, event types, results and days,
// never by the number of entries.
type Stats struct {
	// Entries counts the selected entries; Calls counts the calls they
	// record: a coalesced entry stands for its count of refused calls, an
	// audit.pruned entry for none.
	Entries uint64 `json:"entries"`
	Calls   uint64 `json:"calls"`
	// Refusals counts the refused calls (event_type write_block, coalesced
	// counts expanded).
	Refusals uint64 `json:"refusals"`
	// First and Last are the earliest and latest timestamps, RFC 3339 UTC
	// with milliseconds ("" without entries).
	First string `json:"first"`
	Last  string `json:"last"`
	// Tools, EventTypes, Results and Days break the counts down, sorted by
	// name (days chronologically, UTC).
	Tools      []ToolStats  `json:"tools"`
	EventTypes []CountStats `json:"event_types"`
	Results    []CountStats `json:"results"`
	Days       []DayStats   `json:"days"`
	// Verified is the verification of the whole ledger.
	Verified Report `json:"verified"`
	// Filters is what selected the entries.
	Filters Filter `json:"filters"`
}

// ToolStats counts one tool's entries ("" is fluxgit's own audit.pruned).
type ToolStats struct {
	Tool     string `json:"tool"`
	Entries  uint64 `json:"entries"`
	Calls    uint64 `json:"calls"`
	Errors   uint64 `json:"errors"`
	Refusals uint64 `json:"refusals"`
}

// CountStats counts the entries with one value of a field.
type CountStats struct {
	Name    string `json:"name"`
	Entries uint64 `json:"entries"`
	Calls   uint64 `json:"calls"`
}

// DayStats counts one UTC day's entries.
type DayStats struct {
	Day      string `json:"day"`
	Entries  uint64 `json:"entries"`
	Calls    uint64 `json:"calls"`
	Refusals uint64 `json:"refusals"`
}

// ComputeStats verifies the ledger at path (as Verify does) and counts the
// entries f selects in the same pass. On a verification failure the
// counts are not returned.
func ComputeStats(path string, opts VerifyOptions, f Filter) (Stats, error) {
	tools := map[string]*ToolStats{}
	events := map[string]*CountStats{}
	results := map[string]*CountStats{}
	days := map[string]*DayStats{}
	var st Stats
	var first, last int64
	timed := false
	rep, err := verifyLedger(path, opts, func(_ []byte, o Object) error {
		if !f.Match(o) {
			return nil
		}
		tool, _ := stringField(o, "tool")
		et, _ := stringField(o, "event_type")
		calls := uint64(1)
		if n, err := uintField(o, "count"); err == nil && n > 0 {
			calls = n
		}
		if et == EventPruned {
			calls = 0 // fluxgit's own record of a pruning, not a call
		}
		result, _ := stringField(o, "result")
		var refusals, errs uint64
		if et == EventWriteBlock {
			refusals = calls
		}
		if result == ResultError {
			errs = 1
		}
		st.Entries++
		st.Calls += calls
		st.Refusals += refusals
		ts := slot(tools, tool, func() *ToolStats { return &ToolStats{Tool: tool} })
		ts.Entries++
		ts.Calls += calls
		ts.Errors += errs
		ts.Refusals += refusals
		for _, c := range []struct {
			m    map[string]*CountStats
			name string
		}{{events, et}, {results, result}} {
			cs := slot(c.m, c.name, func() *CountStats { return &CountStats{Name: c.name} })
			cs.Entries++
			cs.Calls += calls
		}
		if at, ok := entryTime(o); ok {
			if !timed || at < first {
				first = at
			}
			if !timed || at > last {
				last = at
			}
			timed = true
			day := time.UnixMilli(at).UTC().Format("2006-01-02")
			ds := slot(days, day, func() *DayStats { return &DayStats{Day: day} })
			ds.Entries++
			ds.Calls += calls
			ds.Refusals += refusals
		}
		return nil
	})
	if err != nil {
		return Stats{Verified: rep}, err
	}
	st.Verified, st.Filters = rep, f
	if timed {
		st.First = time.UnixMilli(first).UTC().Format(timeLayout)
		st.Last = time.UnixMilli(last).UTC().Format(timeLayout)
	}
	st.Tools = sortedValues(tools, func(t *ToolStats) string { return t.Tool })
	st.EventTypes = sortedValues(events, func(c *CountStats) string { return c.Name })
	st.Results = sortedValues(results, func(c *CountStats) string { return c.Name })
	st.Days = sortedValues(days, func(d *DayStats) string { return d.Day })
	return st, nil
}

// slot is m[k], made by mk and stored the first time k is seen.
func slot[T any](m map[string]*T, k string, mk func() *T) *T {
	v := m[k]
	if v == nil {
		v = mk()
		m[k] = v
	}
	return v
}

func sortedValues[T any](m map[string]*T, key func(*T) string) []T {
	out := make([]T, 0, len(m))
	for _, v := range m {
		out = append(out, *v)
	}
	sort.Slice(out, func(i, j int) bool { return key(&out[i]) < key(&out[j]) })
	return out
}
