//go:build !unix

package gitread

// fxOpenFlags: Windows has neither FIFOs in the file system nor O_NOFOLLOW;
// the Lstat and SameFile checks around the open do the work.
const fxOpenFlags = 0
