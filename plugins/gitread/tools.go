package gitread

// tools is the dispatch table: every git-read tool is one line, the name
// its spec file (spec/tools/NAME.yaml) declares and the function serving
// it, wrapped by how it answers: read (local git data, retried when the
// repository moved under git), fluxGit (gated on a configured approval
// gateway, then read locally) or semanticTool (the diff.semantic pair,
// which builds its own results). A name listed twice does not compile;
// tests/parity_test.go checks the table against the spec.
var tools = map[string]toolFunc{
	// Repository reads.
	"repo.status":            read((*Provider).repoStatus),
	"repo.refs":              read((*Provider).repoRefs),
	"repo.history":           read((*Provider).repoHistory),
	"repo.reflog":            read((*Provider).repoReflog),
	"repo.scope":             read((*Provider).repoScope),
	"repo.brief":             read((*Provider).repoBrief),
	"repo.branchStack":       read((*Provider).branchStack),
	"repo.conflictPreflight": read((*Provider).conflictPreflight),
	"commit.details":         read((*Provider).commitDetails),
	"history.search":         read((*Provider).historySearch),
	"diff.text":              read((*Provider).diffText),
	"file.read":              read((*Provider).fileRead),
	"file.blame":             read((*Provider).fileBlame),
	"conflict.read":          read((*Provider).conflictRead),
	"worktree.changes":       read((*Provider).worktreeChanges),
	"worktree.list":          read((*Provider).worktreeList),
	"submodule.status":       read((*Provider).submoduleStatus),

	// Fleet: many repositories at once, from the run-dir registry.
	"fleet.radar":  read((*Provider).fleetRadar),
	"fleet.digest": read((*Provider).fleetDigest),

	// Restore points and the safety timeline, over restore records.
	"flux.latestRestorePoint":  fluxGit((*Provider).fluxLatestRestorePoint),
	"flux.restorePoints":       fluxGit((*Provider).fluxRestorePoints),
	"flux.restorePointDetails": fluxGit((*Provider).fluxRestorePointDetails),
	"safety.timeline":          fluxGit((*Provider).safetyTimeline),
	"safety.eventDetails":      fluxGit((*Provider).safetyEventDetails),

	// Semantic diff over the gateway's HTTP API, with a local fallback.
	"diff.semantic":          semanticTool(func(o *semanticOutcome) any { return o.semantic() }),
	"diff.semanticFallbacks": semanticTool(func(o *semanticOutcome) any { return o.fallbacks() }),
}
