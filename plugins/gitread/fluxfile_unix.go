//go:build unix

package gitread

import "syscall"

// fxOpenFlags opens a run-directory file without blocking on a FIFO swapped
// in after the type check; O_NOFOLLOW documents intent (os.Root already
// refuses links that leave the run directory, and the SameFile check after
// opening catches any swap).
const fxOpenFlags = syscall.O_NONBLOCK | syscall.O_NOFOLLOW
