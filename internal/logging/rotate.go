package logging

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
)

// Rotation defaults: small enough that a forgotten LOGS_DIR cannot fill a
// disk (at most (DefaultKeep+1) × DefaultMaxBytes), large enough to hold a
// working day of info-level logs.
const (
	DefaultMaxBytes int64 = 10 << 20
	DefaultKeep           = 5
	// FileName is the active log file inside LOGS_DIR; rotated copies are
	// FileName.1 (newest) … FileName.<keep> (oldest).
	FileName = "fluxgit.log"
)

// RotatingFile is an io.Writer that appends to dir/FileName and, before a
// write would take the file past maxBytes, shifts the older files up one
// number and starts a fresh one. Writes are serialised, so one line is never
// split across two files.
type RotatingFile struct {
	mu       sync.Mutex
	path     string
	maxBytes int64
	keep     int
	f        *os.File
	size     int64
}

// OpenRotating creates dir if needed and opens its log file for appending.
// keep is how many rotated files to retain (0 keeps none: the file is
// truncated on rotation).
func OpenRotating(dir string, maxBytes int64, keep int) (*RotatingFile, error) {
	if !filepath.IsAbs(dir) {
		return nil, fmt.Errorf("%s=%q is not an absolute path: set it to an absolute directory such as /var/log/fluxgit", EnvDir, dir)
	}
	if maxBytes <= 0 {
		return nil, fmt.Errorf("log rotation size %d must be positive", maxBytes)
	}
	if keep < 0 {
		return nil, fmt.Errorf("log rotation keep %d must not be negative", keep)
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("create %s %s: %w (make it writable or point %s elsewhere)", EnvDir, dir, err, EnvDir)
	}
	r := &RotatingFile{path: filepath.Join(dir, FileName), maxBytes: maxBytes, keep: keep}
	if err := r.open(); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *RotatingFile) open() error {
	f, err := os.OpenFile(r.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o640)
	if err != nil {
		return fmt.Errorf("open log file: %w (make %s writable or point %s elsewhere)", err, filepath.Dir(r.path), EnvDir)
	}
	st, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return fmt.Errorf("stat log file: %w", err)
	}
	r.f, r.size = f, st.Size()
	return nil
}

// Write appends p, rotating first when p would not fit. A single write larger
// than maxBytes still lands whole in a fresh file: splitting a log line would
// make it unreadable.
func (r *RotatingFile) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f == nil {
		return 0, errors.New("log file is closed")
	}
	if r.size > 0 && r.size+int64(len(p)) > r.maxBytes {
		if err := r.rotate(); err != nil {
			return 0, err
		}
	}
	n, err := r.f.Write(p)
	r.size += int64(n)
	if err != nil {
		return n, fmt.Errorf("write log file: %w", err)
	}
	return n, nil
}

func (r *RotatingFile) rotate() error {
	if err := r.f.Close(); err != nil {
		return fmt.Errorf("close log file for rotation: %w", err)
	}
	r.f = nil
	if r.keep == 0 {
		if err := os.Remove(r.path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("remove log file for rotation: %w", err)
		}
		return r.open()
	}
	// The oldest copy falls off; every other moves up one number.
	_ = os.Remove(r.path + "." + strconv.Itoa(r.keep))
	for i := r.keep - 1; i >= 1; i-- {
		from := r.path + "." + strconv.Itoa(i)
		if err := os.Rename(from, r.path+"."+strconv.Itoa(i+1)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("rotate %s: %w", from, err)
		}
	}
	if err := os.Rename(r.path, r.path+".1"); err != nil {
		return fmt.Errorf("rotate %s: %w", r.path, err)
	}
	return r.open()
}

// Close closes the active file; later writes fail.
func (r *RotatingFile) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f == nil {
		return nil
	}
	err := r.f.Close()
	r.f = nil
	if err != nil {
		return fmt.Errorf("close log file: %w", err)
	}
	return nil
}

// RotationFromEnv reads FLUXGIT_LOG_MAX_BYTES and FLUXGIT_LOG_KEEP, falling
// back to the defaults when they are unset.
func RotationFromEnv(getenv func(string) string) (maxBytes int64, keep int, err error) {
	maxBytes, keep = DefaultMaxBytes, DefaultKeep
	if v := getenv(EnvMaxBytes); v != "" {
		n, perr := strconv.ParseInt(v, 10, 64)
		if perr != nil || n <= 0 {
			return 0, 0, fmt.Errorf("%s=%q: want a positive number of bytes, such as 10485760 for 10 MiB", EnvMaxBytes, v)
		}
		maxBytes = n
	}
	if v := getenv(EnvKeep); v != "" {
		n, perr := strconv.Atoi(v)
		if perr != nil || n < 0 {
			return 0, 0, fmt.Errorf("%s=%q: want how many rotated files to keep, 0 or more", EnvKeep, v)
		}
		keep = n
	}
	return maxBytes, keep, nil
}
