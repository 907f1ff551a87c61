//go:build linux

package gitexec

import "syscall"

// statSig stats path (following symlinks) for the driver-scan cache. A
// missing path is a valid signature (exists=false); any other error is
// returned and makes the caller rescan.
func statSig(path string) (fileSig, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		if err == syscall.ENOENT || err == syscall.ENOTDIR {
			return fileSig{}, nil
		}
		return fileSig{}, err
	}
	return makeSig(uint64(st.Dev), uint64(st.Ino), uint32(st.Mode)&syscall.S_IFMT == syscall.S_IFDIR,
		uint32(st.Mode), int64(st.Size),
		int64(st.Mtim.Sec)*1e9+int64(st.Mtim.Nsec), int64(st.Ctim.Sec)*1e9+int64(st.Ctim.Nsec)), nil
}

// sigSupported reports whether statSig sees inode numbers and ctime.
const sigSupported = true
