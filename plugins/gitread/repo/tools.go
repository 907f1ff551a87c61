package repo

// tools is this package's slice of the git-read dispatch table: every
// repository read is one line, the name its spec file
// (spec/tools/NAME.yaml) declares and the method serving it, wrapped by
// read (local git data, retried when the repository moved under git). The
// other families (plugins/gitread/fleet, restore, semantic) keep their own
// slices; plugins/gitread joins them. A name listed twice in one slice
// does not compile, across slices plugins/gitread refuses it at init;
// tests/parity_test.go checks the joined table against the spec.
var tools = map[string]ToolFunc{
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
}

// Tools returns a copy of the repository reads' slice of the table.
func Tools() map[string]ToolFunc {
	out := make(map[string]ToolFunc, len(tools))
	for n, fn := range tools {
		out[n] = fn
	}
	return out
}
