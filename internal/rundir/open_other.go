//go:build !unix

package rundir

// readFlags: Windows has neither FIFOs in the file system nor O_NOFOLLOW;
// the Lstat and SameFile checks around the open do the work.
const readFlags = 0

// createFlags: O_EXCL (CREATE_NEW) never opens an existing link there.
const createFlags = 0
