package main

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestAuditFilterFlags(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name    string
		ff      filterFlags
		wantErr string
		check   func(t *testing.T, ff filterFlags)
	}{
		{"none", filterFlags{}, "", nil},
		{"age and date", filterFlags{since: "7d", until: "2026-11-30"}, "", nil},
		{"bad since", filterFlags{since: "last week"}, "--since: \"last week\" is not a time", nil},
		{"bad until", filterFlags{until: "soon"}, "--until:", nil},
		{"empty window", filterFlags{since: "2026-11-30", until: "2026-11-30"}, "is not before --until", nil},
		{"empty tool", filterFlags{tools: []string{"repo.status", " "}}, "--tool is empty", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := tc.ff.filter(now)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if tc.ff.since == "7d" && !f.Since.Equal(now.Add(-7*24*time.Hour)) {
					t.Fatalf("since %v", f.Since)
				}
				return
			}
			var ee *exitError
			if !errors.As(err, &ee) || ee.code != exitUsage || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err %v, want a usage error with %q", err, tc.wantErr)
			}
		})
	}
}

func TestIsLedgerFile(t *testing.T) {
	const ledger = "/r/audit/mcp.jsonl"
	for p, want := range map[string]bool{
		"/r/audit/mcp.jsonl":      true,
		"/r/audit/mcp.jsonl.lock": true,
		"/r/audit/mcp.jsonl.segment-00000000000000000001-00000000000000000002-x": true,
		"/r/audit/mcp.jsonl.checkpoint-00000000000000000003-x.json":              true,
		"/r/audit/.mcp.jsonl.checkpoint-x.tmp":                                   true,
		"/r/audit/mcp.jsonl.csv":                                                 false,
		"/r/export/mcp.jsonl":                                                    false,
		"/r/audit/other.jsonl":                                                   false,
	} {
		if got := isLedgerFile(ledger, p); got != want {
			t.Errorf("%s: %v, want %v", p, got, want)
		}
	}
}
