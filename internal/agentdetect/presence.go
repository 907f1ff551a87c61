package agentdetect

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/fluxgit/fluxgit/internal/rundir"
)

// Reader limits for presence records: a crowded or hostile run directory
// costs bounded work.
const (
	maxPresenceFiles = 256
	// maxFutureSkew: a lastCallMs further ahead than this is a clock
	// error or a forgery, not a call.
	maxFutureSkew = 60 * time.Second
	// maxUnknownClients bounds the distinct unknown client names kept;
	// further ones report as "mcp-client".
	maxUnknownClients = 32
	maxToolName       = 128
)

// PresenceSource reads fluxgit's presence records (<RunDir>/presence/mcp)
// and FluxGit's (Query.FluxGitPresenceDirs): every other MCP server
// process that served a call on the repository recently.
type PresenceSource struct{}

// Name implements Source.
func (PresenceSource) Name() string { return SourceMCP }

// Scan implements Source. A directory that does not exist is no error (no
// other server ever wrote one); one that is a symbolic link is not
// followed.
func (PresenceSource) Scan(ctx context.Context, q Query) ([]Finding, error) {
	var dirs []string
	if q.RunDir != "" {
		dirs = append(dirs, rundir.PresenceDir(q.RunDir))
	}
	dirs = append(dirs, q.FluxGitPresenceDirs...)
	r := presenceReader{q: q, unknown: map[string]bool{}}
	var errs []error
	for _, d := range dirs {
		if err := r.readDir(ctx, d); err != nil {
			errs = append(errs, err)
		}
	}
	return r.out, errors.Join(errs...)
}

type presenceReader struct {
	q       Query
	read    int
	unknown map[string]bool
	out     []Finding
}

func (r *presenceReader) readDir(ctx context.Context, dir string) error {
	fi, err := os.Lstat(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("presence records %s: %w", dir, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("presence records %s: not a real directory", dir)
	}
	// Records are read through an os.Root of the directory, so none is
	// reached through a symbolic link (internal/rundir's bounded reader).
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("presence records %s: %w", dir, err)
	}
	defer root.Close()
	entries, err := rundir.ReadDir(root, ".")
	if err != nil {
		return fmt.Errorf("presence records %s: %w", dir, err)
	}
	own := strconv.Itoa(r.q.SelfPID) + ".json"
	for _, e := range entries {
		if r.read >= maxPresenceFiles {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("presence records: %w", err)
		}
		name := e.Name()
		if !strings.HasSuffix(name, ".json") || strings.HasPrefix(name, ".") || name == own {
			continue
		}
		info, err := e.Info()
		if err != nil || !info.Mode().IsRegular() || info.Size() > rundir.MaxPresenceBytes {
			continue
		}
		if r.q.Now.Sub(info.ModTime()) > Freshness {
			continue
		}
		r.read++
		if f, ok := r.readRecord(root, name, info); ok {
			r.out = append(r.out, f)
		}
	}
	return nil
}

// readRecord parses one record; any defect drops the record alone.
func (r *presenceReader) readRecord(root *os.Root, name string, info os.FileInfo) (Finding, bool) {
	b, st, err := rundir.ReadFile(root, name, rundir.MaxPresenceBytes, nil)
	if err != nil || !os.SameFile(st, info) {
		return Finding{}, false
	}
	doc, err := rundir.ParsePresence(b)
	if err != nil || doc.PID == r.q.SelfPID {
		return Finding{}, false
	}
	now := r.q.Now
	var best int64 = -1
	var tool string
	for i, repo := range doc.Repos {
		if i == rundir.MaxPresenceRepos {
			break
		}
		at := time.UnixMilli(repo.LastCallMs)
		if now.Sub(at) > Freshness || at.Sub(now) > maxFutureSkew || !InRepo(repo.RepoPath, r.q) {
			continue
		}
		if repo.LastCallMs > best {
			best, tool = repo.LastCallMs, repo.LastTool
		}
	}
	if best < 0 {
		return Finding{}, false
	}
	f := Finding{
		Sources:        []string{SourceMCP},
		PID:            &doc.PID,
		LastActivityMs: &best,
		Confidence:     ConfidenceRegistry,
	}
	c := &MCPClient{}
	if doc.Client.Name != nil {
		c.Name = rundir.CleanClientField(*doc.Client.Name)
	}
	if doc.Client.Version != nil {
		c.Version = rundir.CleanClientField(*doc.Client.Version)
	}
	if c.Name != "" || c.Version != "" {
		f.MCPClient = c
	}
	f.Agent = CallerAgent(c.Name)
	if f.Agent != FallbackClientAgent && !knownAgent(f.Agent) && !r.unknown[f.Agent] {
		if len(r.unknown) >= maxUnknownClients {
			f.Agent = FallbackClientAgent
		} else {
			r.unknown[f.Agent] = true
		}
	}
	if t := toolName(tool); t != "" {
		f.LastTool = &t
	}
	switch {
	case AliveSince(doc.PID, info.ModTime()):
		f.State = StateOpen
		f.StartTime, _ = ProcessStartTime(doc.PID)
		f.Ancestry = Ancestors(doc.PID)
	default:
		// The server that wrote the record is gone (or its pid now names
		// a younger process): its pid identifies nothing any more, so it
		// is neither reported nor used to join findings (pid null, as
		// F§6.19 allows; a same-agent finding without a pid then counts
		// as likelyCaller, the reference's rule).
		f.PID = nil
		f.State = StateRecent
	}
	if now.Sub(time.UnixMilli(best)) <= WorkingWindow {
		f.State = StateWorking
	}
	return f, true
}

// readRegular reads a file Lstat saw as regular and small, refusing it if
// it was swapped for something else (a symlink, a bigger file) since.
func readRegular(path string, info os.FileInfo, limit int64) ([]byte, bool) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !os.SameFile(st, info) || !st.Mode().IsRegular() {
		return nil, false
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil || int64(len(b)) > limit {
		return nil, false
	}
	return b, true
}

// toolName keeps a recorded tool name only if it looks like one.
func toolName(s string) string {
	if s == "" || len(s) > maxToolName {
		return ""
	}
	for _, r := range s {
		if !(r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("._-/:", r))) {
			return ""
		}
	}
	return s
}
