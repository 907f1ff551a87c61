package tokenbench

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// historyEpoch is when every generated history starts (2024-03-01 00:00 UTC).
// Dates are fixed so that object ids, reflog times and every tool output that
// prints a time are the same on every run.
const historyEpoch = 1709251200

// activityEpoch is when the scenario's own git commands start (the clock then
// advances a minute per command); fleet.digest is asked for events since
// then, so it sees the recent activity and not the imported history.
const activityEpoch = historyEpoch + 400*86400

// placeholderRoot replaces the real temporary directory in every saved output.
const placeholderRoot = "/home/dev/src"

// fixture builds one scenario's repositories under base, which stands for
// placeholderRoot in every saved output.
type fixture struct {
	t     testing.TB
	base  string
	home  string
	clock int64
	r     *rand.Rand
}

func newFixture(t testing.TB, base string, seed uint64) *fixture {
	t.Helper()
	home := filepath.Join(filepath.Dir(base), "home-"+filepath.Base(base))
	for _, d := range []string{base, home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(home, ".gitconfig"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, base: base, home: home, clock: activityEpoch, r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

// gitEnv is the environment of every git run, fixture building and raw
// commands alike: no system or user configuration, fixed identity, fixed
// dates, C locale, UTC and no pager.
func (f *fixture) gitEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "GIT_") || strings.HasPrefix(k, "FLUXGIT_") || strings.HasPrefix(k, "LC_") ||
			k == "LANG" || k == "HOME" || k == "TZ" || k == "XDG_CONFIG_HOME" || k == "EMAIL" || k == "PAGER" ||
			k == "COLUMNS" { // git diff --stat sizes its graph to COLUMNS
			continue
		}
		env = append(env, kv)
	}
	date := fmt.Sprintf("@%d +0000", f.clock)
	return append(env,
		"HOME="+f.home, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+filepath.Join(f.home, ".gitconfig"),
		"LANG=C", "LC_ALL=C", "TZ=UTC", "GIT_PAGER=cat", "PAGER=cat", "GIT_TERMINAL_PROMPT=0",
		"GIT_AUTHOR_NAME=Dana Developer", "GIT_AUTHOR_EMAIL=dana@example.com",
		"GIT_COMMITTER_NAME=Dana Developer", "GIT_COMMITTER_EMAIL=dana@example.com",
		"GIT_AUTHOR_DATE="+date, "GIT_COMMITTER_DATE="+date)
}

// gitCode runs git in dir, advancing the clock, and fails unless it exits
// with code.
func (f *fixture) gitCode(dir string, code int, stdin []byte, args ...string) string {
	f.t.Helper()
	f.clock += 60
	cmd := exec.Command("git", append([]string{"-c", "init.defaultBranch=main", "-c", "advice.detachedHead=false"}, args...)...)
	cmd.Dir = dir
	cmd.Env = f.gitEnv()
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	got := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		got = ee.ExitCode()
	} else if err != nil {
		f.t.Fatalf("git %v in %s: %v", args, dir, err)
	}
	if got != code {
		f.t.Fatalf("git %v in %s: exit %d, want %d\n%s", args, dir, got, code, out.String())
	}
	return out.String()
}

func (f *fixture) git(dir string, args ...string) string {
	f.t.Helper()
	return f.gitCode(dir, 0, nil, args...)
}

func (f *fixture) path(rel string) string { return filepath.Join(f.base, filepath.FromSlash(rel)) }

