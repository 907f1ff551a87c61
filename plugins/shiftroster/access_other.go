//go:build !unix

package shiftroster

// writable cannot be judged without opening the file on this platform;
// SQLite's own errors are classified instead.
func writable(string) error { return nil }
