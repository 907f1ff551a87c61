package repo

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"os"
	"path/filepath"
	"strconv"
)

// maxIndexRead bounds the index file readIndexGitlinks will load; a larger
// index is listed by git instead.
const maxIndexRead = 64 << 20

// readIndexGitlinks lists the gitlinks (mode 160000 entries) of the index
// in gitDir by reading the file directly, which saves repo.brief a
// `git ls-files --stage` that prints every one of the index's entries only
// for the few gitlinks among them. It answers only when the reading is
// unambiguous and complete, and ok=false sends the caller back to git:
//
//   - version 2, 3 or 4, every entry consistent (name length field, NUL
//     terminator, zero padding, v4 prefix compression), entries ending
//     exactly where the extensions begin, and the extensions ending
//     exactly at the trailing checksum;
//   - the hash size (SHA-1 or SHA-256) is not stored in the index, so
//     both are tried and exactly one must parse;
//   - no split index ("link": entries live in another file) and no sparse
//     index ("sdir", or any directory entry: gitlinks may hide inside).
//
// The result only feeds the submodule summary; the submodule scan still
// applies its own checks before entering any directory.
func readIndexGitlinks(gitDir string) (*gitlinkSet, bool) {
	path := filepath.Join(gitDir, "index")
	if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() || fi.Size() > maxIndexRead {
		return nil, false
	}
	data, err := os.ReadFile(path) // sized from the file: one allocation
	if err != nil || len(data) > maxIndexRead {
		return nil, false
	}
	var found *gitlinkSet
	for _, hs := range []int{20, 32} {
		if set, ok := parseIndexGitlinks(data, hs); ok {
			if found != nil {
				return nil, false // both sizes parse: ambiguous
			}
			found = set
		}
	}
	return found, found != nil
}

// parseIndexGitlinks parses data as an index with hash size hs.
func parseIndexGitlinks(data []byte, hs int) (*gitlinkSet, bool) {
	if len(data) < 12+hs || string(data[:4]) != "DIRC" {
		return nil, false
	}
	version := binary.BigEndian.Uint32(data[4:8])
	if version < 2 || version > 4 {
		return nil, false
	}
	count := binary.BigEndian.Uint32(data[8:12])
	body := data[:len(data)-hs] // without the trailing checksum
	set := &gitlinkSet{}
	off := 12
	var prev []byte
	for i := uint32(0); i < count; i++ {
		start := off
		fixed := 40 + hs + 2
		if start+fixed > len(body) {
			return nil, false
		}
		mode := binary.BigEndian.Uint32(data[start+24 : start+28])
		flags := binary.BigEndian.Uint16(data[start+40+hs : start+fixed])
		if flags&0x4000 != 0 { // extended flags follow
			if version < 3 {
				return nil, false
			}
			fixed += 2
			if start+fixed > len(body) {
				return nil, false
			}
		}
		if mode&0o170000 == 0o040000 {
			return nil, false // sparse directory entry
		}
		nameLen := int(flags & 0x0fff)
		p := start + fixed
		var path []byte
		if version == 4 {
			strip, n := indexVarint(body[p:])
			if n <= 0 || strip > uint64(len(prev)) {
				return nil, false
			}
			p += n
			end := bytes.IndexByte(body[p:], 0)
			if end < 0 {
				return nil, false
			}
			path = append(append(make([]byte, 0, len(prev)+end), prev[:len(prev)-int(strip)]...), body[p:p+end]...)
			off = p + end + 1
		} else {
			end := bytes.IndexByte(body[p:], 0)
			if end < 0 {
				return nil, false
			}
			path = body[p : p+end]
			size := (fixed + end + 8) &^ 7
			if start+size > len(body) {
				return nil, false
			}
			for _, b := range body[p+end : start+size] {
				if b != 0 {
					return nil, false
				}
			}
			off = start + size
		}
		if len(path) == 0 || (nameLen < 0x0fff && nameLen != len(path)) || (nameLen == 0x0fff && len(path) < 0x0fff) {
			return nil, false
		}
		prev = path
		if mode == 0o160000 {
			sha := hex.EncodeToString(data[start+40 : start+40+hs])
			stage := strconv.Itoa(int(flags>>12) & 3)
			rec := make([]byte, 0, 16+len(sha)+len(path))
			rec = append(rec, "160000 "+sha+" "+stage+"\t"...)
			if err := set.add(append(rec, path...)); err != nil {
				return nil, false
			}
		}
	}
	// Extensions: signature, 32-bit size, data; then only the checksum.
	for off < len(body) {
		if off+8 > len(body) {
			return nil, false
		}
		sig := string(body[off : off+4])
		size := int(binary.BigEndian.Uint32(body[off+4 : off+8]))
		if sig == "link" || sig == "sdir" {
			return nil, false
		}
		if size < 0 || off+8+size > len(body) {
			return nil, false
		}
		off += 8 + size
	}
	return set, off == len(body)
}

// indexVarint decodes the offset varint of index v4 path compression; n
// is the number of bytes used (0: malformed).
func indexVarint(b []byte) (uint64, int) {
	if len(b) == 0 {
		return 0, 0
	}
	c := b[0]
	val := uint64(c & 127)
	n := 1
	for c&128 != 0 {
		if n >= len(b) || n > 9 {
			return 0, 0
		}
		val++
		c = b[n]
		n++
		val = (val << 7) + uint64(c&127)
	}
	return val, n
}
