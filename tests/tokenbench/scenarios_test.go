package tokenbench

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// sizes scales the fixtures: fast mode runs in CI, full mode is realistic.
type sizes struct {
	files, commits         int // fresh-clone, busy-worktree, merge-conflict, detached-rebase
	dirty                  int // multiplier for work-tree changes
	monoFiles, monoCommits int
	worktrees              int
	wtFiles, wtCommits     int
	fleetFiles             int
	fleetCommits           int
	dirtyFiles             int // tracked files of dirty-300
}

var (
	fastSizes = sizes{files: 30, commits: 25, dirty: 1, monoFiles: 240, monoCommits: 60, worktrees: 5, wtFiles: 20, wtCommits: 15, fleetFiles: 8, fleetCommits: 6, dirtyFiles: 450}
	fullSizes = sizes{files: 600, commits: 1500, dirty: 6, monoFiles: 4000, monoCommits: 3000, worktrees: 24, wtFiles: 150, wtCommits: 400, fleetFiles: 60, fleetCommits: 150, dirtyFiles: 3000}
)

// rawCmd is one command an agent would run in a shell. dir is its working
// directory; exit and empty are what the fixture is built to produce, so a
// fixture that silently lost its state fails the test.
type rawCmd struct {
	dir   string
	argv  []string
	exit  int
	empty bool
}

// toolCall is one fluxgit tools/call.
type toolCall struct {
	tool string
	args map[string]any
}

// step pairs one fluxgit call with the raw git commands an expert runs for
// the same facts. A command two steps share runs once and counts in each.
type step struct {
	call toolCall
	raw  []rawCmd
}

// built is what a scenario builder returns.
type built struct {
	repos []string // repositories and work trees listed in fixture.txt
	steps []step
	// sides are strings conflict.read must show (both sides of the deep
	// conflict of the outside check); empty elsewhere.
	sides []string
}

// scenario is one situation an agent meets, generated from its seed.
type scenario struct {
	name  string
	seed  uint64
	about string // what the agent wants to know; shown in results.json
	build func(f *fixture, sz sizes) built
}

// outsideCheck is the scenario of the issue-23 acceptance check: the eight
// tools, each against its expert equivalent, on one busy fixture.
const outsideCheck = "outside-check"

var scenarios = []scenario{
	{outsideCheck, 108, "the acceptance fixture: modified, staged and untracked files, a stash, a branch ahead of its upstream, 10 tags, a merge stopped on a conflict at line 2,500 of a 4,000-line file; each of the eight everyday tools once", buildOutsideCheck},
	{"fresh-clone", 101, "orient in a repository just cloned: clean, up to date, a few tags and branches", buildFreshClone},
	{"busy-worktree", 102, "orient in a clone with staged, unstaged and untracked changes, two stashes, local and upstream commits", buildBusy},
	{"merge-conflict", 103, "orient in a merge stopped on conflicts and read the conflicts", buildMergeConflict},
	{"monorepo-subtree", 104, "orient in a monorepo and read the recent history and changes of the subtree being worked on", buildMonorepo},
	{"many-worktrees", 105, "list every work tree of a repository and what each has in progress", buildWorktrees},
	{"detached-rebase", 106, "orient on a detached HEAD in a rebase stopped on a conflict and read the conflict", buildRebase},
	{"fleet-20", 107, "find which of 20 repositories need attention and what happened in them since the session began", buildFleet},
	{"tags-1000", 109, "list the refs of a repository with 1,000 release tags", buildTags},
	{"dirty-300", 110, "orient in a work tree with 300 changed paths", buildDirty},
}

// expert builds the raw git commands an expert runs for each tool, and the
// paired fluxgit call. cwd is the shell's directory: when it is not repo
// the commands name the repository with -C, as an expert would type them.
// noStash, noTags and clean say which outputs this fixture leaves empty, so
// a fixture that silently lost its state fails the test.
type expert struct {
	repo, cwd              string
	noStash, noTags, clean bool
}

