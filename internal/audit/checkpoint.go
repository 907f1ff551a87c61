package audit

import (
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
)

var keyIDRE = regexp.MustCompile(`^[0-9a-f]{16}$`)

// CheckpointVersion is written into every retention checkpoint.
const CheckpointVersion = 1

// checkpoint is a decoded retention checkpoint:
//
//	{auditCheckpointVersion:1, nextSequence, previousHash, prunedThroughSequence, createdAt}
//	+ signatureKeyId, signatureVersion:3, signature when signed
//
// It says: entries up to prunedThroughSequence were deleted on purpose, and
// the entry nextSequence continues the chain from previousHash.
type checkpoint struct {
	file         checkpointFile
	obj          Object
	next         uint64
	previousHash string
	keyID        string // "" when unsigned
}

func (c *checkpoint) signed() bool {
	_, ok := c.obj.Get("signature")
	return ok
}

// readCheckpoint reads and shape-checks a checkpoint file (its signature
// is checked by the verifier).
func readCheckpoint(dir string, cf checkpointFile) (*checkpoint, error) {
	f, err := openNoFollow(filepath.Join(dir, cf.name), os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	if fi.Size() > maxCheckpointBytes {
		return nil, fmt.Errorf("larger than %d bytes", maxCheckpointBytes)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxCheckpointBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxCheckpointBytes {
		return nil, fmt.Errorf("larger than %d bytes", maxCheckpointBytes)
	}
	o, err := parseObject(data)
	if err != nil {
		return nil, err
	}
	if v, _ := o.Get("auditCheckpointVersion"); v != Number("1") {
		return nil, errors.New("auditCheckpointVersion must be 1")
	}
	c := &checkpoint{file: cf, obj: o}
	if c.next, err = uintField(o, "nextSequence"); err != nil {
		return nil, err
	}
	if c.next != cf.next || c.next < 2 {
		return nil, errors.New("nextSequence does not match the file name")
	}
	var ok bool
	if c.previousHash, ok = stringField(o, "previousHash"); !ok || !hashLabelRE.MatchString(c.previousHash) {
		return nil, errors.New("previousHash missing or not a sha256 label")
	}
	pruned, err := uintField(o, "prunedThroughSequence")
	if err != nil {
		return nil, err
	}
	if pruned != c.next-1 {
		return nil, errors.New("prunedThroughSequence is not nextSequence-1")
	}
	if _, ok := mustNumber(o, "createdAt"); !ok {
		return nil, errors.New("createdAt missing or not a number")
	}
	c.keyID, _ = stringField(o, "signatureKeyId")
	return c, nil
}

// verifySignature checks o's signature when it has one and reports whether
// it is signed. chained demands the current domain (signatureVersion 3
// with a key id); unchained (legacy) records may be version 1 (no version,
// key id not signed) or 2.
func verifySignature(o Object, keys map[string]ed25519.PublicKey, chained bool) (bool, error) {
	signed, chk, err := prepareSignature(o, keys, chained)
	if err != nil || !signed {
		return signed, err
	}
	return true, chk.verify(keys)
}

// sigCheck is a signature whose shape and key were checked, waiting for the
// (expensive) Ed25519 verification.
type sigCheck struct {
	msg, sig []byte
	pub      ed25519.PublicKey // nil: try every key (a version-1 record without key id)
}

func (c *sigCheck) verify(keys map[string]ed25519.PublicKey) error {
	if c.pub != nil {
		if !ed25519.Verify(c.pub, c.msg, c.sig) {
			return errors.New("signature does not verify")
		}
		return nil
	}
	for _, pub := range keys {
		if ed25519.Verify(pub, c.msg, c.sig) {
			return nil
		}
	}
	return errors.New("signature does not verify with any given public key")
}

// prepareSignature does every signature check except the Ed25519 one.
func prepareSignature(o Object, keys map[string]ed25519.PublicKey, chained bool) (bool, *sigCheck, error) {
	sigV, hasSig := o.Get("signature")
	keyV, hasKey := o.Get("signatureKeyId")
	verV, hasVer := o.Get("signatureVersion")
	if !hasSig {
		if hasKey || hasVer {
			return false, nil, errors.New("signatureKeyId or signatureVersion without a signature")
		}
		return false, nil, nil
	}
	sigStr, ok := sigV.(string)
	if !ok {
		return true, nil, errors.New("signature is not a string")
	}
	sig, err := base64.RawURLEncoding.Strict().DecodeString(sigStr)
	if err != nil || len(sig) != ed25519.SignatureSize {
		return true, nil, errors.New("signature is not 64 bytes of unpadded base64url")
	}
	version := uint64(1)
	if hasVer {
		n, ok := verV.(Number)
		if !ok {
			return true, nil, errors.New("signatureVersion is not a number")
		}
		if version, err = strconv.ParseUint(string(n), 10, 8); err != nil || version == 0 {
			return true, nil, errors.New("signatureVersion is not a small positive integer")
		}
	}
	keyID := ""
	if hasKey {
		if keyID, ok = keyV.(string); !ok {
			return true, nil, errors.New("signatureKeyId is not a string")
		}
	}
	if chained && (version != SignatureVersion || keyID == "") {
		return true, nil, fmt.Errorf("chained records must be signed with signatureVersion %d and a signatureKeyId", SignatureVersion)
	}
	if version > SignatureVersion {
		return true, nil, fmt.Errorf("unknown signatureVersion %d", version)
	}
	chk := &sigCheck{sig: sig}
	if version < 2 {
		chk.msg, err = appendObjectExcept(nil, o, "signature", "signatureKeyId")
	} else {
		chk.msg, err = appendObjectExcept(nil, o, "signature")
	}
	if err != nil {
		return true, nil, err
	}
	if keyID != "" {
		pub, ok := keys[keyID]
		if !ok {
			name := "an unrecognised key id"
			if keyIDRE.MatchString(keyID) {
				name = "key " + keyID
			}
			return true, nil, fmt.Errorf("signed with %s, which is not a given public key", name)
		}
		chk.pub = pub
	}
	return true, chk, nil
}
