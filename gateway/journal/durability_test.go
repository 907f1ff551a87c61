package journal

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
)

// envChild makes TestDurabilityChild act: it names the journal the child
// writes to.
const envChild = "FLUXGIT_JOURNAL_TEST_CHILD"

// TestDurabilityChild is the child half of TestKillDuringWrites: it
// submits and approves proposals forever, reporting each commit on stdout
// only after Submit or Transition returned, until it is killed.
func TestDurabilityChild(t *testing.T) {
	path := os.Getenv(envChild)
	if path == "" {
		t.Skip("runs only as the child of TestKillDuringWrites")
	}
	j, err := Open(path)
	if err != nil {
		fmt.Println("error", err)
		os.Exit(2)
	}
	for i := 0; ; i++ {
		p := proposal(i)
		if _, _, err := j.Submit(p); err != nil {
			fmt.Println("error", err)
			os.Exit(2)
		}
		fmt.Println("submitted", p.ID)
		if i%2 == 0 {
			if _, err := j.Transition(p.ID, []Status{Pending}, Approved, func(p *Proposal) { p.DecidedBy = "cli" }); err != nil {
				fmt.Println("error", err)
				os.Exit(2)
			}
			fmt.Println("approved", p.ID)
		}
	}
}

// A gateway killed with SIGKILL in the middle of writing leaves a journal
// that opens cleanly with every committed row as it was committed.
func TestKillDuringWrites(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		t.Skip("SIGKILL is a Unix signal")
	}
	path := PathIn(t.TempDir())
	cmd := exec.Command(os.Args[0], "-test.run=^TestDurabilityChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), envChild+"="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })

	committed := map[string]Status{}
	sc := bufio.NewScanner(out)
	lines := 0
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		switch f[0] {
		case "submitted":
			committed[f[1]] = Pending
		case "approved":
			committed[f[1]] = Approved
		case "error":
			t.Fatalf("child failed: %s", sc.Text())
		default:
			continue
		}
		// Kill while the child is in full flow, after some 60 commits.
		if lines++; lines == 60 {
			if err := cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	// Lines the child printed before the signal landed are commits too.
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) == 2 {
			switch f[0] {
			case "submitted":
				committed[f[1]] = Pending
			case "approved":
				committed[f[1]] = Approved
			}
		}
	}
	err = cmd.Wait()
	if err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("child exit: %v, want killed", err)
	}
	if len(committed) < 30 {
		t.Fatalf("only %d commits reported before the kill", len(committed))
	}

	j, err := Open(path)
	if err != nil {
		t.Fatalf("reopen after SIGKILL: %v", err)
	}
	defer j.Close()
	var check string
	if err := j.db.QueryRow("PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
		t.Fatalf("integrity_check %q, %v", check, err)
	}
	for id, st := range committed {
		p, err := j.Get(id)
		if err != nil {
			t.Errorf("committed proposal %s lost: %v", id, err)
			continue
		}
		// A submitted row may have been approved after its line was
		// printed and before the kill; it can never be behind.
		if p.Status != st && (st != Pending || p.Status != Approved) {
			t.Errorf("%s is %s, committed as %s", id, p.Status, st)
		}
		if st == Approved && p.DecidedBy != "cli" {
			t.Errorf("%s lost DecidedBy: %q", id, p.DecidedBy)
		}
	}
	rows, err := j.List(Filter{Limit: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) < len(committed) || len(rows) > len(committed)+1 {
		t.Fatalf("%d rows after reopen, %d reported committed; at most one unreported commit can exist", len(rows), len(committed))
	}
	// The journal keeps working.
	if _, created, err := j.Submit(proposal(1 << 20)); err != nil || !created {
		t.Fatalf("submit after recovery: %v", err)
	}
}