func (f *fixture) write(path, content string) {
	f.t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

// editFile rewrites one line of a work-tree file (or appends one) so that
// git sees a small, realistic change.
func (f *fixture) editFile(repo, rel string) {
	f.t.Helper()
	p := filepath.Join(repo, filepath.FromSlash(rel))
	b, err := os.ReadFile(p)
	if err != nil {
		f.t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	i := f.r.IntN(len(lines))
	lines[i] = codeLine(f.r)
	if f.r.IntN(2) == 0 {
		lines = append(lines, codeLine(f.r))
	}
	f.write(p, strings.Join(lines, "\n")+"\n")
}

// bare creates an empty bare repository under remotes/ and returns its path.
func (f *fixture) bare(name string) string {
	f.t.Helper()
	p := f.path("remotes/" + name + ".git")
	if err := os.MkdirAll(p, 0o755); err != nil {
		f.t.Fatal(err)
	}
	f.git(p, "init", "-q", "--bare")
	return p
}

// clone clones upstream to rel (under base).
func (f *fixture) clone(upstream, rel string) string {
	f.t.Helper()
	dst := f.path(rel)
	f.git(f.base, "clone", "-q", upstream, dst)
	return dst
}

// publish points origin at a public-looking URL once the fixture no longer
// fetches, so git remote -v shows what it shows in a real clone.
func (f *fixture) publish(repo, name string) {
	f.t.Helper()
	f.git(repo, "remote", "set-url", "origin", "https://github.com/acme/"+name+".git")
}

var words = strings.Fields(`account audit batch buffer cache client config context cursor digest
	entry event export fetch filter graph handler index ledger limit loader merge metric node option
	parser patch policy queue reader record region report request retry router schema session shard
	signal socket source stream table tenant token tracker update upload user value window worker`)

var verbs = strings.Fields("add fix handle support drop rename simplify guard cache validate refactor document")

var kinds = []string{"feat", "fix", "refactor", "docs", "test", "chore", "perf"}

func title(w string) string { return strings.ToUpper(w[:1]) + w[1:] }

func word(r *rand.Rand) string { return words[r.IntN(len(words))] }

func codeLine(r *rand.Rand) string {
	switch r.IntN(4) {
	case 0:
		return fmt.Sprintf("\t%s := %s.%s(%d)", word(r), word(r), title(word(r)), r.IntN(1000))
	case 1:
		return fmt.Sprintf("\tif err := %sThe%s(ctx); err != nil {", word(r), title(word(r)))
	case 2:
		return fmt.Sprintf("\t// %s the %s before the %s", verbs[r.IntN(len(verbs))], word(r), word(r))
	default:
		return fmt.Sprintf("\treturn %s, nil", word(r))
	}
}

func subject(r *rand.Rand, scope string) string {
	return fmt.Sprintf("%s(%s): %s %s %s", kinds[r.IntN(len(kinds))], scope, verbs[r.IntN(len(verbs))], word(r), word(r))
}

// model is the content of a branch while its history is generated.
type model struct {
	files map[string][]string
}

func newModel(r *rand.Rand, paths []string) *model {
	m := &model{files: map[string][]string{}}
	for _, p := range paths {
		n := 6 + r.IntN(20)
		lines := make([]string, n)
		lines[0] = "package " + strings.ReplaceAll(filepath.Base(filepath.Dir(p)), "-", "")
		for i := 1; i < n; i++ {
			lines[i] = codeLine(r)
		}
		m.files[p] = lines
	}
	return m
}

func (m *model) clone() *model {
	c := &model{files: map[string][]string{}}
	for p, l := range m.files {
		c.files[p] = append([]string(nil), l...)
	}
	return c
}

func (m *model) paths() []string {
	ps := make([]string, 0, len(m.files))
	for p := range m.files {
		ps = append(ps, p)
	}
	sort.Strings(ps)
	return ps
}

// mutate changes a line in k random files (among those for which keep
// returns true, all when keep is nil) and returns the changed paths.
func (m *model) mutate(r *rand.Rand, k int, keep func(string) bool) []string {
	var cand []string
	for _, p := range m.paths() {
		if keep == nil || keep(p) {
			cand = append(cand, p)
		}
	}
	var changed []string
	for i := 0; i < k && len(cand) > 0; i++ {
		j := r.IntN(len(cand))
		p := cand[j]
		cand = append(cand[:j], cand[j+1:]...)
		lines := m.files[p]
		lines[1+r.IntN(len(lines)-1)] = codeLine(r)
		if r.IntN(3) == 0 {
			lines = append(lines, codeLine(r))
		}
		m.files[p] = lines
		changed = append(changed, p)
	}
	sort.Strings(changed)
	return changed
}

// setLine sets line i of a file, for conflicts made on purpose.
func (m *model) setLine(p string, i int, s string) { m.files[p][i] = s }

func (m *model) body(p string) string { return strings.Join(m.files[p], "\n") + "\n" }

// stream writes a git fast-import stream: generating history this way takes
// milliseconds where a git commit per revision would take seconds.
type stream struct {
	b    bytes.Buffer
	mark int
	when int64
}

func newStream(commits int) *stream {
	return &stream{when: activityEpoch - int64(commits+10)*3600}
}

// commit records the given paths of m (all of them when paths is nil) on ref;
// from names the parent (":N" or "refs/heads/x^0") for the first commit of a
// ref in this stream, "" to continue the ref.
func (s *stream) commit(ref, from, msg string, m *model, paths []string) int {
	s.mark++
	s.when += 3600
	fmt.Fprintf(&s.b, "commit %s\nmark :%d\nauthor Dana Developer <dana@example.com> %d +0000\ncommitter Dana Developer <dana@example.com> %d +0000\ndata %d\n%s\n",
		ref, s.mark, s.when, s.when, len(msg), msg)
	if from != "" {
		fmt.Fprintf(&s.b, "from %s\n", from)
	}
	if paths == nil {
		paths = m.paths()
	}
	for _, p := range paths {
		body := m.body(p)
		fmt.Fprintf(&s.b, "M 100644 inline %s\ndata %d\n%s\n", p, len(body), body)
	}
	s.b.WriteString("\n")
	return s.mark
}

func (s *stream) ref(name string, mark int) {
	fmt.Fprintf(&s.b, "reset %s\nfrom :%d\n\n", name, mark)
}

func (f *fixture) importStream(repo string, s *stream) {
	f.t.Helper()
	f.gitCode(repo, 0, s.b.Bytes(), "fast-import", "--quiet")
}

// linear writes n commits on ref, each changing one to three files of m
// chosen with keep, subjects scoped by scope(paths).
func linear(r *rand.Rand, s *stream, ref string, m *model, n int, keep func(string) bool, scope func([]string) string) int {
	mark := 0
	for i := 0; i < n; i++ {
		changed := m.mutate(r, 1+r.IntN(3), keep)
		mark = s.commit(ref, "", subject(r, scope(changed)), m, changed)
	}
	return mark
}

func dirScope(paths []string) string {
	if len(paths) == 0 {
		return "core"
	}
	parts := strings.Split(paths[0], "/")
	if len(parts) >= 3 && (parts[0] == "services" || parts[0] == "libs") {
		return parts[1]
	}
	if len(parts) >= 2 {
		return parts[len(parts)-2]
	}
	return "core"
}

// goPaths lays n files out in a small Go project tree.
func goPaths(r *rand.Rand, n int) []string {
	dirs := []string{"cmd/server", "internal/api", "internal/store", "internal/auth", "internal/config", "pkg/client", "pkg/metrics", "docs"}
	seen := map[string]bool{}
	var ps []string
	for len(ps) < n {
		d := dirs[r.IntN(len(dirs))]
		p := fmt.Sprintf("%s/%s_%s.go", d, word(r), word(r))
		if d == "docs" {
			p = fmt.Sprintf("docs/%s-%s.md", word(r), word(r))
		}
		if !seen[p] {
			seen[p] = true
			ps = append(ps, p)
		}
	}
	sort.Strings(ps)
	return ps
}
