package repo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/fluxgit/fluxgit/internal/resultshape"
	"github.com/fluxgit/fluxgit/plugins/sdk"
)

type statusArgs struct {
	RepoPath   string       `json:"repoPath"`
	RepoID     string       `json:"repoId"`
	MaxEntries *json.Number `json:"maxEntries"`
}

// statusEntry is one changed path of repo.status.
type statusEntry struct {
	// Status is the two-character porcelain v1 code ("M ", " M", "R ",
	// "UU", "??"): v2's '.' placeholder is shown as a space.
	Status string `json:"status"`
	Path   string `json:"path"`
	// OrigPath is the source of a rename or copy.
	OrigPath string `json:"origPath,omitempty"`
	// PathBase64 and OrigPathBase64 carry the exact bytes when a path is
	// not valid UTF-8 (Path then holds a lossy rendering).
	PathBase64     string `json:"pathBase64,omitempty"`
	OrigPathBase64 string `json:"origPathBase64,omitempty"`
}

// statusData is the repo.status payload.
type statusData struct {
	Branch       *string       `json:"branch"`
	Detached     bool          `json:"detached"`
	OID          *string       `json:"oid"`
	Upstream     *string       `json:"upstream"`
	Ahead        int64         `json:"ahead"`
	Behind       int64         `json:"behind"`
	Clean        bool          `json:"clean"`
	ChangedFiles int64         `json:"changedFiles"`
	Entries      []statusEntry `json:"entries"`
	Truncated    bool          `json:"truncated"`
}

// statusArgv is the single git call behind repo.status. Porcelain v2 with
// -z gives exact path bytes (no C-quoting), rename origins, and the branch
// headers (oid, upstream, ahead/behind) in the same pass.
var statusArgv = []string{"status", "--porcelain=v2", "-z", "--branch", "--untracked-files=all"}

// leanStatusArgv is statusArgv with git's default untracked mode, for the
// lean shape: a new directory is one entry ("?? dir/"), as git status -sb
// shows it, instead of every file in it.
var leanStatusArgv = []string{"status", "--porcelain=v2", "-z", "--branch", "--untracked-files=normal"}

// statusArgvFor is the status argv of the result shape in effect.
func statusArgvFor(lean bool) []string {
	if lean {
		return leanStatusArgv
	}
	return statusArgv
}

func (p *Provider) repoStatus(ctx context.Context, call *sdk.Call) (any, error) {
	var a statusArgs
	if err := decode(call, &a); err != nil {
		return nil, err
	}
	maxEntries, err := intArg("maxEntries", a.MaxEntries, 1000, 1, 10000)
	if err != nil {
		return nil, err
	}
	r, err := p.open(ctx, call, a.RepoPath)
	if err != nil {
		return nil, err
	}
	lean := resultshape.Lean()
	ps := &statusParser{max: int(maxEntries), data: statusData{Entries: []statusEntry{}}}
	if err := p.statusInto(ctx, call, r, ps, statusArgvFor(lean)...); err != nil {
		return nil, err
	}
	d := &ps.data
	d.ChangedFiles = int64(ps.count)
	d.Clean = ps.count == 0
	d.Truncated = ps.count > len(d.Entries)
	if !lean {
		return d, nil
	}
	short := ""
	if d.Detached && d.OID != nil {
		// Only a detached HEAD needs its id (a branch names the commit
		// otherwise): git's unique abbreviation, one cheap call.
		out, err := p.runner.Run(ctx, r.dir, "rev-parse", "--short", *d.OID)
		if err != nil {
			return nil, err
		}
		short = strings.TrimSpace(string(out))
	}
	return leanStatus(d, short), nil
}

// statusParser consumes porcelain v2 -z fields. Record layouts (fields are
// space separated, the path is last and may itself contain spaces):
//
//	# branch.oid <oid>|(initial)      # branch.head <name>|(detached)
//	# branch.upstream <name>          # branch.ab +<ahead> -<behind>
//	1 XY sub mH mI mW hH hI path
//	2 XY sub mH mI mW hH hI Xscore path  NUL origPath
//	u XY sub m1 m2 m3 mW h1 h2 h3 path
//	? path                            ! path
type statusParser struct {
	max      int
	data     statusData
	count    int
	wantOrig bool // the next field is the origPath of a rename/copy
	origFor  int  // index of the entry that origPath belongs to, or -1
}

var errStatusFormat = errors.New("unexpected git status output")

func (s *statusParser) field(f []byte) error {
	if s.wantOrig {
		s.wantOrig = false
		if s.origFor >= 0 {
			e := &s.data.Entries[s.origFor]
			e.OrigPath, e.OrigPathBase64 = pathText(f)
		}
		return nil
	}
	if len(f) == 0 {
		return nil
	}
	var xy string
	var path []byte
	switch f[0] {
	case '#':
		return s.header(string(f))
	case '1', '2', 'u':
		n := map[byte]int{'1': 9, '2': 10, 'u': 11}[f[0]]
		parts := splitN(f, n)
		if parts == nil || len(parts[1]) != 2 {
			return s.fail()
		}
		xy = strings.ReplaceAll(string(parts[1]), ".", " ")
		path = parts[n-1]
	case '?':
		if len(f) < 3 || f[1] != ' ' {
			return s.fail()
		}
		xy, path = "??", f[2:]
	case '!':
		return nil // ignored files are not changes
	default:
		return s.fail()
	}
	s.count++
	s.origFor = -1
	if len(s.data.Entries) < s.max {
		e := statusEntry{Status: xy}
		e.Path, e.PathBase64 = pathText(path)
		s.data.Entries = append(s.data.Entries, e)
		s.origFor = len(s.data.Entries) - 1
	}
	s.wantOrig = f[0] == '2'
	return nil
}

func (s *statusParser) fail() error { return errStatusFormat }

func (s *statusParser) header(h string) error {
	key, val, _ := strings.Cut(strings.TrimPrefix(h, "# "), " ")
	switch key {
	case "branch.oid":
		if val != "(initial)" {
			s.data.OID = &val
		}
	case "branch.head":
		if val == "(detached)" {
			s.data.Detached = true
		} else {
			s.data.Branch = &val
		}
	case "branch.upstream":
		s.data.Upstream = &val
	case "branch.ab":
		a, b, ok := strings.Cut(val, " ")
		ahead, err1 := strconv.ParseInt(strings.TrimPrefix(a, "+"), 10, 64)
		behind, err2 := strconv.ParseInt(strings.TrimPrefix(b, "-"), 10, 64)
		if !ok || err1 != nil || err2 != nil {
			return s.fail()
		}
		s.data.Ahead, s.data.Behind = ahead, behind
	}
	return nil // other headers (stash count, ...) are not reported
}

// splitN splits f on single spaces into exactly n parts, the last keeping
// any further spaces; nil when there are fewer than n.
func splitN(f []byte, n int) [][]byte {
	parts := make([][]byte, 0, n)
	for len(parts) < n-1 {
		i := bytes.IndexByte(f, ' ')
		if i < 0 {
			return nil
		}
		parts = append(parts, f[:i])
		f = f[i+1:]
	}
	return append(parts, f)
}
