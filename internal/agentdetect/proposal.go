package agentdetect

import (
	"path/filepath"
	"strings"

	"github.com/fluxgit/fluxgit/internal/pathwithin"
)

// Limits of the otherAgents hint.
const (
	// MaxProposalPaths caps the paths a proposal reports to the
	// otherAgents hint; a patch touching more is still submitted, the
	// hint just sees the first ones.
	MaxProposalPaths = 1000
	// MaxOverlapsPerAgent caps an agent's overlappingPaths.
	MaxOverlapsPerAgent = 20
)

// PatchPaths returns the paths a patch names, in order of appearance: the
// new side of each "diff --git a/X b/Y" header, and the paths of "+++ b/"
// and "--- a/" lines. It returns nil when the patch names none, so a
// caller can tell "unknown" from "no paths".
func PatchPaths(patch string) []string {
	var out []string
	for len(patch) > 0 {
		line := patch
		if i := strings.IndexByte(patch, '\n'); i >= 0 {
			line, patch = patch[:i], patch[i+1:]
		} else {
			patch = ""
		}
		line = strings.TrimSuffix(line, "\r")
		var p string
		switch {
		case strings.HasPrefix(line, "diff --git "):
			p = gitHeaderNewPath(line[len("diff --git "):])
		case strings.HasPrefix(line, "+++ "):
			p = sidePath(line[len("+++ "):], "b/")
		case strings.HasPrefix(line, "--- "):
			p = sidePath(line[len("--- "):], "a/")
		}
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

// gitHeaderNewPath takes the b/ side of a "diff --git" header. Paths with
// spaces are ambiguous in the unquoted form; the last " b/" is the most
// likely split, and git quotes names that need it.
func gitHeaderNewPath(rest string) string {
	if i := strings.LastIndex(rest, ` "b/`); i >= 0 {
		return strings.TrimSuffix(rest[i+len(` "b/`):], `"`)
	}
	if i := strings.LastIndex(rest, " b/"); i >= 0 {
		return rest[i+len(" b/"):]
	}
	return ""
}

// sidePath reads the path of a "+++"/"---" line with the given prefix;
// /dev/null (an added or deleted file's missing side) names nothing.
func sidePath(rest, prefix string) string {
	if i := strings.IndexByte(rest, '\t'); i >= 0 {
		rest = rest[:i] // GNU diff appends a timestamp after a tab
	}
	if strings.HasPrefix(rest, `"`+prefix) {
		return strings.TrimSuffix(rest[1+len(prefix):], `"`)
	}
	if strings.HasPrefix(rest, prefix) {
		return rest[len(prefix):]
	}
	return ""
}

// NormalizeProposalPaths makes paths repository-relative with '/'
// separators, strips leading "./" and trailing '/', turns the repository
// itself into ".", drops absolute paths outside repoPath and duplicates,
// and keeps at most MaxProposalPaths. nil stays nil (paths unknown).
func NormalizeProposalPaths(repoPath string, paths []string) []string {
	if paths == nil {
		return nil
	}
	out := make([]string, 0, min(len(paths), MaxProposalPaths))
	seen := map[string]bool{}
	for _, p := range paths {
		n, ok := normalizeProposalPath(repoPath, p)
		if !ok || seen[n] {
			continue
		}
		seen[n] = true
		out = append(out, n)
		if len(out) == MaxProposalPaths {
			break
		}
	}
	return out
}

func normalizeProposalPath(repoPath, p string) (string, bool) {
	if filepath.IsAbs(p) {
		rel, ok := pathwithin.Rel(repoPath, p)
		if !ok {
			return "", false
		}
		p = rel
	}
	p = strings.ReplaceAll(p, `\`, "/")
	for strings.HasPrefix(p, "./") {
		p = strings.TrimLeft(p[2:], "/")
	}
	p = strings.TrimRight(p, "/")
	if p == "" {
		p = "."
	}
	return p, true
}

// PathsOverlap reports whether two normalised proposal paths can touch
// the same file: one is the whole repository ("."), they are equal, or
// one is a directory holding the other.
func PathsOverlap(a, b string) bool {
	if a == "." || b == "." || a == b {
		return true
	}
	return strings.HasPrefix(a, b+"/") || strings.HasPrefix(b, a+"/")
}

// Overlap returns, for each finding, the paths where the proposal and the
// agent's files meet, as the otherAgents hint reports them in
// overlappingPaths. proposalPaths must be normalised
// (NormalizeProposalPaths); when they are nil (the operation names no
// paths fluxgit can know) every entry is nil, which the hint renders as
// null. Otherwise every entry is non-nil: the more specific path of each
// overlapping pair (the file inside a proposed directory, or the proposed
// file inside a directory the agent declared), deduplicated in the
// agent's file order, at most MaxOverlapsPerAgent.
func Overlap(findings []Finding, proposalPaths []string) [][]string {
	out := make([][]string, len(findings))
	if proposalPaths == nil {
		return out
	}
	for i, f := range findings {
		hits := []string{}
		seen := map[string]bool{}
	files:
		for _, file := range f.Files {
			for _, p := range proposalPaths {
				if !PathsOverlap(file, p) {
					continue
				}
				hit := file
				if len(p) > len(file) || file == "." {
					hit = p
				}
				if !seen[hit] {
					seen[hit] = true
					hits = append(hits, hit)
					if len(hits) == MaxOverlapsPerAgent {
						break files
					}
				}
			}
		}
		out[i] = hits
	}
	return out
}
