package agentdetect

import (
	"context"
	"os"
	"path/filepath"
)

// aiderStore reads the trace Aider leaves at the top of each work tree:
// the modification times of .aider.chat.history.md and
// .aider.input.history. Aider records no cwd, branch or session, and
// their contents (the chat itself) are never opened: the finding is a
// repo trace that a process with its cwd in the repository can confirm.
type aiderStore struct{}

// Name identifies the source in a report's failed list.
func (aiderStore) Name() string { return "store:aider" }

// Scan reports recent Aider activity in the repository.
func (aiderStore) Scan(ctx context.Context, q Query) ([]Finding, error) {
	s := newStoreScan(q)
	var out []Finding
	for _, r := range s.roots {
		if ctx.Err() != nil {
			return out, ctx.Err()
		}
		a := &storeSession{agent: "aider", cwd: r.raw, source: SourceRepoTrace}
		for _, name := range []string{".aider.chat.history.md", ".aider.input.history"} {
			fi, err := os.Lstat(filepath.Join(r.raw, name))
			if err == nil && fi.Mode().IsRegular() {
				a.touch(fi.ModTime())
			}
		}
		if s.fresh(a.last) {
			out = append(out, a.finding(s))
		}
	}
	return out, nil
}
