package repo

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/fluxgit/fluxgit/internal/gitexec"
	"github.com/fluxgit/fluxgit/plugins/sdk"
)

// latinName is a file name that is not valid UTF-8 ("café.txt" in Latin-1).
const latinName = "caf\xe9.txt"

// fileFixture is a repository with known answers for file.read and
// file.blame: c1 adds notes.txt, a binary file, a Latin-1 named file and
// gone.txt; c2 (by an author with a non-ASCII name) renames notes.txt to
// docs/notes.md and appends a line; c3 deletes gone.txt; c4 adds it back
// with other content. The work tree then edits docs/notes.md and holds
// links inside and outside the repository.
type fileFixture struct {
	repo, outside      string
	c1, c2, c3, c4     string
	binary             []byte
	inLink, outLink    string
	committedNotes     string
	worktreeNotes      string
	latinB64, latinRaw string
}

func newFileFixture(t *testing.T) *fileFixture {
	t.Helper()
	f := &fileFixture{repo: newRepo(t), outside: tempDir(t)}
	f.binary = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x01")
	write(t, f.repo, "notes.txt", "one\ntwo\nthree\n")
	write(t, f.repo, "gone.txt", "old\n")
	write(t, f.repo, "bin.dat", string(f.binary))
	write(t, f.repo, latinName, "latin\n")
	write(t, f.repo, "latin1.txt", "caf\xe9 cr\xe8me\n")
	f.c1 = commitAll(t, f.repo, "add notes")
	if err := os.MkdirAll(filepath.Join(f.repo, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	git(t, f.repo, "mv", "notes.txt", "docs/notes.md")
	write(t, f.repo, "docs/notes.md", "one\ntwo\nthree\nfour\n")
	git(t, f.repo, "add", "-A")
	git(t, f.repo, "commit", "-q", "--author=Zoë Ærø-Łukasz <zoe@example.com>", "-m", "rename notes")
	f.c2 = git(t, f.repo, "rev-parse", "HEAD")
	git(t, f.repo, "rm", "-q", "gone.txt")
	f.c3 = commitAll(t, f.repo, "remove gone")
	write(t, f.repo, "gone.txt", "new\n")
	f.c4 = commitAll(t, f.repo, "bring gone back")
	f.committedNotes, f.worktreeNotes = "one\ntwo\nthree\nfour\n", "dirty\n"
	write(t, f.repo, "docs/notes.md", f.worktreeNotes)
	write(t, f.outside, "secret.txt", "outside secret\n")
	f.inLink, f.outLink = "in-link", "out-link"
	if err := os.Symlink("docs/notes.md", filepath.Join(f.repo, f.inLink)); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(f.outside, "secret.txt"), filepath.Join(f.repo, f.outLink)); err != nil {
		t.Fatal(err)
	}
	f.latinRaw = latinName
	f.latinB64 = base64.StdEncoding.EncodeToString([]byte(latinName))
	return f
}

func i64(n int64) *int64 { return &n }

func TestFileRead(t *testing.T) {
	f := newFileFixture(t)
	bin64 := base64.StdEncoding.EncodeToString(f.binary)
	type want struct {
		content    *string
		binary     bool
		size       int64
		startLine  *int64
		endLine    *int64
		totalLines *int64
		offset     int64
		truncated  bool
		encoding   string
		commit     string
		invalid    bool
		pathB64    string
	}
	tests := []struct {
		name string
		args map[string]any
		want want
	}{
		{"HEAD by default, after a rename", map[string]any{"path": "docs/notes.md"},
			want{content: ptr(f.committedNotes), size: 19, startLine: i64(1), endLine: i64(4), totalLines: i64(4), encoding: "utf-8", commit: f.c4}},
		{"old name at the first commit", map[string]any{"path": "notes.txt", "rev": f.c1[:10]},
			want{content: ptr("one\ntwo\nthree\n"), size: 14, startLine: i64(1), endLine: i64(3), totalLines: i64(3), encoding: "utf-8", commit: f.c1}},
		{"line range", map[string]any{"path": "docs/notes.md", "startLine": 2, "endLine": 3},
			want{content: ptr("two\nthree\n"), size: 19, startLine: i64(2), endLine: i64(3), offset: 4, encoding: "utf-8", commit: f.c4}},
		{"line range to the end", map[string]any{"path": "docs/notes.md", "startLine": 4},
			want{content: ptr("four\n"), size: 19, startLine: i64(4), endLine: i64(4), totalLines: i64(4), offset: 14, encoding: "utf-8", commit: f.c4}},
		{"endLine past the end is clamped", map[string]any{"path": "docs/notes.md", "startLine": 3, "endLine": 99},
			want{content: ptr("three\nfour\n"), size: 19, startLine: i64(3), endLine: i64(4), totalLines: i64(4), offset: 8, encoding: "utf-8", commit: f.c4}},
		{"byte range", map[string]any{"path": "docs/notes.md", "offset": 4, "length": 3},
			want{content: ptr("two"), size: 19, offset: 4, encoding: "utf-8", commit: f.c4}},
		{"budget cuts after the last whole line", map[string]any{"path": "docs/notes.md", "maxBytes": 10},
			want{content: ptr("one\ntwo\n"), size: 19, startLine: i64(1), endLine: i64(2), truncated: true, encoding: "utf-8", commit: f.c4}},
		{"budget on a byte range cuts exactly", map[string]any{"path": "docs/notes.md", "offset": 0, "maxBytes": 5},
			want{content: ptr("one\nt"), size: 19, truncated: true, encoding: "utf-8", commit: f.c4}},
		{"binary file without content", map[string]any{"path": "bin.dat"},
			want{binary: true, size: int64(len(f.binary)), commit: f.c4}},
		{"binary file as base64", map[string]any{"path": "bin.dat", "encoding": "base64", "offset": 0},
			want{content: &bin64, binary: true, size: int64(len(f.binary)), encoding: "base64", commit: f.c4}},
		{"non-UTF-8 name by its bytes", map[string]any{"pathBase64": f.latinB64},
			want{content: ptr("latin\n"), size: 6, startLine: i64(1), endLine: i64(1), totalLines: i64(1), encoding: "utf-8", commit: f.c4, pathB64: f.latinB64}},
		{"text that is not UTF-8", map[string]any{"path": "latin1.txt"},
			want{content: ptr("caf\uFFFD cr\uFFFDme\n"), size: 11, startLine: i64(1), endLine: i64(1), totalLines: i64(1), encoding: "utf-8", commit: f.c4, invalid: true}},
		{"text that is not UTF-8 as base64", map[string]any{"path": "latin1.txt", "encoding": "base64"},
			want{content: ptr(base64.StdEncoding.EncodeToString([]byte("caf\xe9 cr\xe8me\n"))), size: 11, startLine: i64(1), endLine: i64(1), totalLines: i64(1), encoding: "base64", commit: f.c4}},
		{"deleted file at its first version", map[string]any{"path": "gone.txt", "rev": f.c1},
			want{content: ptr("old\n"), size: 4, startLine: i64(1), endLine: i64(1), totalLines: i64(1), encoding: "utf-8", commit: f.c1}},
		{"re-added file", map[string]any{"path": "gone.txt", "rev": "HEAD"},
			want{content: ptr("new\n"), size: 4, startLine: i64(1), endLine: i64(1), totalLines: i64(1), encoding: "utf-8", commit: f.c4}},
		{"work tree", map[string]any{"path": "docs/notes.md", "worktree": true},
			want{content: ptr(f.worktreeNotes), size: 6, startLine: i64(1), endLine: i64(1), totalLines: i64(1), encoding: "utf-8"}},
		{"work tree through a link inside the repository", map[string]any{"path": "in-link", "worktree": true},
			want{content: ptr(f.worktreeNotes), size: 6, startLine: i64(1), endLine: i64(1), totalLines: i64(1), encoding: "utf-8"}},
		{"absolute path inside the repository", map[string]any{"path": filepath.Join(f.repo, "gone.txt"), "worktree": true},
			want{content: ptr("new\n"), size: 4, startLine: i64(1), endLine: i64(1), totalLines: i64(1), encoding: "utf-8"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.args["repoPath"] = f.repo
			var d fileReadData
			raw := mustOK(t, "file.read", tt.args, &d)
			w := tt.want
			switch {
			case !reflect.DeepEqual(d.Content, w.content):
				t.Errorf("content = %v, want %v (%s)", strp(d.Content), strp(w.content), raw)
			case d.Binary != w.binary || d.Size != w.size || d.Truncated != w.truncated || d.Offset != w.offset:
				t.Errorf("binary/size/truncated/offset = %v/%d/%v/%d, want %v/%d/%v/%d (%s)", d.Binary, d.Size, d.Truncated, d.Offset, w.binary, w.size, w.truncated, w.offset, raw)
			case !reflect.DeepEqual(d.StartLine, w.startLine) || !reflect.DeepEqual(d.EndLine, w.endLine) || !reflect.DeepEqual(d.TotalLines, w.totalLines):
				t.Errorf("lines %v-%v of %v, want %v-%v of %v (%s)", intp(d.StartLine), intp(d.EndLine), intp(d.TotalLines), intp(w.startLine), intp(w.endLine), intp(w.totalLines), raw)
			case d.Encoding == nil && w.encoding != "" || d.Encoding != nil && *d.Encoding != w.encoding:
				t.Errorf("encoding %q, want %q", strp(d.Encoding), w.encoding)
			case d.Commit == nil && w.commit != "" || d.Commit != nil && *d.Commit != w.commit:
				t.Errorf("commit %q, want %q", strp(d.Commit), w.commit)
			case d.PathBase64 != w.pathB64 || d.InvalidUTF8 != w.invalid:
				t.Errorf("pathBase64 %q invalidUtf8 %v (%s)", d.PathBase64, d.InvalidUTF8, raw)
			case d.Content != nil && int64(len(*d.Content)) > d.MaxBytes*2:
				t.Errorf("content over budget: %d", len(*d.Content))
			}
			if d.Worktree != (tt.args["worktree"] == true) || (d.Blob == nil) != d.Worktree {
				t.Errorf("worktree %v blob %v", d.Worktree, strp(d.Blob))
			}
		})
	}
}

func strp(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

func intp(n *int64) any {
	if n == nil {
		return nil
	}
	return *n
}

// TestFileReadRefusals: bad requests come back as a clear argument error
// or a 10010 failure naming the command, and nothing is written.
func TestFileReadRefusals(t *testing.T) {
	f := newFileFixture(t)
	cwd, _ := os.Getwd()
	before := snapshot(t, f.repo)
	for _, tc := range []struct {
		name    string
		args    map[string]any
		argErr  string // want an *sdk.ArgumentError with this text
		failErr string // or a 10010 failure with this text
	}{
		{"rev as an option", map[string]any{"path": "gone.txt", "rev": "--output=pwned"}, "arguments.rev must not start with '-'", ""},
		{"rev as a config flag", map[string]any{"path": "gone.txt", "rev": "-c core.pager=touch pwned"}, "must not start with '-'", ""},
		{"rev as upload-pack", map[string]any{"path": "gone.txt", "rev": "--upload-pack=touch pwned"}, "must not start with '-'", ""},
		{"path that looks like an option", map[string]any{"path": "--output=pwned"}, "", `"--output=pwned" does not exist at HEAD`},
		{"path that climbs out", map[string]any{"path": "../x"}, "without '..'", ""},
		{"option as base64 path", map[string]any{"pathBase64": base64.StdEncoding.EncodeToString([]byte("--output=pwned"))}, "", `"--output=pwned" does not exist at HEAD`},
		{"absolute path outside", map[string]any{"path": filepath.Join(f.outside, "secret.txt"), "worktree": true}, "inside the repository", ""},
		{"link leaving the repository", map[string]any{"path": "out-link", "worktree": true}, "leads outside the repository", ""},
		{"git directory", map[string]any{"path": ".git/config", "worktree": true}, "must not point into a .git directory", ""},
		{"both path forms", map[string]any{"path": "a", "pathBase64": "YQ=="}, "not both", ""},
		{"bad base64", map[string]any{"pathBase64": "%%%"}, "base64", ""},
		{"rev and worktree", map[string]any{"path": "gone.txt", "rev": "HEAD", "worktree": true}, "not both", ""},
		{"line and byte range", map[string]any{"path": "gone.txt", "startLine": 1, "offset": 0}, "not both", ""},
		{"end before start", map[string]any{"path": "gone.txt", "startLine": 3, "endLine": 2}, "must not be before", ""},
		{"start past the end", map[string]any{"path": "docs/notes.md", "startLine": 9}, "past the end of the file, which has 4 lines", ""},
		{"offset past the end", map[string]any{"path": "gone.txt", "offset": 99}, "past the end of the file (4 bytes)", ""},
		{"bad encoding", map[string]any{"path": "gone.txt", "encoding": "hex"}, `"base64"`, ""},
		{"deleted at that revision", map[string]any{"path": "gone.txt", "rev": f.c3}, "", `"gone.txt" does not exist at ` + f.c3},
		{"directory at a revision", map[string]any{"path": "docs"}, "", "is a directory"},
		{"directory in the work tree", map[string]any{"path": "docs", "worktree": true}, "is a directory", ""},
		{"missing in the work tree", map[string]any{"path": "nope.txt", "worktree": true}, "does not exist in the work tree", ""},
		{"unknown revision", map[string]any{"path": "gone.txt", "rev": "no-such-branch"}, "", "does not name a commit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.args["repoPath"] = f.repo
			if tc.argErr != "" {
				mustArgError(t, "file.read", tc.args, tc.argErr)
				return
			}
			fd := mustFail(t, "file.read", tc.args)
			if !strings.Contains(fd.Details, tc.failErr) {
				t.Fatalf("details %q, want %q", fd.Details, tc.failErr)
			}
		})
	}
	if d := diffSnapshots(before, snapshot(t, f.repo)); len(d) > 0 {
		t.Fatalf("file.read changed the repository: %v", d)
	}
	assertNoPwned(t, f.repo, cwd, f.outside)
}

// TestFileReadLargeBlobStopsAtBudget: a blob far larger than the budget
// comes back cut to the budget with its full size, from the revision and
// from the work tree, and binary detection does not need the whole blob.
func TestFileReadLargeBlobStopsAtBudget(t *testing.T) {
	repo := newRepo(t)
	line := strings.Repeat("x", 99) + "\n"
	big := strings.Repeat(line, 40000) // 4 MB, past gitexec.MaxStdout
	write(t, repo, "big.txt", big)
	write(t, repo, "big.bin", "\x00"+big)
	commitAll(t, repo, "big")
	for _, tc := range []struct {
		name    string
		args    map[string]any
		content string
		start   int64
	}{
		{"head of the blob", map[string]any{"path": "big.txt", "maxBytes": 250}, line + line, 1},
		{"lines deep inside", map[string]any{"path": "big.txt", "startLine": 30000, "maxBytes": 150}, line, 30000},
		{"work tree", map[string]any{"path": "big.txt", "worktree": true, "maxBytes": 100}, line, 1},
		{"work tree byte range far in", map[string]any{"path": "big.txt", "worktree": true, "offset": 3_000_000, "length": 50}, strings.Repeat("x", 50), 0},
		{"binary", map[string]any{"path": "big.bin", "maxBytes": 100}, "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.args["repoPath"] = repo
			var d fileReadData
			raw := mustOK(t, "file.read", tc.args, &d)
			if strp(d.Content) != tc.content && !(tc.content == "" && d.Content == nil) {
				t.Fatalf("content %.80q, want %.80q", strp(d.Content), tc.content)
			}
			if d.Size < int64(len(big)) || d.TotalLines != nil {
				t.Fatalf("size %d totalLines %v: %.300s", d.Size, intp(d.TotalLines), raw)
			}
			if tc.start > 0 && *d.StartLine != tc.start {
				t.Fatalf("startLine %d", *d.StartLine)
			}
			if d.Content != nil && tc.args["length"] == nil && !d.Truncated {
				t.Fatalf("not marked truncated: %.300s", raw)
			}
		})
	}
}

