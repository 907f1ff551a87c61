package providers

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fluxgit/fluxgit/internal/wire"
)

// Expectation is what the spec gives one provider: the tools, resources
// (URIs and URI templates, spelt as in the spec) and prompts it must serve,
// and the optional capabilities the spec relies on. The host checks it
// against the provider's Describe at every launch, so a provider that
// lacks something fails at start with a list, not on some later call.
type Expectation struct {
	Tools     []string
	Resources []string
	Prompts   []string
	// Needs are the optional capabilities the spec relies on: resources
	// (the provider owns resources), prompts, completion.
	Needs wire.Capabilities
}

// MismatchError is a launch refused because the provider does not serve
// what the spec gives it. Every later call fails with it too.
type MismatchError struct {
	Provider string
	// Missing lists what is missing, each as "tool NAME", "resource URI",
	// "prompt NAME" or "capability NAME (implement sdk.INTERFACE)".
	Missing []string
}

func (e *MismatchError) Error() string {
	return fmt.Sprintf("provider %s does not serve what the spec gives it: missing %s; rebuild the provider so it serves them, or remove them from its spec files",
		e.Provider, strings.Join(e.Missing, ", "))
}

// check compares a description with the expectation. It returns a
// *MismatchError for anything missing, and the extras the provider
// declares that the spec does not mention (worth a warning: the spec may
// have lost a file).
func (e *Expectation) check(provider string, d *wire.Description) (extras []string, err error) {
	if e == nil {
		return nil, nil
	}
	var missing []string
	if d.Declared {
		missing = append(missing, absent("tool", e.Tools, d.Tools)...)
		missing = append(missing, absent("resource", e.Resources, d.Resources)...)
		missing = append(missing, absent("prompt", e.Prompts, d.Prompts)...)
		extras = append(extras, absent("tool", d.Tools, e.Tools)...)
		extras = append(extras, absent("resource", d.Resources, e.Resources)...)
		extras = append(extras, absent("prompt", d.Prompts, e.Prompts)...)
	}
	caps := []struct {
		need, have  bool
		name, iface string
	}{
		{e.Needs.Resources, d.Capabilities.Resources, "resources", "ResourceReader"},
		{e.Needs.Watch, d.Capabilities.Watch, "resource watch", "ResourceWatcher"},
		{e.Needs.Prompts, d.Capabilities.Prompts, "prompts", "PromptProvider"},
		{e.Needs.Completion, d.Capabilities.Completion, "completion", "Completer"},
	}
	for _, c := range caps {
		if c.need && !c.have {
			missing = append(missing, "capability "+c.name+" (implement sdk."+c.iface+")")
		}
	}
	if len(missing) > 0 {
		return extras, &MismatchError{Provider: provider, Missing: missing}
	}
	return extras, nil
}

// absent lists the members of want not in have, each prefixed with what.
func absent(what string, want, have []string) []string {
	var out []string
	for _, w := range want {
		if !slices.Contains(have, w) {
			out = append(out, what+" "+w)
		}
	}
	return out
}
