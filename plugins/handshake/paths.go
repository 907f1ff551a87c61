package handshake

import "github.com/fluxgit/fluxgit/plugins/agentdetect"

// The proposal-path helpers live in plugins/agentdetect, the detection
// library the otherAgents hint is built from; these names keep the
// handshake provider's own vocabulary.

// MaxProposalPaths caps the paths a proposal reports to the otherAgents
// hint.
const MaxProposalPaths = agentdetect.MaxProposalPaths

// PatchPaths returns the paths a patch names (agentdetect.PatchPaths).
func PatchPaths(patch string) []string { return agentdetect.PatchPaths(patch) }

// NormalizeProposalPaths makes proposal paths repository-relative
// (agentdetect.NormalizeProposalPaths).
func NormalizeProposalPaths(repoPath string, paths []string) []string {
	return agentdetect.NormalizeProposalPaths(repoPath, paths)
}

// PathsOverlap reports whether two normalised proposal paths can touch the
// same file (agentdetect.PathsOverlap).
func PathsOverlap(a, b string) bool { return agentdetect.PathsOverlap(a, b) }
