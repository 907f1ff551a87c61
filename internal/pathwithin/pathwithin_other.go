//go:build !windows && !darwin

package pathwithin

// Everywhere but Windows and macOS git leaves core.ignorecase false: the
// default file systems (ext4, xfs, btrfs, zfs, ufs) tell paths that
// differ only in case apart, so they are different paths here too.
const caseInsensitive = false
