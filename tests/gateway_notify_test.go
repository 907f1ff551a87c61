package tests

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fluxgit/fluxgit/tests/browser"
)

// waitOutput polls buf until it holds every one of want.
func waitOutput(t *testing.T, what string, buf *lockedBuffer, want ...string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		s := buf.String()
		missing := ""
		for _, w := range want {
			if !strings.Contains(s, w) {
				missing = w
				break
			}
		}
		if missing == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s lacks %q:\n%s", what, missing, s)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// The person hears about a proposal on the gateway's own terminal: one
// line on its stderr when the agent proposes, naming the operation, the
// repository, the agent and the command that approves it, and one line
// per decision and outcome.
func TestGatewayTerminalNotices(t *testing.T) {
	l := newLoop(t)
	repo := e2eRepo(t)
	id := l.propose("merge", repo, map[string]any{"sourceRef": "feature", "targetRef": "main"})
	waitOutput(t, "the gateway's stderr", l.g.stderr,
		"proposal "+id+" merge "+repo+" from ", " — approve: fluxgit gateway approve "+id+"\n")

	reset := l.propose("reset", repo, map[string]any{"targetRef": "HEAD~1", "mode": "hard"})
	waitOutput(t, "the gateway's stderr", l.g.stderr, "approve: fluxgit gateway approve "+reset+" --confirm-branch main\n")

	l.g.decide(t, "approve", id)
	l.awaitStatus(id, "completed")
	head := revParse(t, repo, "main")
	waitOutput(t, "the gateway's stderr", l.g.stderr,
		"approved "+id+" merge "+repo+" by a person",
		"executed "+id+" merge "+repo+" → "+head[:12]+"\n")
	if _, secret, _ := strings.Cut(l.g.page, "?s="); secret == "" || strings.Contains(l.g.stderr.String(), secret) {
		t.Fatal("the person's secret is in the notice lines")
	}
}

// watchProc is one running `fluxgit gateway watch`.
type watchProc struct {
	cmd  *exec.Cmd
	out  *lockedBuffer // stdout and stderr
	done chan struct{}
	err  error
}

func startWatch(t *testing.T, g *gatewayProc) *watchProc {
	t.Helper()
	w := &watchProc{out: &lockedBuffer{}, done: make(chan struct{})}
	w.cmd = exec.Command(fluxgitBin, "gateway", "watch", "--interval", "200ms")
	w.cmd.Env = g.env
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	w.cmd.Stdout, w.cmd.Stderr = pw, pw
	if err := w.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	copied := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			w.out.Write([]byte(sc.Text() + "\n"))
		}
		close(copied)
	}()
	go func() { w.err = w.cmd.Wait(); <-copied; close(w.done) }()
	t.Cleanup(func() {
		select {
		case <-w.done:
		default:
			_ = w.cmd.Process.Kill()
			<-w.done
		}
	})
	return w
}

// wait waits for the watch to exit and returns its exit code.
func (w *watchProc) wait(t *testing.T) int {
	t.Helper()
	select {
	case <-w.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("watch did not exit:\n%s", w.out.String())
	}
	var ee *exec.ExitError
	if errors.As(w.err, &ee) {
		return ee.ExitCode()
	}
	if w.err != nil {
		t.Fatalf("watch: %v", w.err)
	}
	return 0
}

// `fluxgit gateway watch` follows the queue from another terminal: it
// lists what is waiting, prints a line when a proposal arrives and one
// per decision and outcome, stops on Ctrl-C with status 0, and says so
// and exits 1 when the gateway goes away.
func TestGatewayWatch(t *testing.T) {
	l := newLoop(t)
	repo := e2eRepo(t)
	first := l.propose("branch", repo, map[string]any{"name": "topic", "checkout": false})

	w := startWatch(t, l.g)
	waitOutput(t, "watch", w.out, "1 waiting for a decision:\n", "proposal "+first+" branch "+repo+" from ")

	second := l.propose("merge", repo, map[string]any{"sourceRef": "feature", "targetRef": "main"})
	waitOutput(t, "watch", w.out, "proposal "+second+" merge "+repo+" from ", "approve: fluxgit gateway approve "+second+"\n")

	l.g.decide(t, "approve", second)
	l.awaitStatus(second, "completed")
	waitOutput(t, "watch", w.out, "approved "+second+" merge "+repo+" by a person", "executed "+second+" merge "+repo+" → ")
	if n := strings.Count(w.out.String(), "proposal "+second+" "); n != 1 {
		t.Fatalf("the arrival of %s printed %d times:\n%s", second, n, w.out.String())
	}

	if err := w.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if code := w.wait(t); code != 0 || !strings.Contains(w.out.String(), "watch stopped.") {
		t.Fatalf("after Ctrl-C: exit %d\n%s", code, w.out.String())
	}

	w2 := startWatch(t, l.g)
	waitOutput(t, "the second watch", w2.out, "proposal "+first+" branch ")
	if strings.Contains(w2.out.String(), second) {
		t.Fatalf("the second watch reprints history from before it started:\n%s", w2.out.String())
	}
	l.g.stop()
	if code := w2.wait(t); code != 1 || !strings.Contains(w2.out.String(), "is gone") {
		t.Fatalf("after the gateway stopped: exit %d\n%s", code, w2.out.String())
	}
}

// waitTitle polls the page's title until it is want.
func waitTitle(t *testing.T, b *browser.Browser, want string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		got := b.Title()
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("page title %q, want %q", got, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// The approval page tells the person a proposal arrived: the tab's title
// counts the pending proposals and changes when one arrives or is
// decided, and once the person allows notifications (the button asks the
// browser; headless Chromium is granted the permission the way the
// person would grant it in the prompt) the browser shows one
// notification per newly arrived proposal, none for the ones already on
// the page.
func TestGatewayNotifiesInBrowser(t *testing.T) {
	b := browser.Start(t)
	l := newLoop(t)
	repo := e2eRepo(t)
	first := l.propose("branch", repo, map[string]any{"name": "topic", "checkout": false})

	b.Navigate(l.g.page)
	b.WaitFor(card(first), 0)
	waitTitle(t, b, "(1) FluxGit approvals")
	ask := b.WaitFor(`#notify[data-state="default"] #notify-ask`, 0)

	b.SetPermission("notifications", "granted")
	// The page has not asked yet: only the person's click does.
	if b.Find("#notify").Attr("data-state") != "default" {
		t.Fatal("the page changed its notification state before the person clicked")
	}
	ask.Click()
	b.WaitText(`#notify[data-state="granted"] #notify-text`, "Notifications on", 0)
	if v := b.Script(`return document.getElementById('notify-ask').hidden`); v != true {
		t.Fatalf("the ask button still shows after the permission was granted (hidden=%v)", v)
	}

	second := l.propose("merge", repo, map[string]any{"sourceRef": "feature", "targetRef": "main"})
	b.WaitFor(card(second), 0)
	waitTitle(t, b, "(2) FluxGit approvals")
	b.WaitFor(`#notify[data-shown="1"][data-last="`+second+`"]`, 0)
	b.WaitText("#notify-text", "1 shown", 0)
	if *updateScreenshot {
		b.SaveScreenshot(filepath.Join("..", "docs", "screenshots", "approval-notifications.png"))
	}

	l.g.decide(t, "approve", second)
	waitTitle(t, b, "(1) FluxGit approvals")
	l.g.decide(t, "approve", first)
	waitTitle(t, b, "FluxGit approvals")
	if got := b.Find("#notify").Attr("data-shown"); got != "1" {
		t.Fatalf("%s notifications shown, want 1 (only the proposal that arrived while the page was open)", got)
	}
}