func TestFileBlame(t *testing.T) {
	f := newFileFixture(t)
	ada := blameCommit{Hash: f.c1, AuthorName: "Ada Author", AuthorEmail: "ada@example.com", AuthorTime: authorTime, Summary: "add notes"}
	zoe := blameCommit{Hash: f.c2, AuthorName: "Zoë Ærø-Łukasz", AuthorEmail: "zoe@example.com", AuthorTime: authorTime, Summary: "rename notes"}
	back := blameCommit{Hash: f.c4, AuthorName: "Ada Author", AuthorEmail: "ada@example.com", AuthorTime: authorTime, Summary: "bring gone back"}
	old := "notes.txt"
	tests := []struct {
		name      string
		args      map[string]any
		hunks     []blameHunk
		commits   []blameCommit
		start     int64
		end       int64
		truncated bool
	}{
		{"whole file across a rename", map[string]any{"path": "docs/notes.md"},
			[]blameHunk{{StartLine: 1, Lines: 3, Commit: f.c1, OrigStartLine: 1, OrigPath: &old}, {StartLine: 4, Lines: 1, Commit: f.c2, OrigStartLine: 4}},
			[]blameCommit{ada, zoe}, 1, 4, false},
		{"one line", map[string]any{"path": "docs/notes.md", "startLine": 4, "endLine": 4},
			[]blameHunk{{StartLine: 4, Lines: 1, Commit: f.c2, OrigStartLine: 4}}, []blameCommit{zoe}, 4, 4, false},
		{"line cap", map[string]any{"path": "docs/notes.md", "startLine": 2, "maxLines": 2},
			[]blameHunk{{StartLine: 2, Lines: 2, Commit: f.c1, OrigStartLine: 2, OrigPath: &old}}, []blameCommit{ada}, 2, 3, true},
		{"endLine past the end", map[string]any{"path": "docs/notes.md", "startLine": 4, "endLine": 50},
			[]blameHunk{{StartLine: 4, Lines: 1, Commit: f.c2, OrigStartLine: 4}}, []blameCommit{zoe}, 4, 4, false},
		{"at an older revision", map[string]any{"path": "notes.txt", "rev": f.c1},
			[]blameHunk{{StartLine: 1, Lines: 3, Commit: f.c1, OrigStartLine: 1}}, []blameCommit{ada}, 1, 3, false},
		{"deleted and re-added", map[string]any{"path": "gone.txt"},
			[]blameHunk{{StartLine: 1, Lines: 1, Commit: f.c4, OrigStartLine: 1}}, []blameCommit{back}, 1, 1, false},
		{"non-UTF-8 name", map[string]any{"pathBase64": f.latinB64},
			[]blameHunk{{StartLine: 1, Lines: 1, Commit: f.c1, OrigStartLine: 1}}, []blameCommit{ada}, 1, 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.args["repoPath"] = f.repo
			var d fileBlameData
			raw := mustOK(t, "file.blame", tt.args, &d)
			for i := range d.Hunks {
				d.Hunks[i].origPathRaw = nil
			}
			if !reflect.DeepEqual(d.Hunks, tt.hunks) || !reflect.DeepEqual(d.Commits, tt.commits) {
				t.Fatalf("got %s\nwant hunks %+v commits %+v", raw, tt.hunks, tt.commits)
			}
			if d.StartLine != tt.start || d.EndLine != tt.end || d.Truncated != tt.truncated {
				t.Fatalf("lines %d-%d truncated %v: %s", d.StartLine, d.EndLine, d.Truncated, raw)
			}
			if tt.args["pathBase64"] != nil && (d.PathBase64 != f.latinB64 || !strings.Contains(d.Path, "caf")) {
				t.Fatalf("path %q pathBase64 %q", d.Path, d.PathBase64)
			}
		})
	}
}

