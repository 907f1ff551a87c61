// Package fleet serves git-read's fleet tools (fleet.radar, fleet.digest):
// many repositories at once, named by the FluxGit run directory's
// repository registry (internal/rundir) and read with the core of
// plugins/gitread/repo.
package fleet

import "github.com/fluxgit/fluxgit/plugins/gitread/repo"

// tools is the fleet family's slice of the git-read dispatch table (see
// plugins/gitread/repo/tools.go for how a line reads).
var tools = map[string]repo.ToolFunc{
	"fleet.radar":  repo.Read(fleetRadar),
	"fleet.digest": repo.Read(fleetDigest),
}

// fleetWorkers bounds how many repositories a fleet tool reads at once.
const fleetWorkers = 4

// Tools returns a copy of the fleet family's slice of the table.
func Tools() map[string]repo.ToolFunc {
	out := make(map[string]repo.ToolFunc, len(tools))
	for n, fn := range tools {
		out[n] = fn
	}
	return out
}
