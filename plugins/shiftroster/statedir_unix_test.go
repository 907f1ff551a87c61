//go:build unix

package shiftroster

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fluxgit/fluxgit/internal/roster"
)

// A state directory someone else could write or redirect is refused with
// 10024 state_dir_unsafe, a hint saying how to fix it, and nothing written
// through it. The control (a private directory) works.
func TestUnsafeStateDir(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, base string) (stateDir, watched string)
		hint  string // substring of recovery.hint; "" means the check-in works
	}{
		{"control: private directory", func(t *testing.T, base string) (string, string) {
			d := filepath.Join(base, "state")
			return d, d
		}, ""},
		{"world-writable", func(t *testing.T, base string) (string, string) {
			d := filepath.Join(base, "state")
			mustMkdir(t, d, 0o777)
			return d, d
		}, "chmod go-w"},
		{"group-writable", func(t *testing.T, base string) (string, string) {
			d := filepath.Join(base, "state")
			mustMkdir(t, d, 0o775)
			return d, d
		}, "chmod go-w"},
		{"symlink to another directory", func(t *testing.T, base string) (string, string) {
			target := filepath.Join(base, "elsewhere")
			mustMkdir(t, target, 0o700)
			link := filepath.Join(base, "state")
			if err := os.Symlink(target, link); err != nil {
				t.Fatal(err)
			}
			return link, target
		}, "real path"},
		{"symlink on the way", func(t *testing.T, base string) (string, string) {
			target := filepath.Join(base, "elsewhere")
			mustMkdir(t, target, 0o700)
			if err := os.Symlink(target, filepath.Join(base, "via")); err != nil {
				t.Fatal(err)
			}
			return filepath.Join(base, "via", "state"), target
		}, "real path"},
		{"database is a symlink", func(t *testing.T, base string) (string, string) {
			d := filepath.Join(base, "state")
			mustMkdir(t, d, 0o700)
			other := filepath.Join(base, "other")
			mustMkdir(t, other, 0o700)
			if err := os.Symlink(filepath.Join(other, roster.DatabaseName), filepath.Join(d, roster.DatabaseName)); err != nil {
				t.Fatal(err)
			}
			return d, other
		}, "Replace the link"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := realTempDir(t)
			if err := os.Chmod(base, 0o700); err != nil {
				t.Fatal(err)
			}
			dir, watched := tt.setup(t, base)
			res := call(t, testProvider(t, dir, defaultWS), ToolCheckIn, map[string]any{"gist": "g"})
			if tt.hint == "" {
				if res.Error != nil {
					t.Fatalf("control failed: %+v %s", res.Error, res.Error.Data)
				}
				return
			}
			if res.Error == nil || res.Error.Code != CodeStoreUnavailable {
				t.Fatalf("want tool error %d, got %+v", CodeStoreUnavailable, res)
			}
			var d StoreErrorData
			if err := json.Unmarshal(res.Error.Data, &d); err != nil {
				t.Fatal(err)
			}
			if d.Reason != roster.ReasonUnsafe || !strings.Contains(d.Recovery.Hint, tt.hint) || !strings.Contains(d.Recovery.Hint, roster.EnvStateDir) ||
				!strings.Contains(res.Text, "(reason state_dir_unsafe)") || !strings.Contains(res.Text, tt.hint) {
				t.Fatalf("error %+v\ndata %+v\ntext %s", res.Error, d, res.Text)
			}
			// Nothing was created where the state would have gone.
			entries, _ := os.ReadDir(watched)
			if len(entries) != 0 {
				t.Fatalf("%s holds %d entries after a refused check-in", watched, len(entries))
			}
		})
	}
}

func mustMkdir(t *testing.T, d string, mode os.FileMode) {
	t.Helper()
	if err := os.Mkdir(d, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(d, mode); err != nil {
		t.Fatal(err)
	}
}
