package repo

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/fluxgit/fluxgit/internal/gitexec"
)

// includeArgs lists every include.path and includeIf.<condition>.path git
// follows from the repository's configuration, nested includes too, each
// with the file it was read from. "config" never reaches a content driver,
// so the runner adds no driver scan to it.
var includeArgs = []string{"config", "-z", "--show-origin", "--includes", "--get-regexp", `^include(if\..*)?\.path$`}

// confineIncludes extends confineRepo to configuration includes. The
// repository's own config (system and global config are off in the
// runner) may include any file, and git reads it as its own: an include of
// another repository's config shows that repository's remotes, branches
// and settings through the read tools. With roots set, every included
// file must lie inside them (a missing one is judged by the path as
// written, like a dangling symlink). The git call is made only when a
// config file mentions an include at all, so ordinary repositories pay
// one small file read.
func (p *Provider) confineIncludes(ctx context.Context, roots []string, d discovered) error {
	if len(roots) == 0 || !mayInclude(d) {
		return nil
	}
	out, err := p.runner.Run(ctx, d.top, includeArgs...)
	if err != nil {
		var ge *gitexec.Error
		if errors.As(err, &ge) && ge.ExitCode == 1 && errors.Is(err, gitexec.ErrExit) {
			return nil // no include keys
		}
		return err
	}
	c := &confinement{roots: roots, top: d.top, gitDir: d.gitDir, commonDir: d.commonDir, visited: map[string]bool{}}
	recs := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	for i := 0; i+1 < len(recs); i += 2 {
		origin, fromFile := strings.CutPrefix(recs[i], "file:")
		key, value, _ := strings.Cut(recs[i+1], "\n")
		if !fromFile || value == "" {
			continue
		}
		if !filepath.IsAbs(origin) {
			origin = filepath.Join(d.top, origin) // git prints it relative to where it ran
		}
		target := value
		switch {
		case strings.HasPrefix(value, "~/"):
			target = filepath.Join(os.Getenv("HOME"), value[2:])
		case !filepath.IsAbs(value):
			target = filepath.Join(filepath.Dir(origin), value)
		}
		real, err := filepath.EvalSymlinks(target)
		if err != nil {
			real = filepath.Clean(target)
		}
		if !insideAny(real, roots) {
			return c.refuse("the "+key+" setting in the repository's "+c.label(filepath.Clean(origin))+" includes a configuration file outside the allowed roots, so git would read another repository's settings through it",
				"remove the include (git config --unset-all "+key+"), or add that file's directory to FLUXGIT_MCP_ALLOWED_ROOTS", real)
		}
	}
	return nil
}

// mayInclude reports whether a repository config file git reads mentions
// an include; a file that cannot be read here is assumed to.
func mayInclude(d discovered) bool {
	for _, f := range []string{filepath.Join(d.commonDir, "config"), filepath.Join(d.gitDir, "config.worktree")} {
		b, err := readSmallFile(f, 1<<20)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			return true
		}
		if bytes.Contains(bytes.ToLower(b), []byte("include")) {
			return true
		}
	}
	return false
}
