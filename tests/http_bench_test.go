package tests

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Streamable HTTP benchmarks; they report, never assert times.
// Run: go test ./tests -run '^$' -bench 'HTTP' -benchtime 2000x

// percentiles reports p50 and p99 of samples as custom metrics.
func percentiles(b *testing.B, samples []time.Duration) {
	if len(samples) == 0 {
		return
	}
	sort.Slice(samples, func(i, j int) bool { return samples[i] < samples[j] })
	at := func(p float64) float64 {
		return float64(samples[int(p*float64(len(samples)-1))].Microseconds())
	}
	b.ReportMetric(at(0.50), "p50-µs")
	b.ReportMetric(at(0.99), "p99-µs")
}

// rawClient posts JSON-RPC to an endpoint over one keep-alive connection.
type rawClient struct {
	url     string
	c       *http.Client
	session string
}

func newRawClient(url string) *rawClient {
	return &rawClient{url: url, c: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}}
}

func (c *rawClient) post(b testing.TB, body []byte, hdr map[string]string) []byte {
	req, _ := http.NewRequest(http.MethodPost, c.url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.session != "" {
		req.Header.Set("Mcp-Session-Id", c.session)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := c.c.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		b.Fatalf("%d %s", resp.StatusCode, out)
	}
	if s := resp.Header.Get("Mcp-Session-Id"); s != "" {
		c.session = s
	}
	return out
}

func (c *rawClient) initialize(b testing.TB) {
	c.post(b, []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`), nil)
}

// BenchmarkToolsCallTransport is one tools/call of a provider that does
// nothing (echo.noop), audit off, over stdio, over HTTP as a 2026-07-28
// stateless POST, and over HTTP in a legacy stateful session; p50/p99 per
// call are reported.
func BenchmarkToolsCallTransport(b *testing.B) {
	call := map[string]any{"name": "echo.noop", "arguments": map[string]any{}}
	env := func() []string { return append(echoEnv(b), "FLUXGIT_MCP_AUDIT_DISABLED=1") }
	b.Run("stdio", func(b *testing.B) {
		s := warmServer(b, env())
		s.call(0, "tools/call", call)
		samples := make([]time.Duration, 0, b.N)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			t0 := time.Now()
			if r := s.call(i+1, "tools/call", call); r.Error != nil {
				b.Fatal(r.raw)
			}
			samples = append(samples, time.Since(t0))
		}
		percentiles(b, samples)
	})
	b.Run("http-2026-07-28", func(b *testing.B) {
		s := startHTTP(b, env())
		c := newRawClient(s.url)
		body := modernRequest(1, "tools/call", call)
		hdr := modernHeaders("tools/call", "echo.noop")
		c.post(b, body, hdr)
		samples := make([]time.Duration, 0, b.N)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			t0 := time.Now()
			c.post(b, body, hdr)
			samples = append(samples, time.Since(t0))
		}
		percentiles(b, samples)
	})
	b.Run("http-legacy-session", func(b *testing.B) {
		s := startHTTP(b, env(), "--session-mode", "stateful")
		c := newRawClient(s.url)
		c.initialize(b)
		hdr := map[string]string{"MCP-Protocol-Version": "2025-11-25"}
		body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo.noop","arguments":{}}}`)
		c.post(b, body, hdr)
		samples := make([]time.Duration, 0, b.N)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			t0 := time.Now()
			c.post(b, body, hdr)
			samples = append(samples, time.Since(t0))
		}
		percentiles(b, samples)
	})
}

// BenchmarkHTTPRepoStatus64 is repo.status on a small repository from 64
// concurrent clients (2026-07-28 POSTs); requests per second is reported.
func BenchmarkHTTPRepoStatus64(b *testing.B) {
	repo := fixtureRepo(b)
	s := startHTTP(b, append(baseEnv(b), "FLUXGIT_MCP_AUDIT_DISABLED=1"))
	body := modernRequest(1, "tools/call", map[string]any{"name": "repo.status", "arguments": map[string]any{"repoPath": repo}})
	hdr := modernHeaders("tools/call", "repo.status")
	newRawClient(s.url).post(b, body, hdr)
	const clients = 64
	work := make(chan struct{}, b.N)
	for i := 0; i < b.N; i++ {
		work <- struct{}{}
	}
	close(work)
	b.ResetTimer()
	t0 := time.Now()
	var wg sync.WaitGroup
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rc := newRawClient(s.url)
			for range work {
				if out := rc.post(b, body, hdr); !bytes.Contains(out, []byte(`"result"`)) {
					b.Errorf("repo.status: %s", out)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/time.Since(t0).Seconds(), "req/s")
}

// rss is a process's resident set in bytes (Linux).
func rss(b testing.TB, pid int) int {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Skip("no /proc")
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.Atoi(f[1])
			return kb << 10
		}
	}
	b.Skip("no VmRSS")
	return 0
}

// BenchmarkHTTPIdleLegacySession opens b.N initialized legacy sessions and
// reports the server's resident memory per idle session, without and with
// a GET stream open on each.
func BenchmarkHTTPIdleLegacySession(b *testing.B) {
	for _, withGET := range []bool{false, true} {
		name := "initialized"
		if withGET {
			name = "with-GET-stream"
		}
		b.Run(name, func(b *testing.B) {
			s := startHTTP(b, baseEnv(b), "--session-mode", "stateful")
			warm := newRawClient(s.url)
			warm.initialize(b)
			time.Sleep(200 * time.Millisecond)
			before := rss(b, s.cmd.Process.Pid)
			var bodies []io.Closer
			defer func() {
				for _, c := range bodies {
					c.Close()
				}
			}()
			tr := &http.Transport{MaxIdleConnsPerHost: 16}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				c := &rawClient{url: s.url, c: &http.Client{Transport: tr}}
				c.initialize(b)
				if withGET {
					req, _ := http.NewRequest(http.MethodGet, s.url, nil)
					req.Header.Set("Accept", "text/event-stream")
					req.Header.Set("Mcp-Session-Id", c.session)
					resp, err := http.DefaultTransport.RoundTrip(req)
					if err != nil || resp.StatusCode != 200 {
						b.Fatalf("GET: %v %v", err, resp)
					}
					_, _ = bufio.NewReader(resp.Body).Peek(0)
					bodies = append(bodies, resp.Body)
				}
			}
			b.StopTimer()
			time.Sleep(300 * time.Millisecond)
			after := rss(b, s.cmd.Process.Pid)
			b.ReportMetric(float64(after-before)/float64(b.N), "B/session")
		})
	}
}
