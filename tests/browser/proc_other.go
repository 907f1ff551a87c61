//go:build !linux

package browser

import (
	"errors"
	"os/exec"
	"time"
)

// supported reports whether this system can run the browser at all: the
// package drives Debian's chromium and needs /proc to clean up after it.
func supported() error {
	return errors.New("browser tests run on Linux only (Debian chromium and /proc)")
}

func setProcessGroup(*exec.Cmd) {}

func reap(int, string, time.Time) []int { return nil }

func survivors(int, string) []int { return nil }
