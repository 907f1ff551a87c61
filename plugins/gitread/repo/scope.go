package repo

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/fluxgit/fluxgit/plugins/sdk"
)

// Bounds of repo.scope.
const (
	maxScopeEntries = 20
	maxCodeowners   = 256 << 10
	maxOwners       = 50
	maxSubject      = 200
)

var codeownersFiles = []string{".github/CODEOWNERS", "CODEOWNERS", "docs/CODEOWNERS"}

type scopeArgs struct {
	RepoPath      string       `json:"repoPath"`
	RepoID        string       `json:"repoId"`
	Path          *string      `json:"path"`
	RecentCommits *json.Number `json:"recentCommits"`
	ChurnDays     *json.Number `json:"churnDays"`
}

// shortCommit is a commit in brief form.
type shortCommit struct {
	Sha     string `json:"sha"`
	Subject string `json:"subject"`
}

// scopeData is the repo.scope payload.
type scopeData struct {
	Scope       string `json:"scope"`
	WorkingTree struct {
		Changed   int64         `json:"changed"`
		Entries   []statusEntry `json:"entries"`
		Truncated bool          `json:"truncated"`
	} `json:"workingTree"`
	RecentCommits []shortCommit `json:"recentCommits"`
	Churn         struct {
		Days    int64 `json:"days"`
		Commits int64 `json:"commits"`
		Authors int64 `json:"authors"`
	} `json:"churn"`
	Owners *scopeOwners `json:"owners"`
	Hints  []string     `json:"hints"`
}

// scopeOwners is the CODEOWNERS answer for the scope.
type scopeOwners struct {
	Source         string   `json:"source"`
	MatchedPattern *string  `json:"matchedPattern"`
	Owners         []string `json:"owners"`
	Matching       string   `json:"matching"`
	// Truncated: the file was larger than the read cap (only its start was
	// used) or the owner list was cut.
	Truncated bool `json:"truncated"`
}

func (p *Provider) repoScope(ctx context.Context, call *sdk.Call) (any, error) {
	var a scopeArgs
	if err := decode(call, &a); err != nil {
		return nil, err
	}
	raw := ""
	if a.Path != nil {
		raw = strings.TrimSpace(*a.Path)
	}
	if raw == "" {
		return nil, invalid("arguments.path is required: name a directory or file relative to the repository top level, e.g. src/api")
	}
	scope, err := checkRepoRelative("path", raw)
	if err != nil {
		return nil, err
	}
	scope = strings.Trim(scope, "/")
	if scope == "" {
		scope = "."
	}
	nCommits, err := intArg("recentCommits", a.RecentCommits, 10, 1, 20)
	if err != nil {
		return nil, err
	}
	days, err := intArg("churnDays", a.ChurnDays, 90, 1, 365)
	if err != nil {
		return nil, err
	}
	r, err := p.open(ctx, call, a.RepoPath)
	if err != nil {
		return nil, err
	}

	d := &scopeData{Scope: scope, RecentCommits: []shortCommit{}, Hints: []string{}}
	d.WorkingTree.Entries = []statusEntry{}
	d.Churn.Days = days
	var head *statusHead
	var logErr, churnErr error
	authors := map[string]bool{}
	err = parallel(
		func() (err error) {
			head, err = p.scanStatus(ctx, call, r, false, scope, func(e statusEntry) {
				d.WorkingTree.Changed++
				if len(d.WorkingTree.Entries) < maxScopeEntries {
					d.WorkingTree.Entries = append(d.WorkingTree.Entries, e)
				} else {
					d.WorkingTree.Truncated = true
				}
			})
			return err
		},
		func() error {
			d.RecentCommits, logErr = p.shortLog(ctx, r, int(nCommits), maxSubject, scope)
			return nil
		},
		func() error {
			churnErr = p.stream(ctx, r, 0, func(f []byte) error {
				f = bytes.TrimPrefix(f, []byte{'\n'})
				d.Churn.Commits++
				if len(authors) < 10000 {
					authors[string(f)] = true
				}
				return nil
			}, "log", "-z", "--since="+strconv.FormatInt(days, 10)+".days", "--format=%an", "HEAD", "--", scope)
			return nil
		},
		func() error { d.Owners = readCodeowners(r, scope); return nil },
	)
	if err != nil {
		return nil, err
	}
	if head.OID != nil { // with no commits the logs fail, and that is fine
		if logErr != nil {
			return nil, logErr
		}
		if churnErr != nil {
			return nil, churnErr
		}
	} else {
		d.RecentCommits, d.Churn.Commits = []shortCommit{}, 0
		clear(authors)
	}
	d.Churn.Authors = int64(len(authors))

	if d.WorkingTree.Changed > 0 {
		d.Hints = append(d.Hints, strconv.FormatInt(d.WorkingTree.Changed, 10)+" uncommitted change(s) under this scope; see diff.text with path="+strconv.Quote(scope)+".")
	}
	if d.Owners == nil {
		d.Hints = append(d.Hints, "No CODEOWNERS file (.github/CODEOWNERS, CODEOWNERS or docs/CODEOWNERS); ownership is unknown.")
	} else if len(d.Owners.Owners) > 0 {
		d.Hints = append(d.Hints, "Changes here are owned by "+strings.Join(d.Owners.Owners[:min(3, len(d.Owners.Owners))], ", ")+".")
	}
	if d.Churn.Commits > 0 && len(d.Hints) < 3 {
		d.Hints = append(d.Hints, strconv.FormatInt(d.Churn.Commits, 10)+" commit(s) by "+strconv.FormatInt(d.Churn.Authors, 10)+" author(s) touched this scope in the last "+strconv.FormatInt(days, 10)+" days.")
	}
	return d, nil
}

