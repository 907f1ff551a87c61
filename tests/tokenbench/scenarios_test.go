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
}

var (
	fastSizes = sizes{files: 30, commits: 25, dirty: 1, monoFiles: 240, monoCommits: 60, worktrees: 5, wtFiles: 20, wtCommits: 15, fleetFiles: 8, fleetCommits: 6}
	fullSizes = sizes{files: 600, commits: 1500, dirty: 6, monoFiles: 4000, monoCommits: 3000, worktrees: 24, wtFiles: 150, wtCommits: 400, fleetFiles: 60, fleetCommits: 150}
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

// built is what a scenario builder returns.
type built struct {
	repos []string // repositories and work trees listed in fixture.txt
	raw   []rawCmd
	calls []toolCall
}

// scenario is one situation an agent meets, generated from its seed.
type scenario struct {
	name  string
	seed  uint64
	about string // what the agent wants to know; shown in results.json
	build func(f *fixture, sz sizes) built
}

var scenarios = []scenario{
	{"fresh-clone", 101, "orient in a repository just cloned: clean, up to date, a few tags and branches", buildFreshClone},
	{"busy-worktree", 102, "orient in a clone with staged, unstaged and untracked changes, two stashes, local and upstream commits", buildBusy},
	{"merge-conflict", 103, "orient in a merge stopped on conflicts and read the conflicts", buildMergeConflict},
	{"monorepo-subtree", 104, "orient in a monorepo and read the recent history of the subtree being worked on", buildMonorepo},
	{"many-worktrees", 105, "list every work tree of a repository and what each has in progress", buildWorktrees},
	{"detached-rebase", 106, "orient on a detached HEAD in a rebase stopped on a conflict and read the conflict", buildRebase},
	{"fleet-20", 107, "find which of 20 repositories need attention and what happened in them since the session began", buildFleet},
}

// orientation is what an agent runs to get its bearings in one repository.
// stashEmpty, diffEmpty and revListExit say what this fixture produces.
func orientation(repo string, stashEmpty, diffEmpty bool, revListExit int) []rawCmd {
	return []rawCmd{
		{dir: repo, argv: []string{"git", "status"}},
		{dir: repo, argv: []string{"git", "branch", "-vv"}},
		{dir: repo, argv: []string{"git", "log", "--oneline", "-n", "10"}},
		{dir: repo, argv: []string{"git", "stash", "list"}, empty: stashEmpty},
		{dir: repo, argv: []string{"git", "remote", "-v"}},
		{dir: repo, argv: []string{"git", "rev-list", "--left-right", "--count", "HEAD...@{u}"}, exit: revListExit},
		{dir: repo, argv: []string{"git", "diff", "--stat"}, empty: diffEmpty},
	}
}

func brief(repo string) toolCall {
	return toolCall{"repo.brief", map[string]any{"repoPath": repo}}
}

func status(repo string) toolCall {
	return toolCall{"repo.status", map[string]any{"repoPath": repo}}
}

func diffStat(repo string) toolCall {
	return toolCall{"diff.text", map[string]any{"repoPath": repo, "mode": "stat"}}
}

func branchesAndStashes(repo string) toolCall {
	return toolCall{"repo.refs", map[string]any{"repoPath": repo, "kinds": []string{"branches", "stashes"}}}
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
	return built{
		repos: []string{repo},
		raw:   orientation(repo, true, true, 0),
		calls: []toolCall{brief(repo)},
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
	return built{
		repos: []string{repo},
		raw:   orientation(repo, false, false, 0),
		calls: []toolCall{brief(repo), status(repo), diffStat(repo), branchesAndStashes(repo)},
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
	raw := append(orientation(repo, true, false, 0), rawCmd{dir: repo, argv: []string{"git", "diff"}})
	return built{
		repos: []string{repo},
		raw:   raw,
		calls: []toolCall{brief(repo), status(repo), {"conflict.read", map[string]any{"repoPath": repo}}},
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
	raw := append(orientation(repo, true, false, 128), rawCmd{dir: repo, argv: []string{"git", "diff"}})
	return built{
		repos: []string{repo},
		raw:   raw,
		calls: []toolCall{brief(repo), status(repo), {"conflict.read", map[string]any{"repoPath": repo}}},
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
	raw := append(orientation(repo, true, false, 0),
		rawCmd{dir: repo, argv: []string{"git", "log", "--oneline", "-n", "10", "--", "services/billing"}})
	return built{
		repos: []string{repo},
		raw:   raw,
		calls: []toolCall{brief(repo), status(repo), diffStat(repo),
			{"repo.history", map[string]any{"repoPath": repo, "paths": []string{"services/billing"}, "limit": 10}}},
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
	raw := []rawCmd{{dir: repo, argv: []string{"git", "worktree", "list"}}}
	calls := []toolCall{{"worktree.list", map[string]any{"repoPath": repo}}}
	for _, p := range paths {
		raw = append(raw, rawCmd{dir: repo, argv: []string{"git", "-C", p, "status", "--short", "--branch"}})
		calls = append(calls, status(p))
	}
	return built{repos: paths, raw: raw, calls: calls}
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
	var raw []rawCmd
	for _, r := range repos {
		raw = append(raw, rawCmd{dir: f.base, argv: []string{"git", "-C", r, "status", "--short", "--branch"}})
		raw = append(raw, rawCmd{dir: f.base, argv: []string{"git", "-C", r, "reflog", "-n", "10", "--date=iso"}})
	}
	calls := []toolCall{
		{"fleet.radar", map[string]any{"repoPaths": repos}},
		{"fleet.digest", map[string]any{"repoPaths": repos, "sinceMs": since}},
	}
	for _, r := range dirty {
		calls = append(calls, status(r))
	}
	return built{repos: repos, raw: raw, calls: calls}
}