// TestFileBlameMovesAndCopies: lines moved inside a file or copied from
// another file are attributed to their origin only when asked.
func TestFileBlameMovesAndCopies(t *testing.T) {
	repo := newRepo(t)
	block := func(tag string) string {
		var b strings.Builder
		for i := 0; i < 4; i++ {
			b.WriteString(tag + " line " + strings.Repeat(string(rune('a'+i)), 30) + " with enough letters\n")
		}
		return b.String()
	}
	write(t, repo, "moved.txt", block("first")+block("second"))
	write(t, repo, "src.txt", block("shared")+block("kept"))
	orig := commitAll(t, repo, "original")
	write(t, repo, "moved.txt", block("second")+block("first"))
	write(t, repo, "src.txt", block("kept"))
	write(t, repo, "dst.txt", block("shared"))
	change := commitAll(t, repo, "move and copy")
	src := "src.txt"
	for _, tc := range []struct {
		name string
		args map[string]any
		want []blameHunk
	}{
		{"copy not detected", map[string]any{"path": "dst.txt"},
			[]blameHunk{{StartLine: 1, Lines: 4, Commit: change, OrigStartLine: 1}}},
		{"copy detected", map[string]any{"path": "dst.txt", "detectCopies": true},
			[]blameHunk{{StartLine: 1, Lines: 4, Commit: orig, OrigStartLine: 1, OrigPath: &src}}},
		{"move detected", map[string]any{"path": "moved.txt", "detectMoves": true},
			[]blameHunk{{StartLine: 1, Lines: 4, Commit: orig, OrigStartLine: 5}, {StartLine: 5, Lines: 4, Commit: orig, OrigStartLine: 1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.args["repoPath"] = repo
			var d fileBlameData
			raw := mustOK(t, "file.blame", tc.args, &d)
			for i := range d.Hunks {
				d.Hunks[i].origPathRaw = nil
			}
			if !reflect.DeepEqual(d.Hunks, tc.want) {
				t.Fatalf("got %s\nwant %+v", raw, tc.want)
			}
		})
	}
}

func TestFileBlameRefusals(t *testing.T) {
	f := newFileFixture(t)
	write(t, f.repo, "empty.txt", "")
	git(t, f.repo, "add", "empty.txt")
	git(t, f.repo, "commit", "-q", "-m", "empty")
	cwd, _ := os.Getwd()
	before := snapshot(t, f.repo)
	for _, tc := range []struct {
		name    string
		args    map[string]any
		argErr  string
		failErr string
	}{
		{"rev as an option", map[string]any{"path": "gone.txt", "rev": "--output=pwned"}, "must not start with '-'", ""},
		{"rev as upload-pack", map[string]any{"path": "gone.txt", "rev": "--upload-pack=touch pwned"}, "must not start with '-'", ""},
		{"path that looks like an option", map[string]any{"path": "--output=pwned"}, "", "does not exist at HEAD"},
		{"path that climbs out", map[string]any{"path": "../gone.txt"}, "without '..'", ""},
		{"start past the end", map[string]any{"path": "docs/notes.md", "startLine": 9}, "past the end of the file, which has 4 lines", ""},
		{"start past an empty file", map[string]any{"path": "empty.txt", "startLine": 2}, "empty", ""},
		{"end before start", map[string]any{"path": "gone.txt", "startLine": 2, "endLine": 1}, "must not be before", ""},
		{"directory", map[string]any{"path": "docs"}, "", "is a directory"},
		{"deleted at that revision", map[string]any{"path": "gone.txt", "rev": f.c3}, "", "does not exist at"},
		{"cap over the maximum", map[string]any{"path": "gone.txt", "maxLines": maxBlameLines + 1}, "arguments.maxLines must be between", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.args["repoPath"] = f.repo
			if tc.argErr != "" {
				mustArgError(t, "file.blame", tc.args, tc.argErr)
				return
			}
			fd := mustFail(t, "file.blame", tc.args)
			if !strings.Contains(fd.Details, tc.failErr) {
				t.Fatalf("details %q, want %q", fd.Details, tc.failErr)
			}
		})
	}
	var d fileBlameData
	mustOK(t, "file.blame", map[string]any{"repoPath": f.repo, "path": "empty.txt"}, &d)
	if len(d.Hunks) != 0 || d.EndLine != 0 || d.Truncated {
		t.Fatalf("empty file: %+v", d)
	}
	if d := diffSnapshots(before, snapshot(t, f.repo)); len(d) > 0 {
		t.Fatalf("file.blame changed the repository: %v", d)
	}
	assertNoPwned(t, f.repo, cwd, f.outside)
}

