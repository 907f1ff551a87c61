package gitread

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkConfineRepo measures the confinement walk on FLUXGIT_BENCH_REPO
// (for instance a repository with many loose objects).
func BenchmarkConfineRepo(b *testing.B) {
	repo := os.Getenv("FLUXGIT_BENCH_REPO")
	if repo == "" {
		b.Skip("FLUXGIT_BENCH_REPO is not set")
	}
	dotgit := filepath.Join(repo, ".git")
	roots := []string{filepath.Dir(repo)}
	for i := 0; i < b.N; i++ {
		if err := confineRepo(roots, repo, dotgit, dotgit, nil); err != nil {
			b.Fatal(err)
		}
	}
}
