//go:build unix

package rundir

import "syscall"

// readFlags opens a run-directory file without blocking on a FIFO swapped
// in after the type check; O_NOFOLLOW refuses a link put in its place
// (os.Root already refuses links that leave the directory, and the
// SameFile check after opening catches any other swap).
const readFlags = syscall.O_NONBLOCK | syscall.O_NOFOLLOW

// createFlags create a temporary file only where nothing, not even a
// dangling link, has the name.
const createFlags = syscall.O_NOFOLLOW | syscall.O_CLOEXEC