// TestFileToolsValuesFollowEndOfOptions: the caller's revision reaches git
// only after --end-of-options (then only its object id is used) and the
// path only after "--".
func TestFileToolsValuesFollowEndOfOptions(t *testing.T) {
	const rev, dir = "userrev-x", "userpath-x"
	repo := newRepo(t)
	write(t, repo, dir+"/f.txt", "x\n")
	commitAll(t, repo, "second")
	git(t, repo, "branch", rev)
	var mu sync.Mutex
	var argvs [][]string
	p := New()
	p.runner = &gitexec.Runner{Observe: func(_ string, args []string) {
		mu.Lock()
		argvs = append(argvs, args)
		mu.Unlock()
	}}
	for _, c := range []map[string]any{
		{"tool": "file.read", "rev": rev, "path": dir + "/f.txt"},
		{"tool": "file.blame", "rev": rev, "path": dir + "/f.txt", "detectMoves": true, "detectCopies": true, "ignoreWhitespace": true},
	} {
		tool := c["tool"].(string)
		delete(c, "tool")
		c["repoPath"] = repo
		raw, _ := json.Marshal(c)
		mu.Lock()
		argvs = nil
		mu.Unlock()
		res, err := p.CallTool(context.Background(), &sdk.Call{Tool: tool, Arguments: raw})
		if err != nil || res.Error != nil {
			t.Fatalf("%s: %v %+v", tool, err, res)
		}
		mu.Lock()
		seenRev, seenPath := false, false
		for _, argv := range argvs {
			guard := len(argv)
			for _, g := range []string{"--end-of-options", "--"} {
				if i := slices.Index(argv, g); i >= 0 && i < guard {
					guard = i
				}
			}
			for i, a := range argv {
				if strings.Contains(a, rev) || strings.Contains(a, dir) {
					seenRev = seenRev || strings.Contains(a, rev)
					seenPath = seenPath || strings.Contains(a, dir)
					if i < guard {
						t.Errorf("%s: caller value %q before --end-of-options / --: %q", tool, a, argv)
					}
				}
			}
		}
		mu.Unlock()
		if !seenRev || !seenPath {
			t.Errorf("%s: caller values did not reach git (rev %v, path %v); the check proves nothing", tool, seenRev, seenPath)
		}
	}
}

