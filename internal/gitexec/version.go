package gitexec

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// VersionTimeout bounds Version when its context has no earlier deadline.
const VersionTimeout = 10 * time.Second

// Version runs `exe --version` under the same process-tree rules as every
// other git call (own process group, killed afterwards, parent-death tie,
// the pipe grace) and returns its trimmed stdout. The start-up check uses
// it: a plain exec.Cmd would wait for its pipes as long as anything git
// or a wrapper started keeps them open, and the server reads no request
// until that check is done.
func Version(ctx context.Context, exe string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, VersionTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, "--version")
	cmd.Env = sanitizedEnv(nil)
	cmd.Stdin = nil
	cmd.WaitDelay = pipeGrace
	setProcessGroup(cmd)
	var once sync.Once
	kill := func() {
		once.Do(func() {
			if cmd.Process != nil {
				killGroup(cmd.Process.Pid)
			}
		})
	}
	cmd.Cancel = func() error { kill(); return nil }
	stdout := &limitBuffer{keep: StderrCapture, limit: MaxStderr, what: "stdout", onLimit: kill}
	stderr := &limitBuffer{keep: StderrCapture, limit: MaxStderr, what: "stderr", onLimit: kill}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	unlock := tieToParent(cmd)
	if err := cmd.Start(); err != nil {
		unlock()
		return "", fmt.Errorf("cannot start %s: %w", exe, err)
	}
	afterStart(cmd)
	err := cmd.Wait()
	unlock()
	killGroup(cmd.Process.Pid)
	switch {
	case stdout.overflow || stderr.overflow:
		return "", fmt.Errorf("%s --version wrote more than %d bytes; it was stopped", exe, MaxStderr)
	case ctx.Err() != nil:
		return "", fmt.Errorf("%s --version did not finish within %s and was killed", exe, VersionTimeout)
	case errors.Is(err, exec.ErrWaitDelay):
		return "", fmt.Errorf("%s --version: %s", exe, heldPipeDetails())
	case err != nil:
		if msg := strings.TrimSpace(stderr.buf.String()); msg != "" {
			return "", fmt.Errorf("%s --version failed: %w: %s", exe, err, msg)
		}
		return "", fmt.Errorf("%s --version failed: %w", exe, err)
	}
	return strings.TrimSpace(stdout.buf.String()), nil
}
