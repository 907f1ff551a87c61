package gitexec

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// countScans counts real driver scans per repository for one test.
func countScans(t *testing.T) map[string]int {
	t.Helper()
	if !sigSupported {
		t.Skip("the driver-scan cache is disabled on this platform")
	}
	n := map[string]int{}
	driverScanHook = func(repo string) { n[repo]++ }
	old := racyWindow
	racyWindow = 200 * time.Millisecond
	t.Cleanup(func() { driverScanHook, racyWindow = nil, old })
	return n
}

// settle waits until files written so far are older than racyWindow, so
// the next scan may be cached.
func settle() { time.Sleep(racyWindow + 50*time.Millisecond) }

// staleFile rewrites name with same-size content and a future mtime, so
// the next status must hash it: that is where a clean filter runs.
func staleFile(t *testing.T, repo, name, content string) {
	t.Helper()
	writeFile(t, filepath.Join(repo, name), content)
	future := time.Now().Add(3 * time.Second)
	if err := os.Chtimes(filepath.Join(repo, name), future, future); err != nil {
		t.Fatal(err)
	}
}

// filterRepo is a repository whose a.txt is routed to filter "x" by a
// committed .gitattributes; no filter is defined yet.
func filterRepo(t *testing.T) string {
	t.Helper()
	repo := newRepo(t)
	writeFile(t, filepath.Join(repo, ".gitattributes"), "*.txt filter=x\n")
	gitT(t, repo, "add", ".gitattributes")
	gitT(t, repo, "commit", "-q", "-m", "attrs")
	return repo
}

func runStatus(t *testing.T, r *Runner, repo string) {
	t.Helper()
	if _, err := r.Run(context.Background(), repo, "status", "--porcelain=v2", "-z"); err != nil {
		t.Fatal(err)
	}
}

// proveFilterWouldRun shows the scenario is real: plain git (no runner)
// runs the configured clean filter on the next status.
func proveFilterWouldRun(t *testing.T, repo, marker string) {
	t.Helper()
	clone := filepath.Join(t.TempDir(), "probe")
	if err := exec.Command("cp", "-a", repo, clone).Run(); err != nil {
		t.Fatal(err)
	}
	gitT(t, clone, "status", "--porcelain")
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("setup error: plain git did not run the filter, the test proves nothing")
	}
	if err := os.Remove(marker); err != nil {
		t.Fatal(err)
	}
}

// TestDriverCacheInvalidatedByNewFilter: a first status caches "no
// drivers"; a filter added to the config afterwards must be seen (the
// file signature changed) and neutralized on the very next status.
func TestDriverCacheInvalidatedByNewFilter(t *testing.T) {
	scans := countScans(t)
	r := &Runner{}
	repo := filterRepo(t)
	marker := filepath.Join(t.TempDir(), "marker")
	script := markerScript(t, marker)
	settle()

	runStatus(t, r, repo)
	runStatus(t, r, repo)
	if scans[repo] != 1 || r.drivers.len() != 1 {
		t.Fatalf("want one scan then a cache hit, got %d scans, %d entries", scans[repo], r.drivers.len())
	}

	gitT(t, repo, "config", "filter.x.clean", script)
	gitT(t, repo, "config", "filter.x.smudge", script)
	gitT(t, repo, "config", "filter.x.required", "true")
	staleFile(t, repo, "a.txt", "ONE\n")
	proveFilterWouldRun(t, repo, marker)

	runStatus(t, r, repo)
	assertNoMarker(t, marker)
	if scans[repo] != 2 {
		t.Fatalf("config change did not trigger a rescan (%d scans)", scans[repo])
	}
	// The new answer is cached once the config is no longer racy, and
	// still neutralizes the filter. Whether the rescan above already
	// found the config settled depends on how long the machine took since
	// the write, so the property checked is: once settled, a status
	// costs at most one more scan and the one after it none.
	settle()
	staleFile(t, repo, "a.txt", "oNE\n")
	runStatus(t, r, repo)
	settled := scans[repo]
	runStatus(t, r, repo)
	assertNoMarker(t, marker)
	if settled > 3 || scans[repo] != settled {
		t.Fatalf("want the settled config cached: %d scans after settling, %d after one more status", settled, scans[repo])
	}
}