// TestRangeSinkChunking: the result does not depend on how git's output
// is split into writes (one write, or one byte at a time), and binary
// detection sees the whole 8000-byte window even when the budget is
// reached long before it.
func TestRangeSinkChunking(t *testing.T) {
	text := strings.Repeat("abc\n", 3000) // 12000 bytes, 3000 lines
	lateNUL := strings.Repeat("x", 5000) + "\x00" + strings.Repeat("y", 5000)
	for _, tc := range []struct {
		name    string
		data    string
		plan    readPlan
		content string
		binary  bool
		trunc   bool
	}{
		{"lines", text, readPlan{lines: true, start: 2, end: 3, budget: 100}, "abc\nabc\n", false, false},
		{"lines to the budget", text, readPlan{lines: true, start: 10, budget: 9}, "abc\nabc\n", false, true},
		{"bytes", text, readPlan{offset: 4, length: 2, budget: 100}, "ab", false, false},
		{"late NUL with a small budget", lateNUL, readPlan{lines: true, start: 1, budget: 10}, "", true, false},
		{"late NUL as base64", lateNUL, readPlan{offset: 0, length: 3, budget: 10, base64: true}, "eHh4", true, false},
	} {
		for _, step := range []int{len(tc.data), 1, 7} {
			t.Run(tc.name+"/"+strconv.Itoa(step), func(t *testing.T) {
				plan := tc.plan
				s, err := newRangeSink(&plan, int64(len(tc.data)))
				if err != nil {
					t.Fatal(err)
				}
				for i := 0; i < len(tc.data); i += step {
					if _, err := s.Write([]byte(tc.data[i:min(i+step, len(tc.data))])); err != nil {
						break
					}
				}
				var d fileReadData
				d.MaxBytes = plan.budget
				if err := s.finish(&d); err != nil {
					t.Fatal(err)
				}
				if strp(d.Content) != tc.content && !(tc.content == "" && d.Content == nil) || d.Binary != tc.binary || d.Truncated != tc.trunc {
					t.Fatalf("content %q binary %v truncated %v", strp(d.Content), d.Binary, d.Truncated)
				}
			})
		}
	}
}

