// Package builtin lists the providers compiled into the fluxgit binary and
// served by its hidden `provider NAME` command.
package builtin

import (
	"sort"

	"github.com/fluxgit/fluxgit/plugins/gitread"
	"github.com/fluxgit/fluxgit/plugins/handshake"
	"github.com/fluxgit/fluxgit/plugins/sdk"
	"github.com/fluxgit/fluxgit/plugins/shiftroster"
)

// Factories maps a provider name to its constructor. A provider appears
// here only when its tools really work: an unfinished provider is absent.
var Factories = map[string]func() sdk.Provider{
	"git-read":     func() sdk.Provider { return gitread.New() },
	"handshake":    func() sdk.Provider { return handshake.New() },
	"shift-roster": func() sdk.Provider { return shiftroster.New() },
}

// Names returns the built-in provider names, sorted.
func Names() []string {
	names := make([]string, 0, len(Factories))
	for n := range Factories {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Planned are providers the contract names that later work will add; spec
// lint accepts them so their spec files can land before their code.
var Planned = []string{"agents-presence"}
