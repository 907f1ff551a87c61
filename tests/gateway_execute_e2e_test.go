package tests

import (
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// approveOnPage approves id as the person does on the approval page (the
// page address printed on the gateway's terminal, its cookie, CSRF token
// and Origin), with the confirmations in body. It does not depend on how
// the terminal CLI asks the person.
func approveOnPage(t *testing.T, g *gatewayProc, id string, body map[string]any) {
	t.Helper()
	pc := newPersonClient(t, g)
	if body == nil {
		body = map[string]any{}
	}
	if code := pc.post(t, "/ui/api/proposals/"+id+"/approve", body, true, pc.csrf, pc.base, ""); code != http.StatusOK {
		t.Fatalf("approve %s on the page: status %d", id, code)
	}
}

// An approved push never runs the program remote.<name>.receivepack names
// in the repository's configuration (finding 7 of issue 22): git's own
// git-receive-pack receives the push, which still succeeds.
func TestGatewayPushIgnoresRepositoryReceivePack(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("shell script as receive-pack: Unix")
	}
	l := newLoop(t)
	repo := e2eRepo(t)
	dir := canonicalTempDir(t)
	bare := filepath.Join(dir, "remote.git")
	git(t, repo, "init", "-q", "--bare", bare)
	git(t, repo, "remote", "add", "origin", bare)
	marker := filepath.Join(dir, "receivepack-ran")
	script := filepath.Join(dir, "evil-receive-pack")
	writeFile(t, script, "#!/bin/sh\ntouch '"+marker+"'\nexec git-receive-pack \"$@\"\n")
	if err := os.Chmod(script, 0o755); err != nil {
		t.Fatal(err)
	}
	git(t, repo, "config", "remote.origin.receivepack", script)

	id := l.propose("push", repo, map[string]any{"branch": "main"})
	approveOnPage(t, l.g, id, nil)
	d := l.awaitStatus(id, "completed")
	if _, err := os.Stat(marker); err == nil {
		t.Fatalf("the repository's receivepack program ran: %s", jsonOf(d))
	}
	if got := strings.TrimSpace(git(t, bare, "rev-parse", "refs/heads/main")); got != revParse(t, repo, "main") {
		t.Fatalf("the remote has main at %s, want %s: %s", got, revParse(t, repo, "main"), jsonOf(d))
	}
}
