package roster

import (
	"crypto/rand"
	"fmt"
	"strings"
)

// WorkerIDLen is the length of a worker id.
const WorkerIDLen = 6

const idAlphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"

// idCutoff is the largest multiple of len(idAlphabet) that fits in a byte:
// bytes at or above it are discarded, so every symbol is equally likely
// (no modulo bias: 256 is not a multiple of 36).
const idCutoff = 256 / len(idAlphabet) * len(idAlphabet) // 252

// NewWorkerID returns a random upper-case id of WorkerIDLen ASCII letters
// and digits from crypto/rand.
func NewWorkerID() (string, error) {
	return newWorkerID(rand.Read)
}

func newWorkerID(read func([]byte) (int, error)) (string, error) {
	var id [WorkerIDLen]byte
	buf := make([]byte, 16)
	n := 0
	for n < WorkerIDLen {
		if _, err := read(buf); err != nil {
			return "", fmt.Errorf("random worker id: %w", err)
		}
		for _, b := range buf {
			if int(b) >= idCutoff {
				continue
			}
			id[n] = idAlphabet[int(b)%len(idAlphabet)]
			if n++; n == WorkerIDLen {
				break
			}
		}
	}
	return string(id[:]), nil
}

// NormalizeWorkerID upper-cases a caller's id and reports whether it is
// WorkerIDLen ASCII letters or digits.
func NormalizeWorkerID(s string) (string, bool) {
	if len(s) != WorkerIDLen {
		return "", false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z') {
			return "", false
		}
	}
	return strings.ToUpper(s), true
}
