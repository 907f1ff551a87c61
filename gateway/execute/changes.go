package execute

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/fluxgit/fluxgit/internal/gitexec"
	"github.com/fluxgit/fluxgit/internal/operation"
)

// Bounds of what a card shows (issue 25: "bounded and expandable"). A
// section lists at most ReviewMaxCommits commits and ReviewMaxFiles files
// and says how many more there are; inline diffs stop at
// ReviewInlineFileBytes per file and ReviewInlineBytes per review; the
// rest of a file's diff is one request away (FileDiff, at most
// FileDiffMax bytes).
const (
	ReviewMaxCommits      = 20
	ReviewMaxFiles        = 50
	ReviewInlineFileBytes = 8 << 10
	ReviewInlineBytes     = 32 << 10
	FileDiffMax           = 1 << 20
)

// Fact is one labelled line of a card: the target branch, where a branch
// points, a worktree's real path.
type Fact struct {
	Label string `json:"label"`
	Value string `json:"value"`
}

// Section is one part of what an operation changes: a list of commits
// (coming in, replayed, leaving the branch, sent, overwritten on the
// remote) and/or a list of files with their diffs. Files compare From with
// To (trees or commits, diff-tree From To); a patch's files come from the
// body itself and have neither.
type Section struct {
	Title string `json:"title"`
	// Kind says what the section is, for tests and the page's styling:
	// commits-in, replayed, leaving, gaining, sent, overwritten, between,
	// committed, incoming-files, replayed-files, lost, leaving-files,
	// discarded, applied.
	Kind         string         `json:"kind"`
	Note         string         `json:"note,omitempty"`
	Commits      []ReviewCommit `json:"commits,omitempty"`
	CommitsTotal int            `json:"commitsTotal,omitempty"`
	Files        []FileChange   `json:"files,omitempty"`
	FilesTotal   int            `json:"filesTotal,omitempty"`
	Insertions   int            `json:"insertions,omitempty"`
	Deletions    int            `json:"deletions,omitempty"`
	From         string         `json:"from,omitempty"`
	To           string         `json:"to,omitempty"`
	// Repo is the repository the ids live in when it is not the
	// proposal's own (a submodule's log).
	Repo string `json:"repo,omitempty"`
}

// ReviewCommit is one commit of a section.
type ReviewCommit struct {
	Oid     string `json:"oid"`
	Subject string `json:"subject"`
	Author  string `json:"author"`
	Date    string `json:"date"` // committer date, RFC 3339
}

// FileChange is one file of a section: its status letter (A, M, D, T),
// line counts, and its diff while the inline budget lasts.
type FileChange struct {
	Path       string `json:"path"`
	Status     string `json:"status"`
	Insertions int    `json:"insertions"`
	Deletions  int    `json:"deletions"`
	Binary     bool   `json:"binary,omitempty"`
	// Diff is the file's diff, cut at ReviewInlineFileBytes; "" when the
	// review's inline budget ran out (the page fetches it on demand).
	Diff          string `json:"diff,omitempty"`
	DiffTruncated bool   `json:"diffTruncated,omitempty"`
}

// More returns how many commits and files the section does not list.
func (s Section) More() (commits, files int) {
	return max(0, s.CommitsTotal-len(s.Commits)), max(0, s.FilesTotal-len(s.Files))
}

// budget is the inline diff bytes left for one review.
type budget struct{ left int }

// emptyTree is the id of the empty tree in repo's object format.
func (e *Executor) emptyTree(ctx context.Context, repo string) string {
	// stdin is /dev/null: hashing nothing as a tree gives the empty tree.
	t, _ := e.run(ctx, repo, "hash-object", "-t", "tree", "--stdin")
	return t
}

// commits lists the commits of revs (rev-list arguments), newest first,
// at most ReviewMaxCommits, with their total.
func (e *Executor) commits(ctx context.Context, repo, title, kind string, revs ...string) Section {
	s := Section{Title: title, Kind: kind, Commits: []ReviewCommit{}}
	n, err := e.run(ctx, repo, append([]string{"rev-list", "--count"}, revs...)...)
	if err != nil {
		s.Note = "git cannot list these commits: " + details(err)
		return s
	}
	s.CommitsTotal, _ = strconv.Atoi(n)
	if s.CommitsTotal == 0 {
		return s
	}
	args := append([]string{"log", "-z", "--no-decorate", "--no-show-signature", "--format=%H%x1f%an%x1f%cI%x1f%s", "-n", strconv.Itoa(ReviewMaxCommits)}, revs...)
	out, err := e.run(ctx, repo, args...)
	if err != nil {
		s.Note = "git cannot list these commits: " + details(err)
		return s
	}
	for _, rec := range strings.Split(strings.Trim(out, "\x00\n"), "\x00") {
		f := strings.SplitN(strings.TrimLeft(rec, "\n"), "\x1f", 4)
		if len(f) == 4 {
			s.Commits = append(s.Commits, ReviewCommit{Oid: f[0], Author: f[1], Date: f[2], Subject: f[3]})
		}
	}
	return s
}