// shortLog lists up to n commits from HEAD as {sha, subject}, optionally
// limited to one pathspec.
func (p *Provider) shortLog(ctx context.Context, r *Repo, n, subjLen int, pathspec string) ([]shortCommit, error) {
	args := []string{"log", "-z", "--format=%h%x1f%s", "-n" + strconv.Itoa(n), "HEAD", "--"}
	if pathspec != "" {
		args = append(args, pathspec)
	}
	out := []shortCommit{}
	err := p.stream(ctx, r, 0, func(f []byte) error {
		sha, subj, _ := strings.Cut(strings.ToValidUTF8(string(f), "\uFFFD"), "\x1f")
		subj, _ = clip(subj, subjLen)
		out = append(out, shortCommit{Sha: sha, Subject: subj})
		return nil
	}, args...)
	return out, err
}

// readCodeowners reads the first CODEOWNERS file that exists in the work
// tree and matches scope against it. A candidate reached through a symlink
// (at any component) or that is not a regular file is ignored; the file is
// checked after it is opened (readFile), so it cannot be swapped for a
// link or a FIFO in between.
func readCodeowners(r *Repo, scope string) *scopeOwners {
	for _, name := range codeownersFiles {
		b, err := r.readFile(name, maxCodeowners)
		if err != nil {
			continue
		}
		o := &scopeOwners{Source: name, Owners: []string{}, Matching: "simplified-prefix (last match wins)"}
		if len(b) > maxCodeowners {
			b, o.Truncated = b[:maxCodeowners], true
		}
		matchOwners(o, string(b), scope)
		return o
	}
	return nil
}

// matchOwners applies the simplified CODEOWNERS rule: a pattern (leading
// and trailing '/' and a trailing /** or /* removed) matches when it is
// '*', equals the scope, or is an ancestor directory of it; the last
// matching line wins. Patterns deeper than the scope do not match.
func matchOwners(o *scopeOwners, text, scope string) {
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(strings.ToValidUTF8(line, "\uFFFD"))
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		pat := strings.Trim(fields[0], "/")
		pat = strings.TrimSuffix(strings.TrimSuffix(pat, "/**"), "/*")
		pat = strings.Trim(pat, "/")
		if !(pat == "*" || pat == "**" || pat == scope || scope == "." && pat == "" || strings.HasPrefix(scope, pat+"/")) {
			continue
		}
		mp, _ := clip(fields[0], 512)
		o.MatchedPattern = &mp
		o.Owners = []string{}
		for _, ow := range fields[1:] {
			if strings.HasPrefix(ow, "#") {
				break
			}
			if len(o.Owners) >= maxOwners {
				o.Truncated = true
				break
			}
			ow, _ = clip(ow, 256)
			o.Owners = append(o.Owners, ow)
		}
	}
}
