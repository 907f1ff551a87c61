// TEMPORARY: replaced by helper C2's implementation at merge.

package server

import (
	"context"
	"net/http"

	"github.com/fluxgit/fluxgit/gateway/execute"
	"github.com/fluxgit/fluxgit/gateway/journal"
)

// Lifecycle is what the person's surfaces need of the server.
type Lifecycle interface {
	Decide(ctx context.Context, id string, d Decision) (journal.Proposal, error)
	Reconcile(ctx context.Context, id string, as journal.Status, note, by string) (journal.Proposal, error)
	Undo(ctx context.Context, repoPath, by string) (execute.UndoResult, error)
	List(f journal.Filter) ([]journal.Proposal, error)
	Get(id string) (journal.Proposal, error)
	Subscribe() (changes <-chan Change, cancel func())
	Secret() string
	CheckHost(r *http.Request) bool
}

func newPersonHandler(l Lifecycle) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "the approval page is not built yet")
	})
}