// files lists the files that differ between the trees (or commits) from
// and to, with line counts and, while bud lasts, their diffs.
func (e *Executor) files(ctx context.Context, repo, title, kind, from, to string, bud *budget) Section {
	s := Section{Title: title, Kind: kind, Files: []FileChange{}, From: from, To: to}
	if from == "" || to == "" {
		s.Note = "nothing to compare"
		return s
	}
	base := []string{"diff-tree", "-r", "--no-renames", "--no-commit-id"}
	names, err := e.run(ctx, repo, append(base, "--name-status", "-z", from, to)...)
	if err != nil {
		s.Note = "git cannot compare " + short(from) + " with " + short(to) + ": " + details(err)
		return s
	}
	nums, _ := e.run(ctx, repo, append(base, "--numstat", "-z", from, to)...)
	f := strings.Split(strings.Trim(names, "\x00"), "\x00")
	var all []FileChange
	for i := 0; i+1 < len(f); i += 2 {
		all = append(all, FileChange{Status: f[i], Path: f[i+1]})
	}
	// numstat lists the same files in the same order (same arguments).
	i := 0
	for _, rec := range strings.Split(nums, "\x00") {
		c := strings.SplitN(rec, "\t", 3)
		if len(c) < 3 || i >= len(all) {
			continue
		}
		if c[0] == "-" {
			all[i].Binary = true
		}
		all[i].Insertions, _ = strconv.Atoi(c[0])
		all[i].Deletions, _ = strconv.Atoi(c[1])
		s.Insertions += all[i].Insertions
		s.Deletions += all[i].Deletions
		i++
	}
	s.FilesTotal = len(all)
	s.Files = all[:min(len(all), ReviewMaxFiles)]
	if bud.left > 0 && len(s.Files) > 0 {
		// One git process for every listed file's diff (the writer makes
		// pathspecs literal, so a file named "*" is that file); when the whole diff
		// is over the runner's cap the files are fetched one by one on
		// demand instead.
		out, err := e.git.Run(ctx, repo, append(append(base, "-p", "--full-index", from, to, "--"), paths(s.Files)...)...)
		if err == nil {
			chunks := splitDiff(string(out))
			for i := range s.Files {
				if i >= len(chunks) || bud.left <= 0 {
					break
				}
				s.Files[i].Diff, s.Files[i].DiffTruncated = cut(chunks[i], min(ReviewInlineFileBytes, bud.left))
				bud.left -= len(s.Files[i].Diff)
			}
		}
	}
	return s
}

func paths(fs []FileChange) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.Path
	}
	return out
}

// splitDiff splits a patch into its per-file parts, in order.
func splitDiff(p string) []string {
	var out []string
	start := -1
	for i := 0; i < len(p); {
		if strings.HasPrefix(p[i:], "diff --git ") {
			if start >= 0 {
				out = append(out, p[start:i])
			}
			start = i
		}
		nl := strings.IndexByte(p[i:], '\n')
		if nl < 0 {
			break
		}
		i += nl + 1
	}
	if start >= 0 {
		out = append(out, p[start:])
	}
	return out
}

// cut shortens s to at most n bytes on a line boundary where it can (a
// character boundary at worst).
func cut(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	c := s[:n]
	if i := strings.LastIndexByte(c, '\n'); i > 0 {
		return c[:i+1], true
	}
	for len(c) > 0 && !utf8Start(c[len(c)-1]) {
		c = c[:len(c)-1]
	}
	return c, true
}

func utf8Start(b byte) bool { return b < 0x80 || b >= 0xC0 }

// FileDiff is the diff of one file of a card's section, computed again
// from the objects the review names (read-only: diff-tree compares stored
// trees and commits), at most FileDiffMax bytes.
func (e *Executor) FileDiff(ctx context.Context, repo, from, to, path string) (string, bool, error) {
	if !isOid(from) || !isOid(to) {
		return "", false, bindErr("this section has no stored trees to compare")
	}
	if path == "" || strings.ContainsRune(path, 0) {
		return "", false, bindErr("name the file whose diff to show")
	}
	out, err := e.git.Run(ctx, repo, "diff-tree", "-r", "--no-renames", "--no-commit-id", "-p", "--full-index", from, to, "--", path) // the writer makes every pathspec literal
	if errors.Is(err, gitexec.ErrOutputLimit) {
		return "", false, bindErr("the diff of %s is larger than the runner's %d-byte cap; read it with git diff %s %s -- %s", path, gitexec.MaxStdout, short(from), short(to), path)
	}
	if err != nil {
		return "", false, fmt.Errorf("diff %s: %w", path, err)
	}
	d, t := cut(string(out), FileDiffMax)
	return d, t, nil
}

