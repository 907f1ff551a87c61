package repo

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/fluxgit/fluxgit/internal/gitexec"
	"github.com/fluxgit/fluxgit/plugins/sdk"
)

// TestConflictReadStopsAtSideBudget: a conflicted blob far larger than its
// budget is read only up to the budget, and its size is still exact (from
// `cat-file -s`, asked only because the read was cut). Small sides need no
// second process.
func TestConflictReadStopsAtSideBudget(t *testing.T) {
	// The side budget is the reference shape's (FLUXGIT_MCP_RESULT_SHAPE=reference).
	t.Setenv("FLUXGIT_MCP_RESULT_SHAPE", "reference")
	repo := newRepo(t)
	line := strings.Repeat("b", 63) + "\n"
	base := strings.Repeat(line, 1<<15) // 2 MiB
	write(t, repo, "big.txt", "start\n"+base)
	write(t, repo, "small.txt", "s\n")
	commitAll(t, repo, "base")
	git(t, repo, "checkout", "-q", "-b", "side")
	write(t, repo, "big.txt", "side\n"+base)
	write(t, repo, "small.txt", "side\n")
	commitAll(t, repo, "side")
	git(t, repo, "checkout", "-q", "main")
	write(t, repo, "big.txt", "main\n"+base)
	write(t, repo, "small.txt", "main\n")
	commitAll(t, repo, "main")
	_ = execGit(repo, "merge", "-q", "side").Run() // conflicts expected

	var mu sync.Mutex
	var sizeCalls []string
	p := New()
	p.runner = &gitexec.Runner{Observe: func(_ string, args []string) {
		if len(args) == 3 && args[0] == "cat-file" && args[1] == "-s" {
			mu.Lock()
			sizeCalls = append(sizeCalls, args[2])
			mu.Unlock()
		}
	}}
	raw, _ := json.Marshal(map[string]any{"repoPath": repo, "maxBytesPerSide": 100})
	res, err := p.CallTool(context.Background(), &sdk.Call{Tool: "conflict.read", Arguments: raw})
	if err != nil || res.Error != nil {
		t.Fatalf("%v %+v", err, res)
	}
	var d conflictData
	if err := json.Unmarshal(res.Data, &d); err != nil {
		t.Fatal(err)
	}
	if len(d.Files) != 2 {
		t.Fatalf("files %+v", d.Files)
	}
	var bigSides []string
	for _, f := range d.Files {
		for name, s := range map[string]*conflictSide{"base": f.Sides.Base, "ours": f.Sides.Ours, "theirs": f.Sides.Theirs} {
			if s == nil || s.Content == nil || s.Size == nil || s.Truncated == nil {
				t.Fatalf("%s %s side %+v", f.Path, name, s)
			}
			first := map[string]string{"base": "start\n", "ours": "main\n", "theirs": "side\n"}[name]
			full := first + base
			if f.Path == "small.txt" {
				full = map[string]string{"base": "s\n", "ours": "main\n", "theirs": "side\n"}[name]
			} else {
				bigSides = append(bigSides, s.Sha)
			}
			want := full[:min(len(full), 100)]
			if *s.Content != want || *s.Size != int64(len(full)) || *s.Truncated != (len(full) > 100) {
				t.Fatalf("%s %s: content %q size %d truncated %v; want %q %d", f.Path, name, *s.Content, *s.Size, *s.Truncated, want, len(full))
			}
		}
	}
	slices.Sort(bigSides)
	slices.Sort(sizeCalls)
	if !slices.Equal(bigSides, sizeCalls) {
		t.Fatalf("cat-file -s ran for %q; want exactly the cut sides %q", sizeCalls, bigSides)
	}
}
