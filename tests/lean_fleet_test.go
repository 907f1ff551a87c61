package tests

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// smallFleet builds four clones of one origin under one directory: one
// clean, one with changes, one ahead, one behind; the ahead one also has a
// linked, locked work tree.
func smallFleet(t testing.TB) (root string, repos []string) {
	t.Helper()
	root = canonicalTempDir(t)
	origin := filepath.Join(root, "origin.git")
	git(t, root, "init", "-q", "--bare", "-b", "main", origin)
	seed := filepath.Join(root, "seed")
	git(t, root, "clone", "-q", origin, seed)
	writeFile(t, filepath.Join(seed, "a.txt"), "a\n")
	git(t, seed, "add", "-A")
	git(t, seed, "commit", "-q", "-m", "Initial import")
	git(t, seed, "push", "-q", "origin", "main")
	for _, n := range []string{"clean", "dirty", "ahead", "behind"} {
		d := filepath.Join(root, "fleet", n)
		git(t, root, "clone", "-q", origin, d)
		repos = append(repos, d)
	}
	writeFile(t, filepath.Join(repos[1], "a.txt"), "changed\n")
	writeFile(t, filepath.Join(repos[1], "new.txt"), "new\n")
	writeFile(t, filepath.Join(repos[2], "b.txt"), "b\n")
	git(t, repos[2], "add", "-A")
	git(t, repos[2], "commit", "-q", "-m", "Add b")
	git(t, repos[2], "worktree", "add", "-q", "-b", "hotfix", filepath.Join(root, "ahead-hotfix"))
	git(t, repos[2], "worktree", "lock", filepath.Join(root, "ahead-hotfix"))
	writeFile(t, filepath.Join(seed, "c.txt"), "c\n")
	git(t, seed, "add", "-A")
	git(t, seed, "commit", "-q", "-m", "Add c")
	git(t, seed, "push", "-q", "origin", "main")
	git(t, repos[3], "fetch", "-q", "origin")
	return root, repos
}

// Through the binary, fleet.radar, fleet.digest and worktree.list in the
// default (lean) shape carry the facts an agent needs and cost at most
// 1.5x the raw git an expert runs (its command lines, which name the
// repositories, and their output; on so small a fleet the root dominates);
// with FLUXGIT_MCP_RESULT_SHAPE=reference
// they keep the reference's fields (the host validates each shape against
// its own schema, so a mismatch fails the call).
func TestLeanFleetToolsCostLikeRawGit(t *testing.T) {
	root, repos := smallFleet(t)
	fleet := filepath.Join(root, "fleet")
	rawOf := func(cmds ...[]string) int {
		var all strings.Builder
		for _, c := range cmds {
			// The expert names each repository on the command line, as
			// fleet.radar names it in its answer: the command counts.
			all.WriteString("git -C " + c[0] + " " + strings.Join(c[1:], " ") + "\n")
			all.WriteString(git(t, c[0], c[1:]...))
		}
		return countTokens(t, all.String())
	}
	var statusCmds, reflogCmds [][]string
	for _, r := range repos {
		statusCmds = append(statusCmds, []string{r, "status", "-sb"})
		reflogCmds = append(reflogCmds, []string{r, "reflog", "-n", "10", "--date=iso"})
	}
	cases := []struct {
		tool  string
		args  map[string]any
		raw   [][]string
		facts []string
		ref   []string // reference data keys
	}{
		{"fleet.radar", map[string]any{"repoPaths": repos}, statusCmds,
			[]string{`"root":"` + fleet + `"`, `"dirty local_changes: main...origin/main, 2 changed"`,
				`"behind behind: main...origin/main [behind 1]"`, `"ahead ahead: main...origin/main [ahead 1]"`, `"clean":1`},
			[]string{"entries", "attentionStack", "requestedCount", "scannedCount", "failedCount", "dirtyCount", "conflictCount",
				"potentialConflictRepoCount", "truncatedCount", "truncated", "elapsedMs", "network", "guidance"}},
		{"fleet.digest", map[string]any{"repoPaths": repos, "sinceMs": 0}, reflogCmds,
			[]string{`"root":"` + fleet + `"`, `commit: Add b"`, `clone: from ` + filepath.Join(root, "origin.git"), `"identity":"`},
			[]string{"sinceMs", "events", "eventCount", "repos", "repoSource", "requestedRepoCount", "excludedOutsideAllowedRoots",
				"truncated", "elapsedMs", "attribution", "guidance"}},
		{"worktree.list", map[string]any{"repoPath": repos[2]}, [][]string{{repos[2], "worktree", "list"}},
			[]string{`"worktrees":["` + repos[2] + ` `, ` [main]","` + filepath.Join(root, "ahead-hotfix") + ` `, ` [hotfix] locked"]`},
			[]string{"total", "worktrees", "truncated"}},
	}
	for _, shape := range []string{"lean", "reference"} {
		t.Run(shape, func(t *testing.T) {
			env := append(baseEnv(t), "FLUXGIT_TOOLSETS=all")
			if shape == "reference" {
				env = append(env, "FLUXGIT_MCP_RESULT_SHAPE=reference")
			}
			s := startServer(t, env)
			defer s.stop()
			initialize(t, s)
			for i, tc := range cases {
				text, data := callText(t, s, i+2, tc.tool, tc.args)
				if shape == "reference" {
					for _, k := range tc.ref {
						if _, ok := data[k]; !ok {
							t.Errorf("%s: reference data lacks %s: %s", tc.tool, k, text)
						}
					}
					if len(data) != len(tc.ref) {
						t.Errorf("%s: reference data has %d fields, want %d: %s", tc.tool, len(data), len(tc.ref), text)
					}
					continue
				}
				b, _ := json.Marshal(data)
				for _, f := range tc.facts {
					if !strings.Contains(string(b), f) {
						t.Errorf("%s: lean data lacks %s:\n%s", tc.tool, f, b)
					}
				}
				got, want := countTokens(t, leanEnvelope(t, text)), rawOf(tc.raw...)
				t.Logf("%s: %d o200k tokens, raw git %d (%.2fx)", tc.tool, got, want, float64(got)/float64(want))
				if float64(got) > 1.5*float64(want) {
					t.Errorf("%s costs %d tokens, more than 1.5x the %d of raw git:\n%s", tc.tool, got, want, text)
				}
			}
		})
	}
}
