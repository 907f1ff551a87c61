//go:build !linux

package agentdetect

import (
	"context"
	"time"
)

// scanProcesses reports nothing outside Linux: reading another process's
// working directory needs platform calls (proc_pidinfo on macOS, a
// debugger-level handle on Windows) this build does not make, so
// detection degrades to the stores, editors, presence records and roster.
func scanProcesses(context.Context, Query) ([]procInfo, error) { return nil, nil }

// ProcessStartTime is unknown outside Linux.
func ProcessStartTime(int) (time.Time, bool) { return time.Time{}, false }

// Ancestors is unknown outside Linux: every same-agent finding without a
// pid still counts as a likely caller.
func Ancestors(int) []int { return nil }

func pidAlive(int) (alive, known bool) { return false, false }

func processName(int) string { return "" }
