// Package restore serves git-read's restore-point and safety-timeline tools
// (flux.latestRestorePoint, flux.restorePoints, flux.restorePointDetails,
// safety.timeline, safety.eventDetails): gated on a configured approval
// gateway, then answered locally from the restore record in the FluxGit
// run directory (internal/rundir) and the HEAD reflog, with the core of
// plugins/gitread/repo.
package restore

import "github.com/fluxgit/fluxgit/plugins/gitread/repo"

// tools is the restore family's slice of the git-read dispatch table (see
// plugins/gitread/repo/tools.go for how a line reads; fluxGit gates a tool
// on the gateway, fluxutil.go).
var tools = map[string]repo.ToolFunc{
	"flux.latestRestorePoint":  fluxGit(fluxLatestRestorePoint),
	"flux.restorePoints":       fluxGit(fluxRestorePoints),
	"flux.restorePointDetails": fluxGit(fluxRestorePointDetails),
	"safety.timeline":          fluxGit(safetyTimeline),
	"safety.eventDetails":      fluxGit(safetyEventDetails),
}

// Tools returns a copy of the restore family's slice of the table.
func Tools() map[string]repo.ToolFunc {
	out := make(map[string]repo.ToolFunc, len(tools))
	for n, fn := range tools {
		out[n] = fn
	}
	return out
}
