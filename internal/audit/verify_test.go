package audit

import (
	"bytes"
	"crypto/ed25519"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// fixture is a rotated, pruned ledger: two rotated segments, an active
// file and one retention checkpoint.
type fixture struct {
	path   string
	signer *Signer
	keys   []ed25519.PublicKey
	lim    *limits
}

func newFixture(t *testing.T, signed bool) fixture {
	t.Helper()
	fx := fixture{path: ledgerPath(t), lim: smallLimits()}
	if signed {
		fx.signer = testSigner(7)
		fx.keys = []ed25519.PublicKey{fx.signer.Public()}
	}
	appendN(t, openTest(t, fx.path, fx.signer, fx.lim), 0, 30)
	lf, _ := scanDir(filepath.Dir(fx.path), filepath.Base(fx.path))
	if len(lf.segments) != 2 || len(lf.checkpoints) != 1 || len(readLines(t, fx.path)) < 2 {
		t.Fatalf("fixture: %d segments, %d checkpoints", len(lf.segments), len(lf.checkpoints))
	}
	mustVerify(t, fx.path, fx.opts(signed))
	return fx
}

func (fx fixture) opts(require bool) VerifyOptions { return verifyOpts(fx.keys, require, fx.lim) }

// mutate returns a copy of v that differs from it.
func mutate(v any) any {
	switch x := v.(type) {
	case string:
		if x == "" {
			return "x"
		}
		// Keep the shape (same length, same alphabet) where possible, so
		// the check that fires is the hash, not the format.
		b := []byte(x)
		i := len(b) - 1
		if b[i] == '0' {
			b[i] = '1'
		} else {
			b[i] = '0'
		}
		return string(b)
	case Number:
		return Number(string(x) + "1")
	case bool:
		return !x
	case nil:
		return "sha256:" + strings.Repeat("0", 64)
	default:
		return "x"
	}
}

// Every field of every retained entry, changed alone, is caught.
func TestTamperEveryField(t *testing.T) {
	for _, signed := range []bool{false, true} {
		t.Run(fmt.Sprintf("signed=%v", signed), func(t *testing.T) {
			fx := newFixture(t, signed)
			for _, file := range ledgerFileNames(t, fx.path) {
				lines := readLines(t, file)
				for li := range lines {
					if signed && li != 0 && li != len(lines)/2 && li != len(lines)-1 {
						continue // signatures make this slow; first, middle and last suffice
					}
					o, err := parseObject(bytes.TrimSpace(lines[li]))
					if err != nil {
						t.Fatal(err)
					}
					for _, m := range o {
						tampered := append(Object(nil), o...).Set(m.Key, mutate(m.Value))
						cp := copyLedger(t, fx.path)
						target := filepath.Join(filepath.Dir(cp), filepath.Base(file))
						ls := readLines(t, target)
						b, _ := Canonical(tampered)
						ls[li] = append(b, '\n')
						writeLines(t, target, ls)
						_, err := Verify(cp, fx.opts(false))
						if err == nil {
							t.Fatalf("%s line %d: changing %s went unnoticed", filepath.Base(file), li+1, m.Key)
						}
						noContents(t, err)
						os.RemoveAll(filepath.Dir(cp))
					}
					// Removing or adding a field is caught too.
					for _, tampered := range []Object{o.Without("summary"), append(Object(nil), o...).Set("note", "x")} {
						cp := copyLedger(t, fx.path)
						target := filepath.Join(filepath.Dir(cp), filepath.Base(file))
						ls := readLines(t, target)
						b, _ := Canonical(tampered)
						ls[li] = append(b, '\n')
						writeLines(t, target, ls)
						mustFail(t, cp, fx.opts(false))
					}
				}
			}
		})
	}
}

func TestTamperLines(t *testing.T) {
	for _, signed := range []bool{false, true} {
		t.Run(fmt.Sprintf("signed=%v", signed), func(t *testing.T) {
			fx := newFixture(t, signed)
			files := ledgerFileNames(t, fx.path)
			edit := func(t *testing.T, name string, fileIdx int, f func(lines [][]byte) [][]byte) {
				t.Run(fmt.Sprintf("%s/file%d", name, fileIdx), func(t *testing.T) {
					cp := copyLedger(t, fx.path)
					target := filepath.Join(filepath.Dir(cp), filepath.Base(files[fileIdx]))
					writeLines(t, target, f(readLines(t, target)))
					_, err := Verify(cp, fx.opts(false))
					if err == nil {
						t.Fatal("went unnoticed")
					}
					t.Log(err)
					noContents(t, err)
				})
			}
			for fi := range files {
				n := len(readLines(t, files[fi]))
				for li := 0; li < n; li++ {
					if fi == len(files)-1 && li == n-1 {
						// Dropping the newest entries of the active file is the one
						// edit a local chain cannot reveal (see the package doc).
						continue
					}
					edit(t, fmt.Sprintf("delete line %d", li+1), fi, func(ls [][]byte) [][]byte {
						return append(append([][]byte{}, ls[:li]...), ls[li+1:]...)
					})
				}
				for li := 0; li+1 < n; li++ {
					edit(t, fmt.Sprintf("swap lines %d-%d", li+1, li+2), fi, func(ls [][]byte) [][]byte {
						ls[li], ls[li+1] = ls[li+1], ls[li]
						return ls
					})
				}
				edit(t, "duplicate first line", fi, func(ls [][]byte) [][]byte { return append([][]byte{ls[0]}, ls...) })
				edit(t, "blank line", fi, func(ls [][]byte) [][]byte { return append([][]byte{[]byte("\n")}, ls...) })
				edit(t, "not an object", fi, func(ls [][]byte) [][]byte { return append(ls, []byte("[1,2]\n")) })
				edit(t, "duplicate key", fi, func(ls [][]byte) [][]byte {
					ls[0] = append([]byte(`{"tool":"x",`), ls[0][1:]...)
					return ls
				})
				edit(t, "torn last line", fi, func(ls [][]byte) [][]byte {
					ls[len(ls)-1] = ls[len(ls)-1][:20]
					return ls
				})
				if fi < len(files)-1 {
					edit(t, "truncate segment by one entry", fi, func(ls [][]byte) [][]byte { return ls[:len(ls)-1] })
				}
			}
		})
	}
}

func TestTamperFiles(t *testing.T) {
	for _, signed := range []bool{false, true} {
		t.Run(fmt.Sprintf("signed=%v", signed), func(t *testing.T) {
			fx := newFixture(t, signed)
			check := func(name string, f func(t *testing.T, cp string)) {
				t.Run(name, func(t *testing.T) {
					cp := copyLedger(t, fx.path)
					f(t, cp)
					_, err := Verify(cp, fx.opts(false))
					if err == nil {
						t.Fatal("went unnoticed")
					}
					t.Log(err)
					noContents(t, err)
				})
			}
			segs := func(t *testing.T, cp string) []string { return ledgerFileNames(t, cp)[:2] }
			check("remove the newer (middle) segment", func(t *testing.T, cp string) { os.Remove(segs(t, cp)[1]) })
			check("remove the oldest segment", func(t *testing.T, cp string) { os.Remove(segs(t, cp)[0]) })
			check("remove the active file's first entry", func(t *testing.T, cp string) {
				ls := readLines(t, cp)
				writeLines(t, cp, ls[1:])
			})
			check("rename a segment to another range", func(t *testing.T, cp string) {
				s := segs(t, cp)[1]
				sf, _ := parseSegmentName(filepath.Base(cp), filepath.Base(s))
				os.Rename(s, filepath.Join(filepath.Dir(cp), segmentName(filepath.Base(cp), sf.first, sf.last+1, sf.segmentID)))
			})
			check("segment under a foreign id", func(t *testing.T, cp string) {
				s := segs(t, cp)[1]
				sf, _ := parseSegmentName(filepath.Base(cp), filepath.Base(s))
				os.Rename(s, filepath.Join(filepath.Dir(cp), segmentName(filepath.Base(cp), sf.first, sf.last, newUUID())))
			})
			check("junk file with the ledger's prefix", func(t *testing.T, cp string) {
				os.WriteFile(cp+".segment-1-2-x", nil, 0o600)
			})
			check("segment is a symlink", func(t *testing.T, cp string) {
				s := segs(t, cp)[1]
				moved := filepath.Join(t.TempDir(), "moved")
				os.Rename(s, moved)
				os.Symlink(moved, s)
			})
			check("too many segments", func(t *testing.T, cp string) {
				for i := 0; i < 3; i++ {
					os.WriteFile(filepath.Join(filepath.Dir(cp), segmentName(filepath.Base(cp), uint64(1000+i), uint64(1000+i), newUUID())), nil, 0o600)
				}
			})
			// Checkpoints.
			cpFile := func(t *testing.T, cp string) string { return checkpointPaths(t, cp)[0] }
			editCheckpoint := func(t *testing.T, cp string, f func(Object) Object) {
				p := cpFile(t, cp)
				b, _ := os.ReadFile(p)
				o, err := parseObject(b)
				if err != nil {
					t.Fatal(err)
				}
				nb, _ := Canonical(f(o))
				os.WriteFile(p, append(nb, '\n'), 0o600)
			}
			check("remove the checkpoint", func(t *testing.T, cp string) { os.Remove(cpFile(t, cp)) })
			check("checkpoint with another previousHash", func(t *testing.T, cp string) {
				editCheckpoint(t, cp, func(o Object) Object { return o.Set("previousHash", "sha256:"+strings.Repeat("1", 64)) })
			})
			check("checkpoint content disagrees with its name", func(t *testing.T, cp string) {
				editCheckpoint(t, cp, func(o Object) Object {
					n, _ := uintField(o, "nextSequence")
					return o.Set("nextSequence", n+1).Set("prunedThroughSequence", n)
				})
			})
			check("checkpoint that is not JSON", func(t *testing.T, cp string) { os.WriteFile(cpFile(t, cp), []byte("{"), 0o600) })
			check("second checkpoint claiming the start", func(t *testing.T, cp string) {
				p := cpFile(t, cp)
				b, _ := os.ReadFile(p)
				cf, _ := parseCheckpointName(filepath.Base(cp), filepath.Base(p))
				os.WriteFile(filepath.Join(filepath.Dir(cp), checkpointName(filepath.Base(cp), cf.next, newUUID())), b, 0o600)
			})
			check("checkpoint beyond the chain", func(t *testing.T, cp string) {
				p := cpFile(t, cp)
				b, _ := os.ReadFile(p)
				o, _ := parseObject(b)
				o = o.Set("nextSequence", uint64(999)).Set("prunedThroughSequence", uint64(998))
				nb, _ := Canonical(o)
				os.WriteFile(filepath.Join(filepath.Dir(cp), checkpointName(filepath.Base(cp), 999, newUUID())), nb, 0o600)
			})
			check("checkpoint inside the chain that does not match it", func(t *testing.T, cp string) {
				// Sequence 30 is in the active file; claim another previousHash for it.
				o := Object{}.Set("auditCheckpointVersion", int64(1)).Set("createdAt", int64(1)).Set("nextSequence", uint64(30)).
					Set("previousHash", "sha256:"+strings.Repeat("2", 64)).Set("prunedThroughSequence", uint64(29))
				nb, _ := Canonical(o)
				os.WriteFile(filepath.Join(filepath.Dir(cp), checkpointName(filepath.Base(cp), 30, newUUID())), nb, 0o600)
			})
			if signed {
				check("checkpoint field changed under its signature", func(t *testing.T, cp string) {
					editCheckpoint(t, cp, func(o Object) Object { return o.Set("createdAt", int64(1)) })
				})
				check("checkpoint stripped of its signature", func(t *testing.T, cp string) {
					editCheckpoint(t, cp, func(o Object) Object { return o.Without("signature", "signatureKeyId", "signatureVersion") })
				})
				check("oldest segment removed behind a forged unsigned checkpoint", func(t *testing.T, cp string) {
					s := segs(t, cp)
					first, err := openTest(t, cp, nil, fx.lim).firstEntryOf(mustSegment(t, cp, s[1]))
					if err != nil {
						t.Fatal(err)
					}
					os.Remove(s[0])
					os.Remove(cpFile(t, cp))
					o := Object{}.Set("auditCheckpointVersion", int64(1)).Set("createdAt", int64(1)).Set("nextSequence", first.sequence).
						Set("previousHash", first.previousHash).Set("prunedThroughSequence", first.sequence-1)
					nb, _ := Canonical(o)
					os.WriteFile(filepath.Join(filepath.Dir(cp), checkpointName(filepath.Base(cp), first.sequence, newUUID())), nb, 0o600)
				})
				check("signature stripped from one entry", func(t *testing.T, cp string) {
					ls := readLines(t, cp)
					o, _ := parseObject(bytes.TrimSpace(ls[0]))
					b, _ := Canonical(o.Without("signature"))
					ls[0] = append(b, '\n')
					writeLines(t, cp, ls)
				})
			}
		})
	}
}

func mustSegment(t *testing.T, ledger, file string) segmentFile {
	t.Helper()
	s, ok := parseSegmentName(filepath.Base(ledger), filepath.Base(file))
	if !ok {
		t.Fatalf("not a segment: %s", file)
	}
	return s
}

// Re-signing everything with another key is caught by the real key; and
// an attacker without any key who rewrites the chain can only produce
// unsigned entries, which --require-signed refuses.
func TestResignedWithAnotherKey(t *testing.T) {
	fx := newFixture(t, true)
	cp := copyLedger(t, fx.path)
	mallory := testSigner(99)
	resign(t, cp, mallory)
	mustVerify(t, cp, verifyOpts([]ed25519.PublicKey{mallory.Public()}, true, fx.lim)) // internally consistent...
	ie := mustFail(t, cp, fx.opts(true))                                               // ...but not by our key
	if !strings.Contains(ie.Reason, "not a given public key") {
		t.Fatalf("%v", ie)
	}

	// Rewrite one entry, recompute the chain, drop all signatures.
	cp = copyLedger(t, fx.path)
	prev := ""
	for _, f := range ledgerFileNames(t, cp) {
		var out [][]byte
		for i, line := range readLines(t, f) {
			o, _ := parseObject(bytes.TrimSpace(line))
			if prev != "" {
				o = o.Set("previousHash", prev)
			}
			if i == 0 {
				o = o.Set("result", "success")
			}
			o = o.Without("signature", "signatureKeyId", "signatureVersion", "entryHash")
			h, _ := entryHash(o)
			o = o.Set("entryHash", h)
			b, _ := Canonical(o)
			out = append(out, append(b, '\n'))
			prev = h
		}
		writeLines(t, f, out)
	}
	// The retention checkpoint is signed and still matches the start, so
	// only the missing signatures give the rewrite away.
	ie = mustFail(t, cp, fx.opts(true))
	if !strings.Contains(ie.Reason, "not signed") {
		t.Fatalf("%v", ie)
	}
}

func TestVerifyMissingAndEmpty(t *testing.T) {
	path := ledgerPath(t)
	if _, err := Verify(path, VerifyOptions{}); err == nil || !strings.Contains(err.Error(), "no audit ledger") {
		t.Fatalf("missing ledger: %v", err)
	}
	os.MkdirAll(filepath.Dir(path), 0o700)
	os.WriteFile(path, nil, 0o600)
	if rep := mustVerify(t, path, VerifyOptions{}); !reflect.DeepEqual(rep, Report{Segments: 1, Prunings: []Pruning{}}) {
		t.Fatalf("empty ledger: %+v", rep)
	}
}

// The verifier holds one line at a time: a line beyond the limit is an
// error, not an allocation.
func TestVerifyLineLimit(t *testing.T) {
	path := ledgerPath(t)
	appendN(t, openTest(t, path, nil, nil), 0, 2)
	appendRaw(t, path, `{"x":"`+strings.Repeat("a", DefaultLineBytes)+`"}`+"\n")
	ie := mustFail(t, path, VerifyOptions{})
	if ie.Line != 3 || !strings.Contains(ie.Reason, "line limit") {
		t.Fatalf("%v", ie)
	}
}

// Signatures are checked in parallel, yet the failure reported is always
// the earliest one in the ledger.
func TestEarliestFailureWins(t *testing.T) {
	path := ledgerPath(t)
	s := testSigner(12)
	appendN(t, openTest(t, path, s, nil), 0, 200)
	lines := readLines(t, path)
	// Line 3: a forged signature (valid shape). Lines 150 and 190: broken hashes.
	o, _ := parseObject(bytes.TrimSpace(lines[2]))
	o = o.Set("signature", testSigner(13).sign([]byte("x")))
	b, _ := Canonical(o)
	lines[2] = append(b, '\n')
	for _, i := range []int{149, 189} {
		lines[i] = bytes.Replace(lines[i], []byte(`"sidecarReadOnly":true`), []byte(`"sidecarReadOnly":false`), 1)
	}
	writeLines(t, path, lines)
	for i := 0; i < 20; i++ {
		ie := mustFail(t, path, verifyOpts([]ed25519.PublicKey{s.Public()}, true, nil))
		if ie.Line != 3 || !strings.Contains(ie.Reason, "does not verify") {
			t.Fatalf("run %d: %v", i, ie)
		}
	}
	// With line 3 intact again, the first hash failure is reported.
	orig := readLines(t, path)
	o, _ = parseObject(bytes.TrimSpace(orig[2]))
	msg, _ := appendObjectExcept(nil, o, "signature")
	o = o.Set("signature", s.sign(msg))
	b, _ = Canonical(o)
	orig[2] = append(b, '\n')
	writeLines(t, path, orig)
	for i := 0; i < 5; i++ {
		if ie := mustFail(t, path, verifyOpts([]ed25519.PublicKey{s.Public()}, true, nil)); ie.Line != 150 {
			t.Fatalf("run %d: %v", i, ie)
		}
	}
}
