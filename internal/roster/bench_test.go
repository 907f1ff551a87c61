package roster

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/fluxgit/fluxgit/internal/roster/pgtest"
)

// BenchmarkCheckIn reports check-in latency (p50-ms, p99-ms) with 8, 32
// and 128 concurrent agents in one workspace, on SQLite and on PostgreSQL
// (a private pgtest cluster), in one run:
//
//	go test ./internal/roster -run '^$' -bench CheckIn -benchtime 20x
//
// Every agent checks in once and then patches its session b.N-1 times
// (gist and a claimed file), each call one serialised transaction that
// returns the workspace's roster. The agents share 8 stores, as agents
// share the connections of 8 fluxgit processes. Benchmarks report, never
// assert; a failed call fails the run (it would be a store_busy).
func BenchmarkCheckIn(b *testing.B) {
	for _, backend := range []string{BackendSQLite, BackendPostgres} {
		for _, agents := range []int{8, 32, 128} {
			b.Run(fmt.Sprintf("%s/agents=%d", backend, agents), func(b *testing.B) {
				var open func() Store
				switch backend {
				case BackendSQLite:
					dir := b.TempDir()
					open = func() Store { return openStore(b, dir, Options{}) }
				default:
					u := pgtest.Shared(b).NewDatabase(b)
					open = func() Store { return openPG(b, u, Options{}) }
				}
				var stores []Store
				for range 8 {
					stores = append(stores, open())
				}
				ctx := context.Background()
				var (
					wg   sync.WaitGroup
					mu   sync.Mutex
					lat  []time.Duration
					errs []error
				)
				b.ResetTimer()
				for a := range agents {
					wg.Add(1)
					go func() {
						defer wg.Done()
						s := stores[a%len(stores)]
						file := fmt.Sprintf("src/f%d.go", a)
						in := CheckInInput{Workspace: "bench", Gist: "start", Files: []string{file, "README.md"}, HasFiles: true,
							Claims: map[string]string{file: Exclusive}, HasClaims: true}
						mine := make([]time.Duration, 0, b.N)
						for i := range b.N {
							start := time.Now()
							r, err := s.CheckIn(ctx, in)
							mine = append(mine, time.Since(start))
							if err != nil {
								mu.Lock()
								errs = append(errs, err)
								mu.Unlock()
								return
							}
							in.WorkerID, in.Gist = r.Session.WorkerID, fmt.Sprintf("step %d", i)
						}
						mu.Lock()
						lat = append(lat, mine...)
						mu.Unlock()
					}()
				}
				wg.Wait()
				b.StopTimer()
				if len(errs) > 0 {
					b.Fatalf("%d of %d agents failed; first: %v", len(errs), agents, errs[0])
				}
				slices.Sort(lat)
				at := func(q int) float64 { return float64(lat[min(len(lat)-1, len(lat)*q/100)].Microseconds()) / 1000 }
				b.ReportMetric(at(50), "p50-ms")
				b.ReportMetric(at(99), "p99-ms")
				b.ReportMetric(0, "ns/op")
			})
		}
	}
}
