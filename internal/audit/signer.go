package audit

import (
	"crypto/ed25519"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"os"
	"unicode/utf8"
)

// SignatureVersion is the chained signature domain: the signature covers
// every field of the entry except signature itself (id, sequence,
// segmentId, previousHash, entryHash, signatureKeyId, signatureVersion
// included).
const SignatureVersion = 3

// MaxKeyFileBytes bounds a PEM key file (private or public).
const MaxKeyFileBytes = 64 << 10

// Signer signs ledger entries and retention checkpoints with Ed25519.
type Signer struct {
	key   ed25519.PrivateKey
	keyID string
}

// NewSigner wraps a private key.
func NewSigner(key ed25519.PrivateKey) *Signer {
	return &Signer{key: key, keyID: KeyID(key.Public().(ed25519.PublicKey))}
}

// KeyID is the key's signatureKeyId.
func (s *Signer) KeyID() string { return s.keyID }

// Public is the verification key.
func (s *Signer) Public() ed25519.PublicKey { return s.key.Public().(ed25519.PublicKey) }

// sign returns the base64url (no padding) signature of msg.
func (s *Signer) sign(msg []byte) string {
	return base64.RawURLEncoding.EncodeToString(ed25519.Sign(s.key, msg))
}

// KeyID is the first 8 bytes of a raw Ed25519 public key as 16 lower-case
// hex characters.
func KeyID(pub ed25519.PublicKey) string {
	return hex.EncodeToString(pub[:8])
}

// KeyError is a signing or verification key that cannot be used. It never
// contains key material.
type KeyError struct {
	Path   string
	Reason string
}

func (e *KeyError) Error() string { return fmt.Sprintf("audit key %s: %s", e.Path, e.Reason) }

// readKeyFile reads a PEM file of 1 byte to 64 KiB. Private keys must
// also be private to the owner (mode & 077 == 0).
func readKeyFile(path string, private bool) ([]byte, error) {
	if path == "" {
		return nil, &KeyError{Path: `""`, Reason: "the path is empty"}
	}
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, &KeyError{Path: path, Reason: "no such file"}
		}
		reason := err.Error()
		var pe *os.PathError
		if errors.As(err, &pe) {
			reason = pe.Err.Error()
		}
		return nil, &KeyError{Path: path, Reason: "cannot be opened: " + reason}
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, &KeyError{Path: path, Reason: "cannot be inspected: " + err.Error()}
	}
	if !st.Mode().IsRegular() {
		return nil, &KeyError{Path: path, Reason: "not a regular file"}
	}
	if private && st.Mode().Perm()&0o077 != 0 {
		return nil, &KeyError{Path: path, Reason: fmt.Sprintf("is group/world accessible (mode %04o); it must be private to its owner (chmod 600)", st.Mode().Perm())}
	}
	if st.Size() == 0 {
		return nil, &KeyError{Path: path, Reason: "is empty"}
	}
	if st.Size() > MaxKeyFileBytes {
		return nil, &KeyError{Path: path, Reason: fmt.Sprintf("is larger than %d bytes", MaxKeyFileBytes)}
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxKeyFileBytes+1))
	if err != nil {
		return nil, &KeyError{Path: path, Reason: "cannot be read: " + err.Error()}
	}
	if len(b) == 0 {
		return nil, &KeyError{Path: path, Reason: "is empty"}
	}
	if len(b) > MaxKeyFileBytes {
		return nil, &KeyError{Path: path, Reason: fmt.Sprintf("is larger than %d bytes", MaxKeyFileBytes)}
	}
	if !utf8.Valid(b) {
		return nil, &KeyError{Path: path, Reason: "is not UTF-8 PEM text"}
	}
	return b, nil
}

// onePEM decodes exactly one PEM block of the wanted type.
func onePEM(path string, b []byte, want string) (*pem.Block, error) {
	block, rest := pem.Decode(b)
	if block == nil {
		return nil, &KeyError{Path: path, Reason: "contains no PEM block"}
	}
	if block.Type != want {
		return nil, &KeyError{Path: path, Reason: fmt.Sprintf("PEM block is %q, want %q", block.Type, want)}
	}
	if extra, _ := pem.Decode(rest); extra != nil {
		return nil, &KeyError{Path: path, Reason: "contains more than one PEM block"}
	}
	return block, nil
}

// LoadSigner reads a PEM PKCS#8 Ed25519 private key ("PRIVATE KEY").
func LoadSigner(path string) (*Signer, error) {
	b, err := readKeyFile(path, true)
	if err != nil {
		return nil, err
	}
	block, err := onePEM(path, b, "PRIVATE KEY")
	if err != nil {
		return nil, err
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, &KeyError{Path: path, Reason: "is not a valid PKCS#8 private key"}
	}
	ek, ok := k.(ed25519.PrivateKey)
	if !ok {
		return nil, &KeyError{Path: path, Reason: fmt.Sprintf("holds a %T, not an Ed25519 key", k)}
	}
	return NewSigner(ek), nil
}

// LoadPublicKey reads a PEM PKIX Ed25519 public key ("PUBLIC KEY").
func LoadPublicKey(path string) (ed25519.PublicKey, error) {
	b, err := readKeyFile(path, false)
	if err != nil {
		return nil, err
	}
	block, err := onePEM(path, b, "PUBLIC KEY")
	if err != nil {
		return nil, err
	}
	k, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		return nil, &KeyError{Path: path, Reason: "is not a valid PKIX public key"}
	}
	ek, ok := k.(ed25519.PublicKey)
	if !ok {
		return nil, &KeyError{Path: path, Reason: fmt.Sprintf("holds a %T, not an Ed25519 key", k)}
	}
	return ek, nil
}

// MarshalPublicKey renders a public key as PEM, e.g. to hand to
// verify-audit.
func MarshalPublicKey(pub ed25519.PublicKey) []byte {
	der, _ := x509.MarshalPKIXPublicKey(pub)
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}

// MarshalPrivateKey renders a private key as PEM PKCS#8.
func MarshalPrivateKey(key ed25519.PrivateKey) []byte {
	der, _ := x509.MarshalPKCS8PrivateKey(key)
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
}
