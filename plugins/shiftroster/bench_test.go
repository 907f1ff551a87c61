//go:build unix

package shiftroster

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fluxgit/fluxgit/internal/roster"
	"github.com/fluxgit/fluxgit/plugins/sdk"
)

// Benchmarks report, never assert. Typical use:
//
//	go test ./plugins/shiftroster -run '^$' -bench . -benchtime 2000x
//
// BenchmarkCheckIn reports check-in latency percentiles (p50-ms, p99-ms)
// with this process alone and with 7 helper processes hammering the same
// roster (check-in + check-out loops), i.e. 8 contending processes.

type benchReport struct {
	Ops    int      `json:"ops"`
	Errors []string `json:"errors"`
}

// helperBench checks in and out in a loop until its stdin closes.
func helperBench(p *Provider) benchReport {
	var rep benchReport
	stop := make(chan struct{})
	go func() { _, _ = io.Copy(io.Discard, os.Stdin); close(stop) }()
	ws := os.Getenv("HELPER_WS")
	for {
		select {
		case <-stop:
			return rep
		default:
		}
		res, err := rawCall(p, ToolCheckIn, map[string]any{"gist": "contender", "files": []string{"x.go"}, "workspace": ws})
		if err != nil || res.Error != nil {
			rep.Errors = append(rep.Errors, fmt.Sprint(err, res))
			continue
		}
		var d CheckInData
		_ = json.Unmarshal(res.Data, &d)
		if res, err := rawCall(p, ToolCheckOut, map[string]any{"workerId": d.WorkerID, "workspace": ws}); err != nil || res.Error != nil {
			rep.Errors = append(rep.Errors, fmt.Sprint(err, res))
		}
		rep.Ops += 2
	}
}

func percentiles(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	at := func(q int) float64 {
		i := min(len(lat)-1, len(lat)*q/100)
		return float64(lat[i].Microseconds()) / 1000
	}
	b.ReportMetric(at(50), "p50-ms")
	b.ReportMetric(at(99), "p99-ms")
}

func BenchmarkCheckIn(b *testing.B) {
	for _, procs := range []int{1, 8} {
		b.Run(fmt.Sprintf("procs=%d", procs), func(b *testing.B) {
			dir := b.TempDir()
			p := testProvider(b, dir, "bench")
			ctx := context.Background()
			if _, err := p.Store(ctx); err != nil {
				b.Fatal(err)
			}
			type helper struct {
				cmd            *exec.Cmd
				stdin          io.WriteCloser
				stdout, stderr bytes.Buffer
			}
			var helpers []*helper
			for range procs - 1 {
				h := &helper{cmd: helperCommand(os.Args[0], "bench", roster.EnvStateDir+"="+dir, "HELPER_WS=bench")}
				h.cmd.Stdout, h.cmd.Stderr = &h.stdout, &h.stderr
				var err error
				if h.stdin, err = h.cmd.StdinPipe(); err != nil {
					b.Fatal(err)
				}
				if err := h.cmd.Start(); err != nil {
					b.Fatal(err)
				}
				helpers = append(helpers, h)
			}
			if len(helpers) > 0 {
				time.Sleep(500 * time.Millisecond) // let them open the store and start writing
			}
			lat := make([]time.Duration, 0, b.N)
			args, _ := json.Marshal(map[string]any{"gist": "measured", "files": []string{"a.go", "b.go"}, "workspace": "bench"})
			b.ResetTimer()
			for range b.N {
				start := time.Now()
				res, err := p.CallTool(ctx, &sdk.Call{Tool: ToolCheckIn, Arguments: args})
				lat = append(lat, time.Since(start))
				b.StopTimer()
				if err != nil || res.Error != nil {
					b.Fatalf("check-in: %v %+v", err, res)
				}
				var d CheckInData
				_ = json.Unmarshal(res.Data, &d)
				if res, err := rawCall(p, ToolCheckOut, map[string]any{"workerId": d.WorkerID, "workspace": "bench"}); err != nil || res.Error != nil {
					b.Fatalf("check-out: %v %+v", err, res)
				}
				b.StartTimer()
			}
			b.StopTimer()
			percentiles(b, lat)
			ops := 0
			for _, h := range helpers {
				_ = h.stdin.Close()
				if err := h.cmd.Wait(); err != nil {
					b.Fatalf("helper: %v\n%s", err, h.stderr.String())
				}
				var rep benchReport
				for _, l := range bytes.Split(h.stdout.Bytes(), []byte("\n")) {
					if rest, ok := bytes.CutPrefix(l, []byte(resultPrefix)); ok {
						_ = json.Unmarshal(rest, &rep)
					}
				}
				if len(rep.Errors) > 0 {
					b.Fatalf("helper errors: %q", rep.Errors)
				}
				ops += rep.Ops
			}
			if len(helpers) > 0 {
				b.ReportMetric(float64(ops), "contender-ops")
			}
		})
	}
}

// BenchmarkRosterRead500 reads a workspace roster of 500 active workers:
// the store query alone (which lists the oldest MaxListedWorkers and counts
// the rest), and the whole resources/read (query + Markdown).
func BenchmarkRosterRead500(b *testing.B) {
	dir := b.TempDir()
	s := openStore(b, dir, roster.Options{})
	ctx := context.Background()
	for i := range 500 {
		in := roster.CheckInInput{Workspace: "big", Gist: fmt.Sprintf("worker %d: refactor the | billing module", i), Files: []string{"billing/a.go", "billing/b.go", "docs/billing.md"}, HasFiles: true}
		if _, err := s.CheckIn(ctx, in); err != nil {
			b.Fatal(err)
		}
	}
	p := testProvider(b, dir, "big")
	b.Run("store", func(b *testing.B) {
		lat := make([]time.Duration, 0, b.N)
		for range b.N {
			start := time.Now()
			rows, totals, err := s.Snapshot(ctx, "big")
			lat = append(lat, time.Since(start))
			if err != nil || len(rows) != roster.MaxListedWorkers || totals.Workers != 500 {
				b.Fatalf("%d rows of %d, %v", len(rows), totals.Workers, err)
			}
		}
		percentiles(b, lat)
	})
	b.Run("resource", func(b *testing.B) {
		lat := make([]time.Duration, 0, b.N)
		for range b.N {
			start := time.Now()
			res, err := p.ReadResource(ctx, StatusURI, sdk.Meta{})
			lat = append(lat, time.Since(start))
			if err != nil || len(res.Text) < roster.MaxListedWorkers*50 || !strings.Contains(res.Text, "Not shown: 400 more workers") {
				b.Fatalf("%v", err)
			}
		}
		percentiles(b, lat)
	})
}
