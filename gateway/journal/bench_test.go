package journal

import (
	"os"
	"testing"
	"time"
)

// BenchmarkSubmit measures one durable Submit (one transaction, fsync'd
// under synchronous=FULL) into a growing journal.
func BenchmarkSubmit(b *testing.B) {
	j := open(b)
	ps := make([]Proposal, b.N)
	for i := range ps {
		ps[i] = proposal(i)
	}
	b.ResetTimer()
	for i := range b.N {
		if _, created, err := j.Submit(ps[i]); err != nil || !created {
			b.Fatalf("submit %d: %v", i, err)
		}
	}
}

// BenchmarkTransition measures one durable lifecycle transition.
func BenchmarkTransition(b *testing.B) {
	j := open(b)
	for i := range b.N {
		submit(b, j, proposal(i))
	}
	b.ResetTimer()
	for i := range b.N {
		if _, err := j.Transition(proposal(i).ID, []Status{Pending}, Approved, func(p *Proposal) { p.DecidedBy = "page" }); err != nil {
			b.Fatal(err)
		}
	}
}

// fileSize is the journal's bytes on disk: the main file plus its WAL.
func fileSize(tb testing.TB, path string) int64 {
	tb.Helper()
	var n int64
	for _, p := range []string{path, path + "-wal"} {
		st, err := os.Stat(p)
		if err == nil {
			n += st.Size()
		} else if !os.IsNotExist(err) {
			tb.Fatal(err)
		}
	}
	return n
}

// fill submits n realistic proposals (merge bodies with a binding and a
// review, each in its own transaction, as the gateway does) and approves,
// executes and completes every second one.
func fill(tb testing.TB, j *Journal, n int) {
	tb.Helper()
	for i := range n {
		p := proposal(i)
		submit(tb, j, p)
		if i%2 == 1 {
			continue
		}
		for _, step := range [][2]Status{{Pending, Approved}, {Approved, Executing}, {Executing, Completed}} {
			if _, err := j.Transition(p.ID, []Status{step[0]}, step[1], func(p *Proposal) {
				if step[1] == Completed {
					p.Result = []byte(`{"status":"completed","message":"merged feature/x into main","mergeCommit":"3333333333333333333333333333333333333333","restorePoint":{"operation":"merge","branchRef":"refs/heads/main","beforeCommit":"2222222222222222222222222222222222222222","afterCommit":"3333333333333333333333333333333333333333","canUndo":true}}`)
				}
			}); err != nil {
				tb.Fatal(err)
			}
		}
	}
}

// BenchmarkJournal10k builds a journal of 10,000 proposals (half
// completed, half pending) and reports its size on disk, live (main file
// plus WAL) and after Close checkpoints the WAL, and how long the reads
// and sweeps the gateway runs on it take.
func BenchmarkJournal10k(b *testing.B) {
	const n = 10_000
	for range b.N {
		b.StopTimer()
		path := PathIn(b.TempDir())
		j, err := Open(path)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		fill(b, j, n)
		b.StopTimer()
		live := fileSize(b, path)

		start := time.Now()
		page, err := j.List(Filter{Statuses: []Status{Pending, Approved, Executing}})
		listDur := time.Since(start)
		if err != nil || len(page) != 200 {
			b.Fatalf("list: %d rows, %v; want the limit of 200", len(page), err)
		}
		start = time.Now()
		expired, err := j.ExpireDue(time.Now().Add(time.Hour))
		expireDur := time.Since(start)
		if err != nil || len(expired) != n/2 {
			b.Fatalf("expire: %d, %v; want %d", len(expired), err, n/2)
		}
		if err := j.Close(); err != nil {
			b.Fatal(err)
		}
		closed := fileSize(b, path)
		j, err = Open(path)
		if err != nil {
			b.Fatal(err)
		}
		start = time.Now()
		pruned, err := j.Prune(time.Now().Add(time.Hour))
		pruneDur := time.Since(start)
		if err != nil || pruned != n {
			b.Fatalf("prune: %d, %v; want %d", pruned, err, n)
		}
		j.Close()
		b.ReportMetric(float64(live), "live-bytes")
		b.ReportMetric(float64(closed), "closed-bytes")
		b.ReportMetric(float64(closed)/n, "bytes/proposal")
		b.ReportMetric(float64(listDur.Microseconds())/1000, "list-ms")
		b.ReportMetric(float64(expireDur.Microseconds())/1000, "expire5k-ms")
		b.ReportMetric(float64(pruneDur.Microseconds())/1000, "prune10k-ms")
		b.StartTimer()
	}
}
