package agentdetect

import (
	"bytes"
	"os"
	"strconv"
	"time"
)

// storeProcStart is a process's start time from /proc/<pid>/stat (field
// 22, clock ticks since boot) and /proc/stat's btime; zero when either
// cannot be read.
func storeProcStart(pid int) time.Time {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return time.Time{}
	}
	// The command name (field 2) may hold spaces and parentheses; the
	// fields after its closing parenthesis start at field 3.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return time.Time{}
	}
	fields := bytes.Fields(stat[i+1:])
	if len(fields) < 20 {
		return time.Time{}
	}
	ticks, err := strconv.ParseInt(string(fields[19]), 10, 64)
	if err != nil {
		return time.Time{}
	}
	boot := storeBootTime()
	if boot.IsZero() {
		return time.Time{}
	}
	// USER_HZ is 100 on every Linux architecture Go supports.
	return boot.Add(time.Duration(ticks) * (time.Second / 100))
}

func storeBootTime() time.Time {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return time.Time{}
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte("btime ")); ok {
			if n, err := strconv.ParseInt(string(bytes.TrimSpace(v)), 10, 64); err == nil {
				return time.Unix(n, 0)
			}
		}
	}
	return time.Time{}
}
