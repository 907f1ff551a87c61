//go:build linux

package agentdetect

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat times; the kernel
// reports them in 1/100 s whatever its internal tick rate.
const clockTicks = 100

// maxArgs bounds how many arguments of a command line are looked at.
const maxArgs = 64

var (
	bootOnce sync.Once
	bootTime time.Time
)

// boot returns the system boot time (/proc/stat btime), the origin of
// process start times.
func boot() time.Time {
	bootOnce.Do(func() {
		b, err := os.ReadFile("/proc/stat")
		if err != nil {
			return
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "btime "); ok {
				if s, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
					bootTime = time.Unix(s, 0)
				}
				return
			}
		}
	})
	return bootTime
}

// readSmall reads the start of a /proc file (at most len(buf) bytes) with
// one raw read: the os.File path costs a poller registration per file and
// a second read for EOF, which dominate when the whole process table is
// walked. The kernel fills a page-sized buffer in one read, and nothing
// past the first page of a command line is looked at.
func readSmall(path string, buf []byte) (int, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return 0, err
	}
	defer syscall.Close(fd)
	for {
		n, err := syscall.Read(fd, buf)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return 0, err
		}
		return n, nil
	}
}

// statFields returns the fields of /proc/<pid>/stat after the command
// name, which may itself hold spaces and parentheses: fields[0] is field
// 3 (state), fields[1] field 4 (ppid), fields[19] field 22 (starttime).
func statFields(pid int, buf []byte) ([]string, error) {
	n, err := readSmall("/proc/"+strconv.Itoa(pid)+"/stat", buf)
	if err != nil {
		return nil, err
	}
	b := buf[:n]
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 > len(b) {
		return nil, fmt.Errorf("process %d: malformed stat", pid)
	}
	return strings.Fields(string(b[i+2:])), nil
}

func startFromStat(fields []string) (time.Time, bool) {
	if len(fields) < 20 {
		return time.Time{}, false
	}
	ticks, err := strconv.ParseUint(fields[19], 10, 64)
	bt := boot()
	if err != nil || bt.IsZero() {
		return time.Time{}, false
	}
	return bt.Add(time.Duration(ticks) * (time.Second / clockTicks)), true
}

// ProcessStartTime returns when process pid started (stat field 22 plus
// the boot time), or false when it is gone or unreadable.
func ProcessStartTime(pid int) (time.Time, bool) {
	if pid <= 0 {
		return time.Time{}, false
	}
	var buf [1024]byte
	fields, err := statFields(pid, buf[:])
	if err != nil {
		return time.Time{}, false
	}
	return startFromStat(fields)
}

// Ancestors returns the parent, grandparent... of pid, nearest first, at
// most MaxAncestors; likelyCaller compares a finding's pid with them.
func Ancestors(pid int) []int {
	var out []int
	var buf [1024]byte
	for len(out) < MaxAncestors && pid > 0 {
		fields, err := statFields(pid, buf[:])
		if err != nil || len(fields) < 2 {
			break
		}
		ppid, err := strconv.Atoi(fields[1])
		if err != nil || ppid <= 0 {
			break
		}
		out = append(out, ppid)
		pid = ppid
	}
	return out
}

// splitArgs splits a NUL-separated command line, keeping at most maxArgs.
func splitArgs(b []byte) []string {
	b = bytes.TrimRight(b, "\x00")
	if len(b) == 0 {
		return nil
	}
	parts := bytes.SplitN(b, []byte{0}, maxArgs+1)
	if len(parts) > maxArgs {
		parts = parts[:maxArgs]
	}
	out := make([]string, len(parts))
	for i, p := range parts {
		out[i] = string(p)
	}
	return out
}

// scanProcesses walks /proc once. Per process it reads only the command
// line (one open and read); the start time, the working directory and
// the comm fallback are read for agent candidates alone, so the cost of
// a crowded machine is one small read per process. Processes of other
// users whose cwd cannot be read (ptrace access rules, hidepid) are
// skipped, never an error.
func scanProcesses(ctx context.Context, q Query) ([]procInfo, error) {
	d, err := os.Open("/proc")
	if err != nil {
		return nil, fmt.Errorf("process table: %w", err)
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return nil, fmt.Errorf("process table: %w", err)
	}
	var out []procInfo
	buf := make([]byte, 4096)
	small := make([]byte, 1024)
	for i, name := range names {
		if i%64 == 0 {
			if err := ctx.Err(); err != nil {
				return out, fmt.Errorf("process table: %w", err)
			}
		}
		if name == "" || name[0] < '0' || name[0] > '9' {
			continue
		}
		pid, err := strconv.Atoi(name)
		if err != nil || pid == q.SelfPID {
			continue
		}
		dir := "/proc/" + name
		n, err := readSmall(dir+"/cmdline", buf)
		if err != nil || n == 0 {
			continue // gone, or a kernel thread
		}
		argv := splitArgs(buf[:n])
		agent := classifyArgs(argv)
		if agent == "" && len(argv) > 0 && isInterpreter(argv[0]) {
			// A script may have set its process title only in comm.
			if m, err := readSmall(dir+"/comm", small); err == nil {
				agent = classifyName(strings.TrimSpace(string(small[:m])))
			}
		}
		if agent == "" {
			continue
		}
		p := procInfo{pid: pid, agent: agent}
		cwd, err := os.Readlink(dir + "/cwd")
		if err == nil && !strings.HasSuffix(cwd, " (deleted)") && InRepo(cwd, q) {
			p.cwd = cwd
		} else if argvNamesRepo(argv, q) {
			p.argvTie = true
		} else {
			continue
		}
		fields, err := statFields(pid, small)
		if err != nil {
			continue // exited meanwhile
		}
		p.start, _ = startFromStat(fields)
		p.session = argvSession(argv)
		out = append(out, p)
	}
	return out, nil
}

// pidAlive reports whether pid exists; known is false where the system
// cannot tell.
func pidAlive(pid int) (alive, known bool) {
	if pid <= 0 {
		return false, true
	}
	_, err := os.Stat("/proc/" + strconv.Itoa(pid))
	if errors.Is(err, os.ErrNotExist) {
		return false, true
	}
	return err == nil, err == nil
}

// processName returns the executable basename of pid (for telling which
// editor holds a lock file), or "".
func processName(pid int) string {
	if exe, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/exe"); err == nil {
		return baseName(strings.TrimSuffix(exe, " (deleted)"))
	}
	var buf [64]byte
	if n, err := readSmall("/proc/"+strconv.Itoa(pid)+"/comm", buf[:]); err == nil {
		return strings.TrimSpace(string(buf[:n]))
	}
	return ""
}
