//go:build !linux && !darwin

package gitexec

import "errors"

// statSig is unavailable here: without inode numbers and ctime a changed
// config file cannot be told apart reliably, so the driver scan is never
// cached and runs before every content command.
func statSig(string) (fileSig, error) {
	return fileSig{}, errors.New("no stat signature on this platform")
}

// sigSupported reports whether statSig sees inode numbers and ctime.
const sigSupported = false