func (e expert) git(empty bool, args ...string) rawCmd {
	argv := []string{"git"}
	if e.cwd != "" && e.cwd != e.repo {
		argv = append(argv, "-C", e.repo)
	}
	dir := e.cwd
	if dir == "" {
		dir = e.repo
	}
	return rawCmd{dir: dir, argv: append(argv, args...), empty: empty}
}

func (e expert) statusSB() rawCmd  { return e.git(false, "status", "-sb") }
func (e expert) log10() rawCmd     { return e.git(false, "log", "--oneline", "-10") }
func (e expert) stashList() rawCmd { return e.git(e.noStash, "stash", "list") }

func (e expert) call(tool string, kv ...any) toolCall {
	args := map[string]any{"repoPath": e.repo}
	for i := 0; i+1 < len(kv); i += 2 {
		args[kv[i].(string)] = kv[i+1]
	}
	return toolCall{tool, args}
}

// brief: repo.brief ↔ git status -sb, git log --oneline -10, git stash list.
func (e expert) brief() step {
	return step{e.call("repo.brief"), []rawCmd{e.statusSB(), e.log10(), e.stashList()}}
}

// status: repo.status ↔ git status -sb.
func (e expert) status() step { return step{e.call("repo.status"), []rawCmd{e.statusSB()}} }

// changes: worktree.changes ↔ git status --short.
func (e expert) changes() step {
	return step{e.call("worktree.changes"), []rawCmd{e.git(e.clean, "status", "--short")}}
}

// history: repo.history limit 10 ↔ git log --oneline -10 [-- paths].
func (e expert) history(paths ...string) step {
	if len(paths) == 0 {
		return step{e.call("repo.history", "limit", 10), []rawCmd{e.log10()}}
	}
	return step{e.call("repo.history", "limit", 10, "paths", paths),
		[]rawCmd{e.git(false, append([]string{"log", "--oneline", "-10", "--"}, paths...)...)}}
}

// refs: repo.refs ↔ git branch -a, git tag --sort=-creatordate, git stash list.
func (e expert) refs() step {
	return step{e.call("repo.refs"), []rawCmd{e.git(false, "branch", "-a"), e.git(e.noTags, "tag", "--sort=-creatordate"), e.stashList()}}
}

// diff: diff.text ↔ git diff.
func (e expert) diff() step { return step{e.call("diff.text"), []rawCmd{e.git(e.clean, "diff")}} }

// diffStat: diff.text mode stat ↔ git diff --stat.
func (e expert) diffStat() step {
	return step{e.call("diff.text", "mode", "stat"), []rawCmd{e.git(e.clean, "diff", "--stat")}}
}

// show: commit.details ↔ git show --name-status <rev>.
func (e expert) show(rev string) step {
	return step{e.call("commit.details", "commit", rev), []rawCmd{e.git(false, "show", "--name-status", rev)}}
}

// conflict: conflict.read ↔ git status -sb and git diff of the conflicted
// paths (the conflict alone, not the rest of a dirty tree).
func (e expert) conflict(paths []string) step {
	return step{e.call("conflict.read"), []rawCmd{e.statusSB(), e.git(false, append([]string{"diff", "--"}, paths...)...)}}
}

// conflicted lists the unmerged paths of a repository.
func (f *fixture) conflicted(repo string) []string {
	f.t.Helper()
	return strings.Fields(f.git(repo, "diff", "--name-only", "--diff-filter=U"))
}

func buildFreshClone(f *fixture, sz sizes) built {
	up := f.bare("fresh-clone")
	m := newModel(f.r, goPaths(f.r, sz.files))
	s := newStream(sz.commits + 4)
	s.commit("refs/heads/main", "", "chore: initial import", m, nil)
	for i := 1; i < sz.commits; i++ {
		mark := linear(f.r, s, "refs/heads/main", m, 1, nil, dirScope)
		switch i {
		case sz.commits / 3:
			s.ref("refs/tags/v0.1.0", mark)
		case 2 * sz.commits / 3:
			s.ref("refs/tags/v0.2.0", mark)
			dev := m.clone()
			s.ref("refs/heads/develop", mark)
			linear(f.r, s, "refs/heads/develop", dev, 2, nil, dirScope)
		}
	}
	f.importStream(up, s)
	repo := f.clone(up, "fresh-clone")
	f.publish(repo, "fresh-clone")
	e := expert{repo: repo, noStash: true, clean: true}
	return built{
		repos: []string{repo},
		steps: []step{e.brief(), e.refs(), e.history()},
	}
}