// PatchFileDiff is the part of a patch about one file (for the page's
// on-demand view of a patch card), at most FileDiffMax bytes.
func PatchFileDiff(patch, path string) (string, bool, bool) {
	for _, f := range patchFiles(patch) {
		if f.Path == path {
			d, t := cut(f.Diff, FileDiffMax)
			return d, t, true
		}
	}
	return "", false, false
}

// patchFiles splits a patch body into its files (paths from the +++/---
// lines) with line counts and the whole part of each file.
func patchFiles(patch string) []FileChange {
	var out []FileChange
	chunks := splitDiff(patch)
	if len(chunks) == 0 && strings.Contains(patch, "\n+++ ") {
		chunks = []string{patch} // a plain unified diff without git headers
	}
	for _, c := range chunks {
		f := FileChange{Status: "M", Diff: c}
		var minus string
		for _, l := range strings.Split(c, "\n") {
			switch {
			case strings.HasPrefix(l, "--- "):
				minus = strings.TrimPrefix(strings.TrimPrefix(l, "--- "), "a/")
			case strings.HasPrefix(l, "+++ "):
				f.Path = strings.TrimPrefix(strings.TrimPrefix(l, "+++ "), "b/")
			case strings.HasPrefix(l, "new file mode"):
				f.Status = "A"
			case strings.HasPrefix(l, "deleted file mode"):
				f.Status = "D"
			case strings.HasPrefix(l, "+") && !strings.HasPrefix(l, "+++ "):
				f.Insertions++
			case strings.HasPrefix(l, "-") && !strings.HasPrefix(l, "--- "):
				f.Deletions++
			}
		}
		if f.Path == "/dev/null" || f.Path == "" {
			f.Path = minus
		}
		if f.Path == "" {
			if h, ok := strings.CutPrefix(strings.SplitN(c, "\n", 2)[0], "diff --git a/"); ok {
				f.Path, _, _ = strings.Cut(h, " b/")
			}
		}
		out = append(out, f)
	}
	return out
}

// patchSection is what a patch card shows: the body's own files.
func patchSection(patch string, bud *budget) Section {
	s := Section{Title: "The patch applied", Kind: "applied", Files: []FileChange{}}
	all := patchFiles(patch)
	s.FilesTotal = len(all)
	for i, f := range all {
		s.Insertions += f.Insertions
		s.Deletions += f.Deletions
		if i >= ReviewMaxFiles {
			continue
		}
		f.Diff, f.DiffTruncated = "", false
		if bud.left > 0 {
			f.Diff, f.DiffTruncated = cut(all[i].Diff, min(ReviewInlineFileBytes, bud.left))
			bud.left -= len(f.Diff)
		}
		s.Files = append(s.Files, f)
	}
	return s
}

// workTree is the tree of what a discard (paths) or a hard reset (nil:
// every tracked file) throws away from the work tree, built in a private
// index: HEAD plus the paths as the work tree has them (untracked files
// included, as `git stash push -u -- paths` takes them), or the person's
// index plus every change to a tracked file. Compared with HEAD's tree it
// is the diff the card shows; computed again at execution, a different
// tree means the work tree changed after the card was shown.
func (e *Executor) workTree(ctx context.Context, b Binding, discard []string) (string, error) {
	if discard != nil {
		p := discard
		return e.commitTree(ctx, b, &operation.Commit{Paths: &p})
	}
	dir, err := os.MkdirTemp("", "fluxgit-index-")
	if err != nil {
		return "", fmt.Errorf("private index: %w", err)
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "index")
	real, err := e.run(ctx, b.RepoPath, "rev-parse", "--path-format=absolute", "--git-path", "index")
	if err != nil {
		return "", fmt.Errorf("locate the index: %w", err)
	}
	if err := copyFile(real, file); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("copy the index: %w", err)
	}
	w := &gitexec.Writer{IndexFile: file}
	if _, err := w.Run(ctx, b.RepoPath, "add", "-u"); err != nil {
		if errors.Is(err, gitexec.ErrRepoProgram) {
			return "", bindErr("%s", details(err))
		}
		return "", bindErr("git cannot read the uncommitted changes (git add -u): %s", details(err))
	}
	out, err := w.Run(ctx, b.RepoPath, "write-tree")
	if err != nil {
		return "", bindErr("the index cannot be written as a tree (unresolved conflicts?); resolve them first: %s", details(err))
	}
	return strings.TrimSpace(string(out)), nil
}

