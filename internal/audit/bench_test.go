package audit

import (
	"crypto/ed25519"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkAppend is the latency of one durable append (lock, tail check,
// chain, optional signature, write, fsync) — what every tools/call pays.
// The nosync variants show the CPU part alone.
func BenchmarkAppend(b *testing.B) {
	for _, bc := range []struct {
		name   string
		signer *Signer
		noSync bool
	}{
		{"unsigned", nil, false},
		{"signed", testSigner(20), false},
		{"unsigned-nosync", nil, true},
		{"signed-nosync", testSigner(20), true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			lim := defaultLimits()
			lim.noSync = bc.noSync
			l := openTest(b, ledgerPath(b), bc.signer, &lim)
			ev := EventFromCall(testRecord(0))
			if _, err := l.Append(ev); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := l.Append(ev); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// fullLedger builds a ledger at full retention with the production limits:
// pruned once (so the chain starts at a retention checkpoint), four rotated
// 4 MiB segments plus an active file of at least 3.5 MiB (about 20 MiB). With $FLUXGIT_AUDIT_BENCH_DIR set it is built (once)
// there and kept, e.g. for measuring `fluxgit verify-audit` itself.
func fullLedger(b *testing.B, s *Signer, name string) string {
	dir := filepath.Join(b.TempDir(), "audit")
	if d := os.Getenv("FLUXGIT_AUDIT_BENCH_DIR"); d != "" {
		dir = filepath.Join(d, name)
		if _, err := os.Stat(filepath.Join(dir, "mcp.jsonl")); err == nil {
			return filepath.Join(dir, "mcp.jsonl")
		}
		if s != nil {
			os.MkdirAll(dir, 0o700)
			os.WriteFile(filepath.Join(dir, "..", name+".pub.pem"), MarshalPublicKey(s.Public()), 0o644)
		}
	}
	path := filepath.Join(dir, "mcp.jsonl")
	lim := defaultLimits()
	lim.noSync = true
	l := openTest(b, path, s, &lim)
	for i := 0; ; i++ {
		if _, err := l.Append(EventFromCall(testRecord(i))); err != nil {
			b.Fatal(err)
		}
		if i%1000 == 0 {
			lf, _ := scanDir(dir, "mcp.jsonl")
			fi, _ := os.Stat(path)
			if len(lf.checkpoints) == 1 && fi.Size() >= DefaultSegmentBytes*7/8 {
				return path
			}
		}
	}
}

func ledgerBytes(b *testing.B, path string) int64 {
	var n int64
	for _, f := range ledgerFileNames(b, path) {
		if fi, err := os.Stat(f); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// BenchmarkVerifyFullRetention is verify-audit's throughput on a ledger at
// full retention, with the peak heap seen while it runs.
func BenchmarkVerifyFullRetention(b *testing.B) {
	for _, bc := range []struct {
		name   string
		signer *Signer
	}{{"unsigned", nil}, {"signed", testSigner(21)}} {
		b.Run(bc.name, func(b *testing.B) {
			path := fullLedger(b, bc.signer, bc.name)
			var keys []ed25519.PublicKey
			if bc.signer != nil {
				keys = []ed25519.PublicKey{bc.signer.Public()}
			}
			size := ledgerBytes(b, path)
			b.SetBytes(size)
			runtime.GC()
			var base runtime.MemStats
			runtime.ReadMemStats(&base)
			var peak atomic.Uint64
			stop := make(chan struct{})
			var wg sync.WaitGroup
			wg.Add(1)
			go func() { // sample the heap while verifying
				defer wg.Done()
				var m runtime.MemStats
				t := time.NewTicker(2 * time.Millisecond)
				defer t.Stop()
				for {
					select {
					case <-stop:
						return
					case <-t.C:
						runtime.ReadMemStats(&m)
						if m.HeapInuse > peak.Load() {
							peak.Store(m.HeapInuse)
						}
					}
				}
			}()
			b.ReportAllocs()
			b.ResetTimer()
			var rep Report
			for i := 0; i < b.N; i++ {
				var err error
				if rep, err = Verify(path, VerifyOptions{PublicKeys: keys, RequireSigned: bc.signer != nil}); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			close(stop)
			wg.Wait()
			b.ReportMetric(float64(rep.Entries)*float64(b.N)/b.Elapsed().Seconds(), "entries/s")
			b.ReportMetric(float64(rep.Entries), "entries")
			b.ReportMetric(float64(size)/(1<<20), "ledger-MiB")
			b.ReportMetric(float64(peak.Load()-min(peak.Load(), base.HeapInuse))/(1<<20), "peak-heap-MiB")
		})
	}
}

// BenchmarkExportFullRetention is `fluxgit audit export`'s throughput on a
// ledger at full retention: verification and staging in one pass, then
// the copy out (to io.Discard here), per format.
func BenchmarkExportFullRetention(b *testing.B) {
	path := fullLedger(b, nil, "unsigned")
	size := ledgerBytes(b, path)
	for _, format := range Formats {
		b.Run(format, func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			var res ExportResult
			for i := 0; i < b.N; i++ {
				var err error
				if res, err = Export(path, ExportOptions{Format: format, TempDir: b.TempDir()}, io.Discard); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(res.Selected)*float64(b.N)/b.Elapsed().Seconds(), "entries/s")
		})
	}
}
