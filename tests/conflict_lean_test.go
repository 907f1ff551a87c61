package tests

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tiktoken-go/tokenizer"
)

// deepConflictRepo stops a merge in a repository whose 4,000-line file
// conflicts at base line 2,500 and again near its end (line 3,990), with
// clean changes on both sides before them so the line numbers differ per
// side and in the work tree, plus a binary conflict and a delete/modify
// conflict.
func deepConflictRepo(t *testing.T) string {
	t.Helper()
	repo := canonicalTempDir(t)
	git(t, repo, "init", "-q", "-b", "main")
	lines := make([]string, 4000)
	for i := range lines {
		lines[i] = fmt.Sprintf("line %d of the big file", i+1)
	}
	big := func(edit func([]string) []string) string {
		l := edit(append([]string(nil), lines...))
		return strings.Join(l, "\n") + "\n"
	}
	writeFile(t, filepath.Join(repo, "big.txt"), big(func(l []string) []string { return l }))
	writeFile(t, filepath.Join(repo, "logo.bin"), "\x00base\x00")
	writeFile(t, filepath.Join(repo, "gone.txt"), "base\n")
	git(t, repo, "add", ".")
	git(t, repo, "commit", "-q", "-m", "base")
	git(t, repo, "checkout", "-q", "-b", "side")
	writeFile(t, filepath.Join(repo, "big.txt"), big(func(l []string) []string {
		l = append(l[:199:199], l[200:]...) // drop line 200: theirs is one line shorter before the conflicts
		l[2498] = "THEIRS at 2500"
		l[3988] = "THEIRS near the end"
		return l
	}))
	writeFile(t, filepath.Join(repo, "logo.bin"), "\x00side\x00")
	writeFile(t, filepath.Join(repo, "gone.txt"), "side edit\n")
	git(t, repo, "commit", "-q", "-am", "side change")
	git(t, repo, "checkout", "-q", "main")
	writeFile(t, filepath.Join(repo, "big.txt"), big(func(l []string) []string {
		l[2499] = "OURS at 2500"
		l[3989] = "OURS near the end"
		// two lines after line 100: ours is two lines longer before the conflicts
		return append(l[:100:100], append([]string{"ours extra 1", "ours extra 2"}, l[100:]...)...)
	}))
	writeFile(t, filepath.Join(repo, "logo.bin"), "\x00main\x00")
	git(t, repo, "rm", "-q", "gone.txt")
	git(t, repo, "commit", "-q", "-am", "main change")
	cmd := exec.Command("git", "-C", repo, "merge", "-q", "side")
	cmd.Env = append(gitEnv(), "GIT_MERGE_AUTOEDIT=no")
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Fatalf("the merge did not conflict: %s", out)
	}
	return repo
}

