package tests

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fluxgit/fluxgit/internal/roster/pgtest"
)

// The gateway's commit execution applies the shift-roster guard itself,
// on both roster stores, with the guard's pre-commit hook installed too:
// the proposer's own exclusive lease (checked in through the same fluxgit
// server that proposes) does not block its commit, neither in the gateway
// nor in the hook; a commit touching a file another agent's fluxgit
// process holds exclusively fails at execution, naming the worker and its
// gist and saying how to override, with nothing committed; the person's
// override (approve --override-guard, or the card's box) lets it
// through, hook included; the card warned of the held file beforehand.
func TestGatewayCommitGuard(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			env := loopEnv(t)
			if backend == "postgres" {
				env = append(env, "SHIFT_DATABASE_URL="+pgtest.Start(t).NewDatabase(t))
			}
			g := startGateway(t, env)
			ctx, cs := sdkSessionEnv(t, "2025-11-25", g.mcpEnv())
			l := &loop{t: t, g: g, ctx: ctx, cs: cs}
			repo := e2eRepo(t)
			install := exec.Command(fluxgitBin, "guard", "install")
			install.Dir, install.Env = repo, env
			if out, err := install.CombinedOutput(); err != nil {
				t.Fatalf("guard install: %v\n%s", err, out)
			}
			// Both files are tracked and changed, so the hook (which also
			// reads the gateway's private index) has something to check.
			writeFile(t, filepath.Join(repo, "todo.txt"), "todo\n")
			writeFile(t, filepath.Join(repo, "mine.txt"), "notes\n")
			git(t, repo, "add", "todo.txt", "mine.txt")
			git(t, repo, "commit", "-q", "-m", "chore: lists")
			writeFile(t, filepath.Join(repo, "todo.txt"), "ship it\n")
			writeFile(t, filepath.Join(repo, "mine.txt"), "mine\n")

			// Another agent, in its own fluxgit process, holds todo.txt.
			other := startServer(t, g.mcpEnv())
			initialize(t, other)
			p, _ := rosterCall(t, other, 1, "shift_check_in", map[string]any{"gist": "Todo list", "workspace": repo,
				"files": []string{"todo.txt"}, "claims": map[string]string{"todo.txt": "exclusive"}})
			holder := dataOf(t, p)["workerId"].(string)
			// The proposing agent holds mine.txt, checked in through its own server.
			mine, isErr := l.tool("shift_check_in", map[string]any{"gist": "My notes", "workspace": repo,
				"files": []string{"mine.txt"}, "claims": map[string]string{"mine.txt": "exclusive"}})
			if isErr || mine["workerId"] == nil {
				t.Fatalf("check-in of the proposer: %s", jsonOf(mine))
			}

			// Its own lease does not block it (gateway and hook).
			id := l.propose("commit", repo, map[string]any{"message": "docs: mine", "paths": []any{"mine.txt"}})
			g.decide(t, "approve", id)
			if d := l.awaitStatus(id, "completed"); !strings.Contains(git(t, repo, "log", "-1", "--format=%s"), "docs: mine") {
				t.Fatalf("the proposer's own file was not committed: %s", jsonOf(d))
			}

			// Another agent's exclusive lease refuses the commit at execution.
			head := revParse(t, repo, "HEAD")
			id = l.propose("commit", repo, map[string]any{"message": "chore: todo", "paths": []any{"todo.txt"}})
			// The card warns the person before the decision.
			if c := jsonOf(pageCard(t, g, id)); !strings.Contains(c, "Held by other agents") || !strings.Contains(c, "todo.txt: worker "+holder) {
				t.Fatalf("the card does not warn of the held file: %s", c)
			}
			g.decide(t, "approve", id)
			d := l.awaitStatus(id, "failed")
			msg := jsonOf(d)
			for _, want := range []string{"todo.txt: worker " + holder, `Todo list`, "--override-guard", "FLUXGIT_GUARD_OVERRIDE=1", "nothing changed"} {
				if !strings.Contains(msg, want) {
					t.Fatalf("the refusal lacks %q: %s", want, msg)
				}
			}
			if revParse(t, repo, "HEAD") != head {
				t.Fatal("the refused commit moved HEAD")
			}
			if st := git(t, repo, "status", "--porcelain", "--", "todo.txt"); strings.TrimSpace(st) != "M todo.txt" {
				t.Fatalf("the refused commit changed the index or work tree: %q", st)
			}

			// The person's override lets it through, past the hook as well.
			id = l.propose("commit", repo, map[string]any{"message": "chore: todo", "paths": []any{"todo.txt"}})
			if backend == "postgres" { // the page's override box; the terminal's flag on SQLite
				approveOnPage(t, g, id, map[string]any{"overrideGuard": true})
			} else {
				g.decide(t, "approve", id, "--override-guard")
			}
			d = l.awaitStatus(id, "completed")
			if !strings.Contains(jsonOf(d), "override") || revParse(t, repo, "HEAD") == head {
				t.Fatalf("the override did not commit or does not say it overrode: %s", jsonOf(d))
			}
		})
	}
}
