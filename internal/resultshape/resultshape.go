// Package resultshape is the one place that decides which result shape
// fluxgit sends: lean (the default, CONTRACT §3) or the reference's full
// shapes. The host and every provider read the switch through Lean, so the
// two sides can never disagree (providers inherit the host's environment).
package resultshape

import (
	"os"
	"strings"
)

// Env names the switch: "reference" selects the reference's full shapes;
// unset, empty, "lean" or any other value selects the lean shape.
const Env = "FLUXGIT_MCP_RESULT_SHAPE"

// Lean reports whether results take the lean shape. Only the exact value
// "reference" (surrounding spaces ignored) turns it off; an unknown value
// falls back to lean, and the host warns about it at start.
func Lean() bool {
	v := strings.TrimSpace(os.Getenv(Env))
	return v != "reference"
}
