package server

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fluxgit/fluxgit/gateway/journal"
)

// reportLatencies reports the p50 and p99 of samples in milliseconds.
func reportLatencies(b *testing.B, samples []time.Duration, what string) {
	if len(samples) == 0 {
		return
	}
	slices.Sort(samples)
	ms := func(q float64) float64 {
		return float64(samples[int(q*float64(len(samples)-1))].Microseconds()) / 1000
	}
	b.ReportMetric(ms(0.50), what+"-p50-ms")
	b.ReportMetric(ms(0.99), what+"-p99-ms")
}

// BenchmarkSubmitToPage measures what a person waits for: from an agent's
// preview POST until the page, listening on its event stream, has been
// told and has refetched a state that holds the new pending card.
func BenchmarkSubmitToPage(b *testing.B) {
	g := start(b, "", nil)
	repo := newRepo(b)
	base := "http://" + g.s.Addr()
	noRedirect := &http.Client{
		Transport:     &http.Transport{Proxy: nil},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	resp, err := noRedirect.Get(base + "/?s=" + g.s.Secret())
	if err != nil {
		b.Fatal(err)
	}
	resp.Body.Close()
	cookies := resp.Cookies()
	if len(cookies) == 0 {
		b.Fatal("no session cookie")
	}
	get := func(path string) *http.Response {
		req, _ := http.NewRequest(http.MethodGet, base+path, nil)
		for _, c := range cookies {
			req.AddCookie(c)
		}
		resp, err := noRedirect.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		return resp
	}
	events := get("/ui/api/events")
	defer events.Body.Close()
	changed := make(chan string, 1024)
	go func() {
		sc := bufio.NewScanner(events.Body)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				changed <- data
			}
		}
	}()
	var samples []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		id := g.propose(branchBody(repo, "bench-agent", fmt.Sprint("k", i), fmt.Sprint("b", i)))
		for ev := range changed {
			if strings.Contains(ev, id) {
				break
			}
		}
		resp := get("/ui/api/state")
		var buf strings.Builder
		_, _ = bufio.NewReader(resp.Body).WriteTo(&buf)
		resp.Body.Close()
		if !strings.Contains(buf.String(), id) {
			b.Fatalf("state after the event lacks %s", id)
		}
		samples = append(samples, time.Since(t0))
	}
	b.StopTimer()
	reportLatencies(b, samples, "submit-to-page")
}

// bigRepo builds, with git fast-import, a repository of commits commits on
// main touching 200 files, and a branch feature that leaves main 10
// commits before its tip and adds 3 commits of its own.
func bigRepo(b *testing.B, commits int) string {
	dir := realDir(b, b.TempDir())
	git(b, dir, "init", "-q", "-b", "main")
	git(b, dir, "config", "user.name", "Bench")
	git(b, dir, "config", "user.email", "bench@example.com")
	var s strings.Builder
	data := func(text string) { fmt.Fprintf(&s, "data %d\n%s\n", len(text), text) }
	for i := 1; i <= commits; i++ {
		fmt.Fprintf(&s, "commit refs/heads/main\nmark :%d\ncommitter Bench <bench@example.com> %d +0000\n", i, 1700000000+i)
		data(fmt.Sprintf("change %d", i))
		if i > 1 {
			fmt.Fprintf(&s, "from :%d\n", i-1)
		}
		fmt.Fprintf(&s, "M 100644 inline f%03d.txt\n", i%200)
		data(fmt.Sprintf("line %d\n", i))
	}
	for j := 1; j <= 3; j++ {
		fmt.Fprintf(&s, "commit refs/heads/feature\nmark :%d\ncommitter Bench <bench@example.com> %d +0000\n", commits+j, 1800000000+j)
		data(fmt.Sprintf("feature %d", j))
		if j == 1 {
			fmt.Fprintf(&s, "from :%d\n", commits-10)
		}
		fmt.Fprintf(&s, "M 100644 inline feat%d.txt\n", j)
		data(fmt.Sprintf("feature %d\n", j))
	}
	cmd := exec.Command("git", "-C", dir, "fast-import", "--quiet")
	cmd.Stdin = strings.NewReader(s.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("fast-import: %v\n%s", err, out)
	}
	git(b, dir, "reset", "-q", "--hard", "main")
	return dir
}

// BenchmarkMergeApproval measures, in a 5,000-commit repository, from a
// person's approval of a merge until the gateway has bound-checked,
// taken the restore point, merged and recorded the proposal completed.
func BenchmarkMergeApproval(b *testing.B) {
	g := start(b, "", nil)
	repo := bigRepo(b, 5000)
	base := git(b, repo, "rev-parse", "main")
	changes, cancel := g.s.Subscribe()
	defer cancel()
	var samples []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		git(b, repo, "reset", "-q", "--hard", base)
		id := g.propose(body("merge", repo, "bench-agent", fmt.Sprint("m", i), map[string]any{"sourceRef": "feature", "targetRef": "main", "strategy": "merge"}))
		b.StartTimer()
		t0 := time.Now()
		if _, err := g.s.Decide(context.Background(), id, Decision{Approve: true, By: "cli"}); err != nil {
			b.Fatal(err)
		}
		for c := range changes {
			if c.ID == id && c.Status.Terminal() {
				if c.Status != journal.Completed {
					b.Fatalf("merge ended %s: %s", c.Status, g.status(id).raw)
				}
				break
			}
		}
		samples = append(samples, time.Since(t0))
	}
	b.StopTimer()
	if git(b, repo, "rev-parse", "main^2") != git(b, repo, "rev-parse", "feature") {
		b.Fatal("main is not the merge of feature")
	}
	reportLatencies(b, samples, "approve-to-completed")
}
