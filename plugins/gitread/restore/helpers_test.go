package restore

// Test helpers: the shared ones of internal/gittest under the names every
// test of this package uses.

import (
	"os/exec"
	"testing"

	"github.com/fluxgit/fluxgit/plugins/gitread/internal/familytest"
	"github.com/fluxgit/fluxgit/plugins/gitread/internal/gittest"
	"github.com/fluxgit/fluxgit/plugins/gitread/repo"
	"github.com/fluxgit/fluxgit/plugins/sdk"
)

// New returns a fresh provider serving this family's tools and the
// repository reads the way plugins/gitread does (which this package cannot
// import).
func New() *familytest.Provider { return familytest.New(tools) }

// source is the Result.Source of a local-git answer.
const source = gittest.Source

// failData is the 10010 payload mustFail returns.
type failData = gittest.FailData

func referenceShape(t testing.TB) { gittest.ReferenceShape(t) }
func gitEnv() []string            { return gittest.GitEnv() }
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	return gittest.Git(t, dir, args...)
}
func tempDir(t *testing.T) string                   { t.Helper(); return gittest.TempDir(t) }
func emptyRepo(t *testing.T) string                 { t.Helper(); return gittest.EmptyRepo(t) }
func newRepo(t *testing.T) string                   { t.Helper(); return gittest.NewRepo(t) }
func write(t *testing.T, dir, name, content string) { t.Helper(); gittest.Write(t, dir, name, content) }
func commitAll(t *testing.T, dir, msg string) string {
	t.Helper()
	return gittest.CommitAll(t, dir, msg)
}
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	return gittest.Snapshot(t, dir)
}
func diffSnapshots(before, after map[string]string) []string {
	return gittest.DiffSnapshots(before, after)
}
func ptr(s string) *string                         { return &s }
func execGit(dir string, args ...string) *exec.Cmd { return gittest.ExecGit(dir, args...) }

// call invokes a tool directly on a fresh provider.
func call(t *testing.T, tool string, args map[string]any, roots ...string) (*sdk.Result, error) {
	t.Helper()
	return gittest.Call(t, New().CallTool, tool, args, roots...)
}

// mustOK calls a tool, requires success and decodes data into out. It
// returns the raw data for shape checks.
func mustOK(t *testing.T, tool string, args map[string]any, out any) string {
	t.Helper()
	return gittest.MustOK(t, New().CallTool, tool, args, out)
}

// mustFail requires a 10010 tool error and returns its data.
func mustFail(t *testing.T, tool string, args map[string]any, roots ...string) failData {
	t.Helper()
	return gittest.MustFail(t, New().CallTool, tool, args, roots...)
}

// mustArgError requires a *sdk.ArgumentError whose details contain want.
func mustArgError(t *testing.T, tool string, args map[string]any, want string) {
	t.Helper()
	gittest.MustArgError(t, New().CallTool, tool, args, want)
}

// The conflict and fleet fixtures (internal/gittest/fixtures.go).
func fxClone(t *testing.T, origin string) (clone, bare string) {
	t.Helper()
	return gittest.Clone(t, origin)
}
func fxDiverged(t *testing.T, base map[string]string, theirs, mine func(dir string)) string {
	t.Helper()
	return gittest.Diverged(t, base, theirs, mine)
}
func fxWriter(files map[string]string) func(string) { return gittest.Writer(files) }
func fxMv(from, to string) func(string)             { return gittest.Mv(from, to) }
func fxNoGateway(t *testing.T)                      { gittest.NoGateway(t) }

var fxLines = gittest.Lines

// registryID is repo.RegistryID, for tests whose repository variable is
// named repo.
var registryID = repo.RegistryID

// authorTime is the fixed author date of every test commit.
const authorTime = gittest.AuthorTime

// runDirFor is repo.RunDirFor, for the same tests.
var runDirFor = repo.RunDirFor
