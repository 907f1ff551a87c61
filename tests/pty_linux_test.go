//go:build linux

package tests

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// havePTY says whether runOnTerminal works here.
const havePTY = true

// runOnTerminal runs fluxgit with args in a new session whose controlling
// terminal is a fresh pseudo-terminal, the way a person's terminal
// emulator would, types typed into it, and returns what the terminal
// showed plus stdout and stderr. stdin is /dev/null: the command must read
// the terminal itself.
func runOnTerminal(t testing.TB, env []string, typed string, args ...string) (screen, out string, err error) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	defer master.Close()
	if err := unix.IoctlSetPointerInt(int(master.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlockpt: %v", err)
	}
	n, err := unix.IoctlGetInt(int(master.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("ptsname: %v", err)
	}
	slave, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open the pty's terminal side: %v", err)
	}
	cmd := exec.Command(fluxgitBin, args...)
	cmd.Env = env
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stdout
	cmd.ExtraFiles = []*os.File{slave} // fd 3 in the child
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 3}
	if err := cmd.Start(); err != nil {
		slave.Close()
		t.Fatal(err)
	}
	slave.Close()
	// The line discipline holds what is typed until the command reads it.
	if _, err := io.WriteString(master, typed); err != nil {
		t.Fatalf("type on the terminal: %v", err)
	}
	shown := &lockedBuffer{}
	copied := make(chan struct{})
	go func() { _, _ = io.Copy(shown, master); close(copied) }()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		err = <-done
		t.Errorf("fluxgit %v on a terminal did not finish", args)
	}
	// The terminal side is closed with the command: the copy ends (EIO).
	select {
	case <-copied:
	case <-time.After(5 * time.Second):
	}
	return shown.String(), stdout.String(), err
}