// conflict.read's lean answer shows both sides of a conflict deep in a
// large file with the right line numbers, flags the binary and
// delete/modify conflicts, reads a side's line range exactly, and costs at
// most 1.5× `git diff` in o200k_base tokens.
func TestConflictReadLeanDeepConflict(t *testing.T) {
	repo := deepConflictRepo(t)
	s := startServer(t, baseEnv(t))
	initialize(t, s)
	id := 0
	read := func(args map[string]any) (map[string]any, string) {
		t.Helper()
		id++
		args["repoPath"] = repo
		r := s.call(id, "tools/call", map[string]any{"name": "conflict.read", "arguments": args})
		p := toolPayload(t, r)
		if p["error"] != nil {
			t.Fatalf("conflict.read %v: %s", args, r.raw)
		}
		raw, _ := json.Marshal(p)
		return p["data"].(map[string]any), string(raw)
	}
	data, raw := read(map[string]any{})
	files := map[string]map[string]any{}
	for _, f := range data["files"].([]any) {
		files[f.(map[string]any)["path"].(string)] = f.(map[string]any)
	}
	// The work tree: ours' two extra lines shift the conflict at base line
	// 2,500 to 2,502; the markers start there.
	wt, err := os.ReadFile(filepath.Join(repo, "big.txt"))
	if err != nil {
		t.Fatal(err)
	}
	wtLines := strings.Split(string(wt), "\n")
	regions, _ := files["big.txt"]["regions"].([]any)
	if len(regions) != 2 {
		t.Fatalf("want 2 regions in big.txt, got %s", raw)
	}
	tests := []struct {
		name               string
		region             map[string]any
		ours, base, theirs string
		at                 []any // ours, base, theirs first lines
		before0, after0    string
	}{
		{"line 2500", regions[0].(map[string]any), "OURS at 2500\n", "line 2500 of the big file\n", "THEIRS at 2500\n",
			[]any{2502.0, 2500.0, 2499.0}, "line 2497 of the big file", "line 2501 of the big file"},
		{"near the end", regions[1].(map[string]any), "OURS near the end\n", "line 3990 of the big file\n", "THEIRS near the end\n",
			[]any{3992.0, 3990.0, 3989.0}, "line 3987 of the big file", "line 3991 of the big file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rg := tt.region
			if rg["ours"] != tt.ours || rg["base"] != tt.base || rg["theirs"] != tt.theirs {
				t.Fatalf("sides: %v", rg)
			}
			if fmt.Sprint(rg["at"]) != fmt.Sprint(tt.at) {
				t.Fatalf("at = %v, want %v", rg["at"], tt.at)
			}
			ln, _ := rg["lines"].([]any)
			if len(ln) != 2 {
				t.Fatalf("no work-tree lines: %v", rg)
			}
			first, last := int(ln[0].(float64)), int(ln[1].(float64))
			if !strings.HasPrefix(wtLines[first-1], "<<<<<<<") || !strings.HasPrefix(wtLines[last-1], ">>>>>>>") {
				t.Fatalf("lines %d-%d of the work tree are %q … %q, not the markers", first, last, wtLines[first-1], wtLines[last-1])
			}
			if !strings.HasPrefix(rg["before"].(string), tt.before0+"\n") || !strings.HasPrefix(rg["after"].(string), tt.after0+"\n") ||
				strings.Count(rg["before"].(string), "\n") != 3 || strings.Count(rg["after"].(string), "\n") != 3 {
				t.Fatalf("context: before %q after %q", rg["before"], rg["after"])
			}
		})
	}
	if files["logo.bin"]["binary"] != true || files["logo.bin"]["regions"] != nil {
		t.Fatalf("binary conflict: %v", files["logo.bin"])
	}
	if files["gone.txt"]["kind"] != "deleted-by-us" || files["gone.txt"]["regions"] != nil {
		t.Fatalf("delete/modify conflict: %v", files["gone.txt"])
	}
	for _, k := range []string{"guidance", "conflictedFileCount", "fileListTruncated", "maxBytesPerSide", "sides"} {
		if strings.Contains(raw, `"`+k+`"`) {
			t.Fatalf("the lean answer carries %q: %s", k, raw)
		}
	}

	t.Run("tokens", func(t *testing.T) {
		// What the model receives (the JSON of structuredContent) against
		// what `git diff` prints in the same state.
		cmd := exec.Command("git", "-C", repo, "diff")
		cmd.Env = gitEnv()
		diff, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatal(err)
		}
		enc, err := tokenizer.Get(tokenizer.O200kBase)
		if err != nil {
			t.Fatal(err)
		}
		count := func(s string) int {
			ids, _, err := enc.Encode(s)
			if err != nil {
				t.Fatal(err)
			}
			return len(ids)
		}
		ours, git := count(raw), count(string(diff))
		t.Logf("conflict.read %d tokens, git diff %d tokens (%.2f×)", ours, git, float64(ours)/float64(git))
		if float64(ours) > 1.5*float64(git) {
			t.Fatalf("conflict.read costs %d tokens, more than 1.5× git diff's %d:\n%s", ours, git, raw)
		}
	})

	sides := []struct {
		name       string
		args       map[string]any
		want       string
		lines      []any
		totalLines float64
	}{
		{"ours range", map[string]any{"side": "ours", "path": "big.txt", "startLine": 2501, "endLine": 2503},
			"line 2499 of the big file\nOURS at 2500\nline 2501 of the big file\n", []any{2501.0, 2503.0}, 4002},
		{"theirs range", map[string]any{"side": "theirs", "path": "big.txt", "startLine": 2499, "endLine": 2499},
			"THEIRS at 2500\n", []any{2499.0, 2499.0}, 3999},
		{"base tail", map[string]any{"side": "base", "path": "big.txt", "startLine": 3999},
			"line 3999 of the big file\nline 4000 of the big file\n", []any{3999.0, 4000.0}, 4000},
		{"surviving side of a delete/modify", map[string]any{"side": "theirs", "path": "gone.txt"},
			"side edit\n", []any{1.0, 1.0}, 1},
	}
	for _, tt := range sides {
		t.Run(tt.name, func(t *testing.T) {
			d, raw := read(tt.args)
			if d["text"] != tt.want || fmt.Sprint(d["lines"]) != fmt.Sprint(tt.lines) || d["totalLines"] != tt.totalLines || d["truncated"] != nil {
				t.Fatalf("side read %v: %s", tt.args, raw)
			}
		})
	}
	t.Run("binary side", func(t *testing.T) {
		d, raw := read(map[string]any{"side": "ours", "path": "logo.bin"})
		if d["binary"] != true || d["text"] != nil {
			t.Fatalf("binary side: %s", raw)
		}
	})

	refusals := []struct {
		name string
		args map[string]any
		want string
	}{
		{"side without path", map[string]any{"side": "ours"}, "arguments.path is required with side"},
		{"path not unmerged", map[string]any{"side": "ours", "path": "nope.txt"}, "is not an unmerged path"},
		{"deleted side", map[string]any{"side": "ours", "path": "gone.txt"}, "has no ours version"},
		{"range reversed", map[string]any{"side": "ours", "path": "big.txt", "startLine": 9, "endLine": 3}, "is before startLine"},
		{"range without side", map[string]any{"startLine": 3}, "add side"},
	}
	for _, tt := range refusals {
		t.Run(tt.name, func(t *testing.T) {
			id++
			args := map[string]any{"repoPath": repo}
			for k, v := range tt.args {
				args[k] = v
			}
			r := s.call(id, "tools/call", map[string]any{"name": "conflict.read", "arguments": args})
			if !strings.Contains(r.raw, tt.want) || !strings.Contains(r.raw, `"isError":true`) {
				t.Fatalf("want a refusal saying %q, got %s", tt.want, r.raw)
			}
		})
	}
}