// refAge says when a remote-tracking ref was last updated here: from its
// reflog when there is one, else from its file's time; "" when unknown.
// Nothing is fetched: the card says what this repository last saw.
func (e *Executor) refAge(ctx context.Context, b Binding, ref string) (time.Time, bool) {
	if out, err := e.run(ctx, b.RepoPath, "reflog", "show", "--date=unix", "-n", "1", "--format=%gd", ref, "--"); err == nil {
		if i := strings.LastIndex(out, "@{"); i >= 0 {
			if n, err := strconv.ParseInt(strings.TrimSuffix(out[i+2:], "}"), 10, 64); err == nil {
				return time.Unix(n, 0), true
			}
		}
	}
	for _, p := range []string{filepath.Join(b.GitDir, filepath.FromSlash(ref)), filepath.Join(b.GitDir, "packed-refs")} {
		if fi, err := os.Stat(p); err == nil {
			return fi.ModTime(), true
		}
	}
	return time.Time{}, false
}

// ago renders the time between t and now for a person ("3 days ago").
func ago(now, t time.Time) string {
	d := now.Sub(t)
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%d minute(s) ago", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%d hour(s) ago", int(d/time.Hour))
	default:
		return fmt.Sprintf("%d day(s) ago", int(d/(24*time.Hour)))
	}
}

// describeCommit is "abc123def456 subject" for a fact line.
func (e *Executor) describeCommit(ctx context.Context, repo, oid string) string {
	if oid == "" {
		return "(none)"
	}
	s, err := e.run(ctx, repo, "log", "-n", "1", "--no-decorate", "--no-show-signature", "--format=%s (%cI)", oid, "--")
	if err != nil || s == "" {
		return short(oid)
	}
	return short(oid) + " " + s
}

// mergeBaseOf is the best common ancestor of a and b, or "" when none.
func (e *Executor) mergeBaseOf(ctx context.Context, repo, a, b string) string {
	out, err := e.run(ctx, repo, "merge-base", a, b)
	if err != nil {
		return ""
	}
	return out
}

// checkWorkTree refuses a discard or hard reset whose work-tree changes
// are no longer the ones the card showed (Binding.WorkTree).
func (e *Executor) checkWorkTree(ctx context.Context, b Binding, req operation.Body) error {
	if b.WorkTree == "" {
		return nil
	}
	var discard []string
	what := "the uncommitted changes a hard reset loses"
	body := any(req)
	if p, ok := req.(*operation.Plan); ok && len(p.Steps) > 0 {
		body = p.Steps[0].Body
	}
	switch d := body.(type) {
	case *operation.Discard:
		discard, what = d.Paths, "the changes to discard"
	case *operation.DiscardStep:
		discard, what = d.Paths, "the changes to discard"
	}
	now, err := e.workTree(ctx, b, discard)
	if err != nil {
		return fmt.Errorf("not executed, nothing changed: cannot read %s again: %v", what, err)
	}
	if now == b.WorkTree {
		return nil
	}
	changed := "?"
	if out, err := e.run(ctx, b.RepoPath, "diff-tree", "-r", "--no-renames", "--name-only", "-z", b.WorkTree, now); err == nil {
		changed = strings.Join(limit(strings.Split(strings.Trim(out, "\x00"), "\x00"), 10), ", ")
	}
	return fmt.Errorf("not executed, nothing changed: %s changed after the card was shown (changed: %s; tree %s, the card showed %s); propose it again so the person sees what is lost", what, changed, short(now), short(b.WorkTree))
}

// briefNames bounds the file names a Brief section carries.
const briefNames = 5

// Brief is the bounded summary of a review that the agent's
// operation.status carries: counts and names, never diffs (an agent pays
// for every token; the person's card has the rest).
type Brief struct {
	Summary  string         `json:"summary"`
	Sections []SectionBrief `json:"sections,omitempty"`
}

// SectionBrief is one section of a Brief: its kind, its counts, and the
// first few file paths.
type SectionBrief struct {
	Kind    string   `json:"kind"`
	Commits int      `json:"commits,omitempty"`
	Files   int      `json:"files,omitempty"`
	Names   []string `json:"names,omitempty"`
}

// Brief returns r's bounded summary for the agent.
func (r Review) Brief() Brief {
	b := Brief{Summary: r.Summary}
	for _, s := range r.Sections {
		sb := SectionBrief{Kind: s.Kind, Commits: s.CommitsTotal, Files: s.FilesTotal}
		for i, f := range s.Files {
			if i == briefNames {
				break
			}
			n, _ := cut(f.Path, 200)
			sb.Names = append(sb.Names, n)
		}
		b.Sections = append(b.Sections, sb)
	}
	return b
}

// workTreeStep reports whether a plan's first step throws work-tree
// changes away: a discard (its paths) or a hard reset (nil paths).
func workTreeStep(s any) ([]string, bool) {
	switch r := s.(type) {
	case *operation.DiscardStep:
		return r.Paths, true
	case *operation.ResetStep:
		return nil, r.Mode == "hard"
	}
	return nil, false
}