// TestDriverCacheInPlaceRewrite: the config is rewritten in place (same
// inode, same size, mtime put back); only ctime tells, and it must.
func TestDriverCacheInPlaceRewrite(t *testing.T) {
	scans := countScans(t)
	r := &Runner{}
	repo := filterRepo(t)
	marker := filepath.Join(t.TempDir(), "marker")
	script := markerScript(t, marker)
	cfg := filepath.Join(repo, ".git", "config")
	evil := "[filter \"x\"]\n\tclean = " + script + "\n\tsmudge = " + script + "\n\trequired = true\n"
	orig, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Pad with a comment now so the later rewrite keeps the size.
	padded := string(orig) + "#" + strings.Repeat("x", len(evil)-2) + "\n"
	writeFile(t, cfg, padded)
	fi, err := os.Stat(cfg)
	if err != nil {
		t.Fatal(err)
	}
	settle()
	runStatus(t, r, repo)
	runStatus(t, r, repo)
	if scans[repo] != 1 {
		t.Fatalf("want a cache hit, got %d scans", scans[repo])
	}

	f, err := os.OpenFile(cfg, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte(evil), int64(len(orig))); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := os.Chtimes(cfg, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if fi2, _ := os.Stat(cfg); fi2.Size() != fi.Size() || !fi2.ModTime().Equal(fi.ModTime()) {
		t.Fatal("setup error: size or mtime changed")
	}
	staleFile(t, repo, "a.txt", "ONE\n")
	proveFilterWouldRun(t, repo, marker)

	runStatus(t, r, repo)
	assertNoMarker(t, marker)
	if scans[repo] != 2 {
		t.Fatalf("in-place rewrite not noticed (%d scans)", scans[repo])
	}
}

// TestDriverCacheNeverCachesIncludes: drivers can hide in an included
// file, which is not watched, so a config with includes is rescanned on
// every call.
func TestDriverCacheNeverCachesIncludes(t *testing.T) {
	scans := countScans(t)
	r := &Runner{}
	repo := filterRepo(t)
	marker := filepath.Join(t.TempDir(), "marker")
	script := markerScript(t, marker)
	inc := filepath.Join(t.TempDir(), "inc.config")
	writeFile(t, inc, "")
	gitT(t, repo, "config", "includeIf.onbranch:main.path", inc)
	settle()
	for i := 1; i <= 3; i++ {
		runStatus(t, r, repo)
		if scans[repo] != i {
			t.Fatalf("call %d: %d scans", i, scans[repo])
		}
	}
	// Change only the included file: the next call must neutralize it.
	writeFile(t, inc, "[filter \"x\"]\n\tclean = "+script+"\n\trequired = true\n")
	staleFile(t, repo, "a.txt", "ONE\n")
	runStatus(t, r, repo)
	assertNoMarker(t, marker)
	if scans[repo] != 4 {
		t.Fatalf("%d scans", scans[repo])
	}
}

// TestDriverCacheGitfileRetarget: the repository's .git file is pointed at
// another git directory whose config defines a filter; the cached answer
// for the old one must not be used.
func TestDriverCacheGitfileRetarget(t *testing.T) {
	scans := countScans(t)
	r := &Runner{}
	repo := filterRepo(t)
	marker := filepath.Join(t.TempDir(), "marker")
	script := markerScript(t, marker)
	// Move the git directory out and use a gitfile, then make an evil copy.
	base := t.TempDir()
	good, evil := filepath.Join(base, "good.git"), filepath.Join(base, "evil.git")
	if err := os.Rename(filepath.Join(repo, ".git"), good); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(repo, ".git"), "gitdir: "+good+"\n")
	if err := exec.Command("cp", "-a", good, evil).Run(); err != nil {
		t.Fatal(err)
	}
	gitT(t, repo, "--git-dir="+evil, "config", "filter.x.clean", script)
	gitT(t, repo, "--git-dir="+evil, "config", "filter.x.required", "true")
	settle()
	runStatus(t, r, repo)
	runStatus(t, r, repo)
	if scans[repo] != 1 {
		t.Fatalf("want a cache hit, got %d scans", scans[repo])
	}
	// Same length, so only content and timestamps differ.
	writeFile(t, filepath.Join(repo, ".git"), "gitdir: "+evil+"\n")
	staleFile(t, repo, "a.txt", "ONE\n")
	runStatus(t, r, repo)
	assertNoMarker(t, marker)
	if scans[repo] != 2 {
		t.Fatalf("retargeted .git not noticed (%d scans)", scans[repo])
	}
}

// TestDriverCacheSubdirectoryNotCached: a path below the top level finds
// its repository by walking up, which the watch list cannot pin down.
func TestDriverCacheSubdirectoryNotCached(t *testing.T) {
	scans := countScans(t)
	r := &Runner{}
	repo := newRepo(t)
	sub := filepath.Join(repo, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	settle()
	runStatus(t, r, sub)
	runStatus(t, r, sub)
	if scans[sub] != 2 || r.drivers.len() != 0 {
		t.Fatalf("%d scans, %d entries", scans[sub], r.drivers.len())
	}
}

func TestDriverCacheBounded(t *testing.T) {
	var c driverCache
	for i := 0; i < driverCacheSize+10; i++ {
		c.put(&driverEntry{key: strconv.Itoa(i)})
	}
	if c.len() != driverCacheSize {
		t.Fatalf("len %d", c.len())
	}
	if _, ok := c.get("0"); ok {
		t.Fatal("oldest entry kept")
	}
	if _, ok := c.get(strconv.Itoa(driverCacheSize + 9)); !ok {
		t.Fatal("newest entry dropped")
	}
}

func TestTunedArgs(t *testing.T) {
	args := []string{"status", "--porcelain=v2"}
	if got, want := tunedArgs("/r", Tuning{}, args), hardenedArgs("/r", args); !slices.Equal(got, want) {
		t.Fatalf("untuned %q != %q", got, want)
	}
	got := tunedArgs("/r", Tuning{SerialIndexStat: true}, args)
	want := slices.Concat(globalFlags, []string{"-c", "core.preloadIndex=false", "-C", "/r", "status"}, subcommandFlags["status"], []string{"--porcelain=v2"})
	if !slices.Equal(got, want) {
		t.Fatalf("tuned %q\nwant %q", got, want)
	}
	repo := newRepo(t)
	var b strings.Builder
	if _, err := (&Runner{}).StreamTuned(context.Background(), repo, Tuning{SerialIndexStat: true}, &b, "status", "--porcelain=v2", "--branch"); err != nil || !strings.Contains(b.String(), "# branch.head main") {
		t.Fatalf("%v %q", err, b.String())
	}
}
