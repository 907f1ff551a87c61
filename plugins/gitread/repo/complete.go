package repo

import (
	"bytes"
	"context"
	"errors"
	"sort"
	"strings"

	"github.com/fluxgit/fluxgit/internal/gitexec"
	"github.com/fluxgit/fluxgit/plugins/sdk"
)

var _ sdk.Completer = (*Provider)(nil)

// Complete offers values for the prompt arguments the spec marks
// completable: branch names for review_branch's base, unmerged paths for
// explain_conflict's path. Both need the repository the prompt names
// (context repoPath, already canonicalised and confined by the host);
// without one there is nothing to offer.
func (p *Provider) Complete(ctx context.Context, req *sdk.CompleteRequest) (*sdk.Completion, error) {
	var list func(ctx context.Context, r *Repo) ([]string, error)
	switch {
	case req.Prompt == "review_branch" && req.Argument == "base":
		list = p.branchNames
	case req.Prompt == "explain_conflict" && req.Argument == "path":
		list = p.unmergedPaths
	default:
		return nil, sdk.NotFound("nothing to complete", "git-read completes review_branch's base and explain_conflict's path")
	}
	repoPath := req.Context["repoPath"]
	if repoPath == "" {
		return &sdk.Completion{}, nil
	}
	ctx, pins := gitexec.WithPins(ctx)
	defer pins.Close()
	r, err := p.open(ctx, &sdk.Call{Meta: req.Meta}, repoPath)
	if err != nil {
		var refusal *sdk.Error
		if errors.As(err, &refusal) {
			return nil, err // outside the roots: say so
		}
		return &sdk.Completion{}, nil // not a repository: nothing to offer
	}
	all, err := list(ctx, r)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, v := range all {
		if strings.HasPrefix(v, req.Value) {
			out = append(out, v)
		}
	}
	sort.Strings(out)
	return &sdk.Completion{Values: out, Total: len(out)}, nil
}

// branchNames lists local branches, then remote-tracking ones, skipping
// symbolic refs such as origin/HEAD.
func (p *Provider) branchNames(ctx context.Context, r *Repo) ([]string, error) {
	var names []string
	err := p.stream(ctx, r, '\n', func(line []byte) error {
		name, symref, _ := bytes.Cut(line, []byte{0})
		if len(symref) > 0 {
			return nil
		}
		n := string(name)
		if short, ok := strings.CutPrefix(n, "refs/heads/"); ok {
			names = append(names, short)
		} else if short, ok := strings.CutPrefix(n, "refs/remotes/"); ok {
			names = append(names, short)
		}
		return nil
	}, "for-each-ref", "--format=%(refname)%00%(symref)", "refs/heads", "refs/remotes")
	return names, err
}

// unmergedPaths lists the paths with unmerged index entries, once each.
func (p *Provider) unmergedPaths(ctx context.Context, r *Repo) ([]string, error) {
	seen := map[string]bool{}
	var paths []string
	err := p.stream(ctx, r, 0, func(entry []byte) error {
		_, path, ok := bytes.Cut(entry, []byte{'\t'})
		if ok && !seen[string(path)] {
			seen[string(path)] = true
			paths = append(paths, string(path))
		}
		return nil
	}, "ls-files", "-u", "-z")
	return paths, err
}
