package audit

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strconv"
)

// Versions written into every chained entry.
const (
	SchemaVersion = 1
	ChainVersion  = 1
)

// GenesisHash is the previousHash of the first entry of a ledger.
const GenesisHash = "genesis"

// legacyPrefixDomain separates the legacy anchor from every other hash.
const legacyPrefixDomain = "fluxgit-mcp-legacy-prefix-v1\x00"

// reservedKeys are the chain fields a caller can never supply.
var reservedKeys = []string{"id", "auditSchemaVersion", "auditChainVersion", "sequence", "segmentId",
	"previousHash", "entryHash", "signature", "signatureKeyId", "signatureVersion"}

var (
	hashLabelRE = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)
	uuidRE      = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	uuidV4RE    = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
)

// newUUID returns a random (version 4) UUID in canonical lower-case form.
func newUUID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("audit: crypto/rand failed: " + err.Error())
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	var s [36]byte
	hex.Encode(s[0:8], b[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], b[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], b[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], b[8:10])
	s[23] = '-'
	hex.Encode(s[24:], b[10:])
	return string(s[:])
}

// link is where a new entry attaches to the chain.
type link struct {
	sequence     uint64 // of the new entry
	previousHash string
	segmentID    string
}

// chainEntry turns an event object into a chained (and, with a signer,
// signed) entry and returns it with its canonical line (no newline).
func chainEntry(ev Object, at link, id string, signer *Signer) (Object, []byte, error) {
	o := ev.Without(reservedKeys...)
	o = o.Set("id", id).
		Set("auditSchemaVersion", int64(SchemaVersion)).
		Set("auditChainVersion", int64(ChainVersion)).
		Set("sequence", at.sequence).
		Set("segmentId", at.segmentID).
		Set("previousHash", at.previousHash)
	if signer != nil {
		o = o.Set("signatureKeyId", signer.keyID).Set("signatureVersion", int64(SignatureVersion))
	}
	h, err := entryHash(o)
	if err != nil {
		return nil, nil, err
	}
	o = o.Set("entryHash", h)
	if signer != nil {
		msg, err := appendObjectExcept(nil, o, "signature")
		if err != nil {
			return nil, nil, err
		}
		o = o.Set("signature", signer.sign(msg))
	}
	line, err := appendObjectExcept(nil, o)
	return o, line, err
}

// entryHash is "sha256:" + hex SHA-256 of the canonical entry without
// entryHash and signature.
func entryHash(o Object) (string, error) {
	b, err := appendObjectExcept(nil, o, "entryHash", "signature")
	if err != nil {
		return "", err
	}
	return sha256Label(b), nil
}

// legacyAnchor folds one unchained line into the legacy-prefix anchor.
func legacyAnchor(prev []byte, ev Object) ([]byte, error) {
	if prev == nil {
		prev = make([]byte, sha256.Size)
	}
	b, err := appendObjectExcept(nil, ev)
	if err != nil {
		return nil, err
	}
	h := sha256.New()
	h.Write([]byte(legacyPrefixDomain))
	h.Write(prev)
	h.Write(b)
	return h.Sum(nil), nil
}

func legacyLabel(anchor []byte) string { return "legacy-sha256:" + hex.EncodeToString(anchor) }

// chainFields are the chain fields of a chained entry, checked for shape.
type chainFields struct {
	sequence     uint64
	previousHash string
	entryHash    string
	segmentID    string
}

// isChained reports whether a record carries the chain (auditChainVersion).
func isChained(o Object) bool {
	_, ok := o.Get("auditChainVersion")
	return ok
}

// readChainFields checks the shape of a chained entry's fields (see
// schemas/audit-entry.schema.json).
func readChainFields(o Object) (chainFields, error) {
	var f chainFields
	for _, k := range []string{"auditSchemaVersion", "auditChainVersion"} {
		if v, _ := o.Get(k); v != Number("1") {
			return f, fmt.Errorf("%s must be 1", k)
		}
	}
	seq, err := uintField(o, "sequence")
	if err != nil {
		return f, err
	}
	if seq == 0 {
		return f, errors.New("sequence must be positive")
	}
	f.sequence = seq
	var ok bool
	if f.previousHash, ok = stringField(o, "previousHash"); !ok || f.previousHash == "" {
		return f, errors.New("previousHash missing")
	}
	if f.entryHash, ok = stringField(o, "entryHash"); !ok || !hashLabelRE.MatchString(f.entryHash) {
		return f, errors.New("entryHash missing or not a sha256 label")
	}
	if f.segmentID, ok = stringField(o, "segmentId"); !ok || !uuidRE.MatchString(f.segmentID) {
		return f, errors.New("segmentId missing or not a canonical UUID")
	}
	if id, ok := stringField(o, "id"); !ok || !uuidV4RE.MatchString(id) {
		return f, errors.New("id missing or not a canonical version-4 UUID")
	}
	if _, ok := o.Get("timestamp"); !ok {
		return f, errors.New("timestamp missing")
	}
	if _, ok := mustNumber(o, "timestamp"); !ok {
		return f, errors.New("timestamp is not a number")
	}
	return f, nil
}

func stringField(o Object, k string) (string, bool) {
	v, ok := o.Get(k)
	if !ok {
		return "", false
	}
	s, ok := v.(string)
	return s, ok
}

func mustNumber(o Object, k string) (Number, bool) {
	v, ok := o.Get(k)
	if !ok {
		return "", false
	}
	n, ok := v.(Number)
	return n, ok
}

func uintField(o Object, k string) (uint64, error) {
	n, ok := mustNumber(o, k)
	if !ok {
		return 0, fmt.Errorf("%s missing or not a number", k)
	}
	u, err := strconv.ParseUint(string(n), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s is not a non-negative integer", k)
	}
	return u, nil
}