// TestFileBlameThroughAMerge: after a merge, each line is attributed to
// the branch commit that wrote it, not to the merge.
func TestFileBlameThroughAMerge(t *testing.T) {
	repo := newRepo(t)
	write(t, repo, "m.txt", "1\n2\n3\n4\n5\n")
	base := commitAll(t, repo, "base")
	git(t, repo, "checkout", "-q", "-b", "side")
	write(t, repo, "m.txt", "one\n2\n3\n4\n5\n")
	side := commitAll(t, repo, "side")
	git(t, repo, "checkout", "-q", "main")
	write(t, repo, "m.txt", "1\n2\n3\n4\nfive\n")
	main := commitAll(t, repo, "main")
	git(t, repo, "merge", "-q", "--no-edit", "side")
	var r fileReadData
	mustOK(t, "file.read", map[string]any{"repoPath": repo, "path": "m.txt"}, &r)
	if strp(r.Content) != "one\n2\n3\n4\nfive\n" {
		t.Fatalf("merged content %q", strp(r.Content))
	}
	var d fileBlameData
	raw := mustOK(t, "file.blame", map[string]any{"repoPath": repo, "path": "m.txt"}, &d)
	var got []string
	for _, h := range d.Hunks {
		got = append(got, h.Commit+":"+strconv.FormatInt(h.StartLine, 10)+"+"+strconv.FormatInt(h.Lines, 10))
	}
	want := []string{side + ":1+1", base + ":2+3", main + ":5+1"}
	if !reflect.DeepEqual(got, want) || len(d.Commits) != 3 {
		t.Fatalf("got %v, want %v (%s)", got, want, raw)
	}
}

// TestFileBlameIgnoresConfiguredMailmapFile: repository config may name a
// mailmap file anywhere on the machine; blame must not read it (the
// runner sets mailmap.file empty), while the repository's own .mailmap,
// which is its content, still applies.
func TestFileBlameIgnoresConfiguredMailmapFile(t *testing.T) {
	f := newFileFixture(t)
	outside := filepath.Join(t.TempDir(), "mailmap")
	if err := os.WriteFile(outside, []byte("Outside Name <ada@example.com>\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, f.repo, "config", "mailmap.file", outside)
	var d fileBlameData
	mustOK(t, "file.blame", map[string]any{"repoPath": f.repo, "path": "docs/notes.md"}, &d)
	for _, c := range d.Commits {
		if c.AuthorName == "Outside Name" {
			t.Fatalf("blame read the mailmap file named by repository config: %+v", c)
		}
	}
	if len(d.Commits) == 0 || d.Commits[0].AuthorName != "Ada Author" {
		t.Fatalf("commits %+v", d.Commits)
	}
}