func buildBusy(f *fixture, sz sizes) built {
	up := f.bare("busy-worktree")
	m := newModel(f.r, goPaths(f.r, sz.files))
	s := newStream(sz.commits + 4)
	s.commit("refs/heads/main", "", "chore: initial import", m, nil)
	mark := linear(f.r, s, "refs/heads/main", m, sz.commits-1, nil, dirScope)
	feat := m.clone()
	s.ref("refs/heads/feature/export", mark)
	linear(f.r, s, "refs/heads/feature/export", feat, 2, nil, dirScope)
	f.importStream(up, s)
	repo := f.clone(up, "busy-worktree")

	// Upstream moves on after the clone; the fetch makes the clone behind.
	s2 := newStream(3)
	s2.when = f.clock - 3*3600
	changed := m.mutate(f.r, 2, nil)
	s2.commit("refs/heads/main", "refs/heads/main^0", subject(f.r, dirScope(changed)), m, changed)
	linear(f.r, s2, "refs/heads/main", m, 2, nil, dirScope)
	f.importStream(up, s2)
	f.git(repo, "fetch", "-q", "origin")

	paths := m.paths()
	pick := func() string { return paths[f.r.IntN(len(paths))] }
	for i := 0; i < 2; i++ {
		p := pick()
		f.editFile(repo, p)
		f.git(repo, "commit", "-q", "-am", subject(f.r, dirScope([]string{p})))
	}
	f.git(repo, "branch", "-q", "wip/experiment")
	f.git(repo, "branch", "-q", "--track", "feature/export", "origin/feature/export")
	for i := 0; i < 2; i++ {
		f.editFile(repo, pick())
		f.git(repo, "stash", "push", "-q", "-m", fmt.Sprintf("wip: %s %s", word(f.r), word(f.r)))
	}
	used := map[string]bool{}
	fresh := func() string {
		for {
			p := pick()
			if !used[p] {
				used[p] = true
				return p
			}
		}
	}
	for i := 0; i < 2*sz.dirty; i++ {
		p := fresh()
		f.editFile(repo, p)
		f.git(repo, "add", p)
	}
	f.write(filepath.Join(repo, "internal/api/export_csv.go"), "package api\n\n"+codeLine(f.r)+"\n")
	f.git(repo, "add", "internal/api/export_csv.go")
	old := fresh()
	f.git(repo, "mv", old, strings.TrimSuffix(old, filepath.Ext(old))+"_v2"+filepath.Ext(old))
	for i := 0; i < 3*sz.dirty; i++ {
		f.editFile(repo, fresh())
	}
	f.git(repo, "rm", "-q", "--cached", fresh()) // staged deletion, file kept as untracked
	gone := fresh()
	if err := os.Remove(filepath.Join(repo, gone)); err != nil {
		f.t.Fatal(err)
	}
	for i := 0; i < 2*sz.dirty; i++ {
		f.write(filepath.Join(repo, fmt.Sprintf("scratch/%s_%d.txt", word(f.r), i)), word(f.r)+"\n")
	}
	f.write(filepath.Join(repo, "notes.md"), "# TODO\n- "+word(f.r)+"\n")
	f.publish(repo, "busy-worktree")
	e := expert{repo: repo, noTags: true}
	return built{
		repos: []string{repo},
		steps: []step{e.brief(), e.status(), e.changes(), e.diffStat(), e.refs(), e.history()},
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func buildMergeConflict(f *fixture, sz sizes) built {
	up := f.bare("merge-conflict")
	m := newModel(f.r, goPaths(f.r, sz.files))
	ps := m.paths()
	hot := []string{ps[1], ps[len(ps)/2], ps[len(ps)-2]}
	s := newStream(sz.commits + 8)
	conflictingHistory(f, s, m, sz.commits, "feature/login", hot, 5)
	f.importStream(up, s)
	repo := f.clone(up, "merge-conflict")
	f.git(repo, "branch", "-q", "--track", "feature/login", "origin/feature/login")
	f.gitCode(repo, 1, nil, "merge", "--no-edit", "feature/login")
	f.write(filepath.Join(repo, "notes.md"), "# merge notes\n- keep both "+word(f.r)+" paths\n")
	f.publish(repo, "merge-conflict")
	e := expert{repo: repo, noStash: true}
	return built{
		repos: []string{repo},
		steps: []step{e.brief(), e.status(), e.conflict(f.conflicted(repo))},
	}
}

func buildRebase(f *fixture, sz sizes) built {
	up := f.bare("detached-rebase")
	m := newModel(f.r, goPaths(f.r, sz.files))
	ps := m.paths()
	// The first topic commit applies cleanly, the second conflicts.
	hot := []string{"", ps[len(ps)/3]}
	s := newStream(sz.commits + 8)
	conflictingHistory(f, s, m, sz.commits, "feature/search", hot, 3)
	f.importStream(up, s)
	repo := f.clone(up, "detached-rebase")
	f.git(repo, "checkout", "-q", "-b", "feature/search", "--track", "origin/feature/search")
	f.gitCode(repo, 1, nil, "rebase", "origin/main")
	f.publish(repo, "detached-rebase")
	e := expert{repo: repo, noStash: true}
	return built{
		repos: []string{repo},
		steps: []step{e.brief(), e.status(), e.conflict(f.conflicted(repo))},
	}
}

// conflictingHistory writes main and a topic branch of topicCommits
// commits; topic commit i and a later main commit both rewrite line 2 of
// hot[i] (an empty hot[i] makes topic commit i touch other files), so a
// merge or rebase of one onto the other stops on those files.
func conflictingHistory(f *fixture, s *stream, m *model, commits int, topic string, hot []string, topicCommits int) {
	s.commit("refs/heads/main", "", "chore: initial import", m, nil)
	mark := linear(f.r, s, "refs/heads/main", m, commits-3, nil, dirScope)
	t := m.clone()
	s.ref("refs/heads/"+topic, mark)
	for i := 0; i < topicCommits; i++ {
		var changed []string
		if i < len(hot) && hot[i] != "" {
			t.setLine(hot[i], 2, "\t// "+topic+": "+codeLine(f.r)[1:])
			changed = []string{hot[i]}
		} else {
			changed = t.mutate(f.r, 1, func(p string) bool { return !contains(hot, p) })
		}
		s.commit("refs/heads/"+topic, "", subject(f.r, dirScope(changed)), t, changed)
	}
	for _, p := range hot {
		if p == "" {
			continue
		}
		m.setLine(p, 2, "\t// main: "+codeLine(f.r)[1:])
		s.commit("refs/heads/main", "", subject(f.r, dirScope([]string{p})), m, []string{p})
	}
}

// setFileLine sets line i of a work-tree file.
func setFileLine(f *fixture, repo, rel string, i int, line string) {
	f.t.Helper()
	p := filepath.Join(repo, filepath.FromSlash(rel))
	b, err := os.ReadFile(p)
	if err != nil {
		f.t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	lines[i] = line
	f.write(p, strings.Join(lines, "\n")+"\n")
}

var services = []string{"auth", "billing", "catalog", "gateway", "inventory", "notify", "payments", "search"}
var libs = []string{"httpx", "logging", "storage", "testkit"}

func monoPaths(r *rand.Rand, n int) []string {
	seen := map[string]bool{}
	var ps []string
	for len(ps) < n {
		var p string
		switch k := r.IntN(10); {
		case k < 7:
			svc := services[r.IntN(len(services))]
			sub := []string{"cmd", "internal/handler", "internal/store", "internal/model", "api"}[r.IntN(5)]
			p = fmt.Sprintf("services/%s/%s/%s_%s.go", svc, sub, word(r), word(r))
		case k < 9:
			p = fmt.Sprintf("libs/%s/%s_%s.go", libs[r.IntN(len(libs))], word(r), word(r))
		default:
			p = fmt.Sprintf("docs/%s/%s-%s.md", services[r.IntN(len(services))], word(r), word(r))
		}
		if len(ps) > 0 && len(seen) > 3*n {
			p = fmt.Sprintf("libs/gen/file%05d.go", len(ps))
		}
		if !seen[p] {
			seen[p] = true
			ps = append(ps, p)
		}
	}
	sort.Strings(ps)
	return ps
}

func buildMonorepo(f *fixture, sz sizes) built {
	up := f.bare("monorepo-subtree")
	m := newModel(f.r, monoPaths(f.r, sz.monoFiles))
	s := newStream(sz.monoCommits + 4)
	s.commit("refs/heads/main", "", "chore: import monorepo", m, nil)
	for i := 1; i < sz.monoCommits; i++ {
		svc := services[f.r.IntN(len(services))]
		prefix := "services/" + svc + "/"
		linear(f.r, s, "refs/heads/main", m, 1, func(p string) bool { return strings.HasPrefix(p, prefix) }, dirScope)
	}
	f.importStream(up, s)
	repo := f.clone(up, "monorepo-subtree")
	var billing []string
	for _, p := range m.paths() {
		if strings.HasPrefix(p, "services/billing/") {
			billing = append(billing, p)
		}
	}
	f.editFile(repo, billing[0])
	f.git(repo, "commit", "-q", "-am", subject(f.r, "billing"))
	for i := 1; i <= 3*sz.dirty; i++ {
		f.editFile(repo, billing[i%len(billing)])
	}
	staged := billing[(3*sz.dirty+1)%len(billing)]
	f.editFile(repo, staged)
	f.git(repo, "add", staged)
	f.write(filepath.Join(repo, "services/billing/internal/handler/refund_test.go"), "package handler\n\n"+codeLine(f.r)+"\n")
	f.publish(repo, "monorepo-subtree")
	e := expert{repo: repo, noStash: true}
	return built{
		repos: []string{repo},
		steps: []step{e.brief(), e.status(), e.changes(), e.diffStat(), e.history("services/billing")},
	}
}

func buildWorktrees(f *fixture, sz sizes) built {
	up := f.bare("many-worktrees")
	m := newModel(f.r, goPaths(f.r, sz.wtFiles))
	s := newStream(sz.wtCommits + 3*sz.worktrees)
	s.commit("refs/heads/main", "", "chore: initial import", m, nil)
	var names []string
	for i := 1; i <= sz.worktrees; i++ {
		mark := linear(f.r, s, "refs/heads/main", m, sz.wtCommits/sz.worktrees, nil, dirScope)
		name := fmt.Sprintf("feat/%02d-%s", i, word(f.r))
		names = append(names, name)
		b := m.clone()
		s.ref("refs/heads/"+name, mark)
		linear(f.r, s, "refs/heads/"+name, b, 1+f.r.IntN(2), nil, dirScope)
	}
	f.importStream(up, s)
	repo := f.clone(up, "many-worktrees")
	paths := []string{repo}
	for i, name := range names {
		wt := f.path("many-worktrees-wt/" + strings.ReplaceAll(strings.TrimPrefix(name, "feat/"), "/", "-"))
		f.git(repo, "worktree", "add", "-q", "-b", name, wt, "origin/"+name)
		paths = append(paths, wt)
		files := m.paths()
		switch i % 4 {
		case 1:
			f.editFile(wt, files[f.r.IntN(len(files))])
			f.editFile(wt, files[f.r.IntN(len(files))])
			f.write(filepath.Join(wt, "tmp/"+word(f.r)+".log"), word(f.r)+"\n")
		case 2:
			p := files[f.r.IntN(len(files))]
			f.editFile(wt, p)
			f.git(wt, "commit", "-q", "-am", subject(f.r, dirScope([]string{p})))
		case 3:
			p := files[f.r.IntN(len(files))]
			f.editFile(wt, p)
			f.git(wt, "add", p)
		}
		if i == 0 {
			f.git(repo, "worktree", "lock", "--reason", "long-running integration test", wt)
		}
	}
	review := f.path("many-worktrees-wt/review")
	f.git(repo, "worktree", "add", "-q", "--detach", review, "origin/main~1")
	paths = append(paths, review)
	f.editFile(repo, m.paths()[0])
	f.publish(repo, "many-worktrees")
	steps := []step{{toolCall{"worktree.list", map[string]any{"repoPath": repo}},
		[]rawCmd{{dir: repo, argv: []string{"git", "worktree", "list"}}}}}
	for _, p := range paths {
		steps = append(steps, expert{repo: p, cwd: repo}.status())
	}
	return built{repos: paths, steps: steps}
}

// fleetStates are the situations spread over the 20 repositories.
var fleetStates = []string{"clean", "dirty", "ahead", "behind", "diverged", "clean", "dirty", "conflict-ahead",
	"no-upstream", "clean", "merge-conflict", "behind", "clean", "dirty", "ahead", "clean", "stash", "diverged", "clean", "dirty"}

func buildFleet(f *fixture, sz sizes) built {
	var repos []string
	var dirty []string
	for i, state := range fleetStates {
		name := fmt.Sprintf("repo-%02d", i+1)
		m := newModel(f.r, goPaths(f.r, sz.fleetFiles))
		ps := m.paths()
		if state == "no-upstream" {
			repo := f.path("fleet/" + name)
			f.git(f.base, "init", "-q", repo)
			s := newStream(sz.fleetCommits)
			s.commit("refs/heads/main", "", "chore: initial import", m, nil)
			linear(f.r, s, "refs/heads/main", m, sz.fleetCommits-1, nil, dirScope)
			f.importStream(repo, s)
			f.git(repo, "reset", "-q", "--hard")
			f.editFile(repo, ps[0])
			f.git(repo, "commit", "-q", "-am", subject(f.r, dirScope(ps[:1])))
			repos = append(repos, repo)
			continue
		}
		up := f.bare(name)
		s := newStream(sz.fleetCommits + 4)
		s.commit("refs/heads/main", "", "chore: initial import", m, nil)
		linear(f.r, s, "refs/heads/main", m, sz.fleetCommits-1, nil, dirScope)
		f.importStream(up, s)
		repo := f.clone(up, "fleet/"+name)
		hot := ps[len(ps)/2]
		switch state {
		case "behind", "diverged", "conflict-ahead", "merge-conflict":
			s2 := newStream(2)
			s2.when = f.clock - 2*3600
			if state == "conflict-ahead" || state == "merge-conflict" {
				m.setLine(hot, 2, "\t// upstream: "+codeLine(f.r)[1:])
				s2.commit("refs/heads/main", "refs/heads/main^0", subject(f.r, dirScope([]string{hot})), m, []string{hot})
			} else {
				changed := m.mutate(f.r, 1, func(p string) bool { return p != hot })
				s2.commit("refs/heads/main", "refs/heads/main^0", subject(f.r, dirScope(changed)), m, changed)
			}
			f.importStream(up, s2)
			f.git(repo, "fetch", "-q", "origin")
		}
		switch state {
		case "dirty":
			f.editFile(repo, ps[f.r.IntN(len(ps))])
			f.write(filepath.Join(repo, word(f.r)+".tmp"), word(f.r)+"\n")
			dirty = append(dirty, repo)
		case "ahead", "diverged":
			f.editFile(repo, hot)
			f.git(repo, "commit", "-q", "-am", subject(f.r, dirScope([]string{hot})))
		case "conflict-ahead", "merge-conflict":
			setFileLine(f, repo, hot, 2, "\t// local: "+codeLine(f.r)[1:])
			f.git(repo, "commit", "-q", "-am", subject(f.r, dirScope([]string{hot})))
			if state == "merge-conflict" {
				f.gitCode(repo, 1, nil, "merge", "--no-edit", "origin/main")
				dirty = append(dirty, repo)
			}
		case "stash":
			f.editFile(repo, ps[0])
			f.git(repo, "stash", "push", "-q", "-m", "wip: "+word(f.r))
		}
		f.publish(repo, name)
		repos = append(repos, repo)
	}
	since := int64(activityEpoch) * 1000
	var radar, digest []rawCmd
	for _, r := range repos {
		e := expert{repo: r, cwd: f.base}
		radar = append(radar, e.statusSB())
		digest = append(digest, e.git(false, "reflog", "-n", "10", "--date=iso"))
	}
	steps := []step{
		{toolCall{"fleet.radar", map[string]any{"repoPaths": repos}}, radar},
		{toolCall{"fleet.digest", map[string]any{"repoPaths": repos, "sinceMs": since}}, digest},
	}
	for _, r := range dirty {
		steps = append(steps, expert{repo: r, cwd: f.base}.status())
	}
	return built{repos: repos, steps: steps}
}

// The outside check's deep conflict: line conflictLine (1-based) of a file
// of bigLines lines. Both modes use these sizes; they are the acceptance
// fixture's.
const (
	bigLines     = 4000
	conflictLine = 2500
)

func buildOutsideCheck(f *fixture, sz sizes) built {
	up := f.bare(outsideCheck)
	m := newModel(f.r, goPaths(f.r, 30))
	big := "internal/store/ledger_journal.go"
	lines := make([]string, bigLines)
	lines[0] = "package store"
	for i := 1; i < bigLines; i++ {
		lines[i] = codeLine(f.r)
	}
	m.files[big] = lines
	notBig := func(p string) bool { return p != big }
	s := newStream(40)
	s.commit("refs/heads/main", "", "chore: initial import", m, nil)
	mark := 0
	for i := 1; i <= 20; i++ {
		mark = linear(f.r, s, "refs/heads/main", m, 1, notBig, dirScope)
		if i%2 == 0 {
			s.ref(fmt.Sprintf("refs/tags/v1.%d.0", i/2-1), mark) // 10 tags
		}
	}
	// release/1.9 rewrites line 2,500 of the big file and one other file.
	rel := m.clone()
	s.ref("refs/heads/release/1.9", mark)
	theirs := "\t// release: " + codeLine(f.r)[1:]
	rel.setLine(big, conflictLine-1, theirs)
	s.commit("refs/heads/release/1.9", "", subject(f.r, "store"), rel, []string{big})
	linear(f.r, s, "refs/heads/release/1.9", rel, 1, notBig, dirScope)
	f.importStream(up, s)
	repo := f.clone(up, outsideCheck)

	paths := m.paths()
	var others []string
	for _, p := range paths {
		if p != big {
			others = append(others, p)
		}
	}
	// A stash, then two local commits (ahead of origin/main by 2), the
	// first rewriting line 2,500 the other way.
	f.editFile(repo, others[0])
	f.git(repo, "stash", "push", "-q", "-m", "wip: "+word(f.r)+" "+word(f.r))
	ours := "\t// main: " + codeLine(f.r)[1:]
	setFileLine(f, repo, big, conflictLine-1, ours)
	f.git(repo, "commit", "-q", "-am", subject(f.r, "store"))
	f.editFile(repo, others[1])
	f.git(repo, "commit", "-q", "-am", subject(f.r, dirScope(others[1:2])))
	f.gitCode(repo, 1, nil, "merge", "--no-edit", "origin/release/1.9")
	// During the merge: two modified files, one staged edit, two untracked.
	f.editFile(repo, others[2])
	f.editFile(repo, others[3])
	f.editFile(repo, others[4])
	f.git(repo, "add", others[4])
	f.write(filepath.Join(repo, "internal/store/ledger_journal_test.go"), "package store\n\n"+codeLine(f.r)+"\n")
	f.write(filepath.Join(repo, "notes.md"), "# merge notes\n- keep the "+word(f.r)+" line\n")
	f.publish(repo, outsideCheck)
	e := expert{repo: repo}
	return built{
		repos: []string{repo},
		steps: []step{e.brief(), e.status(), e.history(), e.refs(), e.diff(), e.show("HEAD"), e.changes(), e.conflict(f.conflicted(repo))},
		sides: []string{strings.TrimPrefix(ours, "\t"), strings.TrimPrefix(theirs, "\t")},
	}
}

// tag writes an annotated tag of mark, tagged when its commit was made.
func (s *stream) tag(name string, mark int, msg string) {
	fmt.Fprintf(&s.b, "tag %s\nfrom :%d\ntagger Dana Developer <dana@example.com> %d +0000\ndata %d\n%s\n",
		name, mark, s.when, len(msg), msg)
}

// tagCount is the number of release tags of tags-1000, in both modes.
const tagCount = 1000

func buildTags(f *fixture, sz sizes) built {
	up := f.bare("tags-1000")
	m := newModel(f.r, goPaths(f.r, sz.files))
	s := newStream(tagCount + 8)
	s.commit("refs/heads/main", "", "chore: initial import", m, nil)
	mark := 0
	for i := 0; i < tagCount; i++ {
		mark = linear(f.r, s, "refs/heads/main", m, 1, nil, dirScope)
		v := fmt.Sprintf("v%d.%d.%d", 1+i/100, (i/10)%10, i%10)
		s.tag(v, mark, "release "+v)
		if i == tagCount-50 {
			s.ref("refs/heads/release/10.x", mark)
		}
	}
	dev := m.clone()
	s.ref("refs/heads/develop", mark)
	linear(f.r, s, "refs/heads/develop", dev, 3, nil, dirScope)
	f.importStream(up, s)
	repo := f.clone(up, "tags-1000")
	f.publish(repo, "tags-1000")
	e := expert{repo: repo, noStash: true, clean: true}
	// With 1,000 tags an expert does not read them all: the newest 20 and
	// a count, so the raw side is not inflated by a list nobody reads.
	refs := step{e.call("repo.refs"), []rawCmd{
		e.git(false, "branch", "-a"),
		{dir: repo, argv: []string{"sh", "-c", "git tag --sort=-creatordate | head -n 20"}},
		{dir: repo, argv: []string{"sh", "-c", "git tag | wc -l"}},
		e.stashList(),
	}}
	return built{repos: []string{repo}, steps: []step{e.brief(), refs, e.history()}}
}

// dirtyPaths is the number of changed paths of dirty-300, in both modes.
const dirtyPaths = 300

func buildDirty(f *fixture, sz sizes) built {
	up := f.bare("dirty-300")
	m := newModel(f.r, goPaths(f.r, sz.dirtyFiles))
	s := newStream(sz.commits + 4)
	s.commit("refs/heads/main", "", "chore: initial import", m, nil)
	linear(f.r, s, "refs/heads/main", m, sz.commits-1, nil, dirScope)
	f.importStream(up, s)
	repo := f.clone(up, "dirty-300")
	ps := m.paths()
	order := f.r.Perm(len(ps))
	untracked := dirtyPaths / 8
	staged := dirtyPaths / 8
	var add []string
	for k, i := range order[:dirtyPaths-untracked] {
		f.editFile(repo, ps[i])
		if k < staged {
			add = append(add, ps[i])
		}
	}
	f.git(repo, append([]string{"add", "--"}, add...)...)
	known := map[string]bool{}
	for _, p := range ps {
		known[p] = true
	}
	// Untracked files beside tracked ones, so git lists each path rather
	// than one directory.
	for n := 0; n < untracked; {
		p := goPaths(f.r, 1)[0]
		if known[p] {
			continue
		}
		known[p] = true
		f.write(filepath.Join(repo, filepath.FromSlash(p)), "package draft\n\n"+codeLine(f.r)+"\n")
		n++
	}
	f.publish(repo, "dirty-300")
	e := expert{repo: repo, noStash: true}
	return built{repos: []string{repo}, steps: []step{e.brief(), e.status(), e.changes(), e.diffStat()}}
}
