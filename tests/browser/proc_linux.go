package browser

import (
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// supported reports whether this system can run the browser at all.
func supported() error { return nil }

// setProcessGroup makes chromedriver the leader of its own process group.
// chromedriver starts chromium in that group, and chromium starts its zygote,
// GPU, network and renderer processes there too, so one kill of the group
// ends the whole browser.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// reap kills every live process in group pgid, and every live process whose
// command line mentions marker (the per-browser temporary directory, which
// chromium's crash handler carries after it leaves the group with setsid),
// until none is left or the deadline passes. It returns the pids still alive
// at the deadline. Zombies are ignored: they hold no files, and reparented
// ones are the init process's to reap.
func reap(pgid int, marker string, deadline time.Time) []int {
	if pgid > 0 {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
	for {
		alive := survivors(pgid, marker)
		if len(alive) == 0 {
			return nil
		}
		for _, pid := range alive {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		if time.Now().After(deadline) {
			return alive
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// survivors lists the live (non-zombie) processes of group pgid or whose
// command line contains marker.
func survivors(pgid int, marker string) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	self := os.Getpid()
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// The command name in parentheses may itself contain spaces or
		// parentheses; the fields after the last ')' are fixed: state, ppid, pgrp.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(stat[i+1:]))
		if len(f) < 3 || f[0] == "Z" || f[0] == "X" {
			continue
		}
		if g, _ := strconv.Atoi(f[2]); pgid > 0 && g == pgid {
			out = append(out, pid)
			continue
		}
		if marker == "" {
			continue
		}
		if cl, err := os.ReadFile("/proc/" + e.Name() + "/cmdline"); err == nil && bytes.Contains(cl, []byte(marker)) {
			out = append(out, pid)
		}
	}
	return out
}
