package repo

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkConfineRepo measures the confinement walk on FLUXGIT_BENCH_REPO
// (for instance a repository with many loose objects), walked every time
// and reused from a walkCache.
func BenchmarkConfineRepo(b *testing.B) {
	repo := os.Getenv("FLUXGIT_BENCH_REPO")
	if repo == "" {
		b.Skip("FLUXGIT_BENCH_REPO is not set")
	}
	dotgit := filepath.Join(repo, ".git")
	roots := []string{filepath.Dir(repo)}
	for _, bc := range []struct {
		name  string
		cache *walkCache
	}{{"walk", nil}, {"cached", &walkCache{}}} {
		b.Run(bc.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if err := confineRepo(roots, repo, dotgit, dotgit, nil, bc.cache); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
