package tests

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// snapshot records every file and directory below root: mode, size,
// modification time and content hash.
func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		sig := info.Mode().String() + " " + info.ModTime().Format(time.RFC3339Nano)
		if info.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(b)
			sig += " " + hex.EncodeToString(sum[:])
		}
		out[p] = sig
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Every read tool leaves the repository byte-for-byte unchanged: index,
// refs, reflogs, objects, and every mtime under .git — even with a
// stat-dirty index, which plain `git status` would rewrite.
func TestReadToolsLeaveTheRepositoryUntouched(t *testing.T) {
	repo := fixtureRepo(t)
	git(t, repo, "stash", "push", "-q", "-m", "wip", "--", "README.md")
	git(t, repo, "checkout", "-q", "-b", "side")
	writeFile(t, filepath.Join(repo, "src", "app.go"), "package app\n\nfunc Answer() int { return 7 }\n")
	git(t, repo, "commit", "-q", "-am", "side change")
	git(t, repo, "checkout", "-q", "main")
	// Make the index stat-dirty: same content, new mtime.
	future := time.Now().Add(2 * time.Second)
	if err := os.Chtimes(filepath.Join(repo, "src", "app.go"), future, future); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, repo)

	s := startServer(t, append(baseEnv(t), "FLUXGIT_GATEWAY_ADDR=127.0.0.1:9", "FLUXGIT_MCP_AUDIT_DISABLED=1"))
	initialize(t, s)
	var listed struct {
		Tools []struct {
			Name        string          `json:"name"`
			Annotations map[string]bool `json:"annotations"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(s.call(1, "tools/list", nil).Result, &listed); err != nil {
		t.Fatal(err)
	}
	extra := map[string]map[string]any{
		"repo.scope":             {"path": "src"},
		"commit.details":         {"commit": "HEAD"},
		"history.search":         {"text": "Answer"},
		"repo.conflictPreflight": {"targetRef": "side"},
		"diff.text":              {"base": "HEAD~1", "head": "side"},
		"file.read":              {"path": "src/app.go", "rev": "side"},
		"file.blame":             {"path": "src/app.go", "detectMoves": true, "detectCopies": true},
		"fleet.digest":           {"sinceMs": 0, "repoPaths": []string{repo}},
		"fleet.radar":            {"repoPaths": []string{repo}},
	}
	called, readOnly := 0, 0
	for i, tool := range listed.Tools {
		if !tool.Annotations["readOnlyHint"] || tool.Name == "operation.status" {
			// operation.status reads a proposal from the gateway and never
			// opens a repository (tests/handshake_test.go covers it).
			continue
		}
		readOnly++
		args := map[string]any{"repoPath": repo}
		for k, v := range extra[tool.Name] {
			args[k] = v
		}
		if tool.Name == "fleet.digest" || tool.Name == "fleet.radar" {
			delete(args, "repoPath")
		}
		r := s.call(10+i, "tools/call", map[string]any{"name": tool.Name, "arguments": args})
		if r.Error != nil {
			t.Errorf("%s: refused: %s", tool.Name, r.raw)
			continue
		}
		// A tool error may be a tool that never reached git: it would
		// prove nothing about leaving the repository alone.
		if p := toolPayload(t, r); p["error"] != nil {
			t.Errorf("%s: tool error instead of a result: %v", tool.Name, p["error"])
			continue
		}
		called++
	}
	if readOnly < 23 || called != readOnly {
		t.Fatalf("%d of %d listed read tools succeeded; want every one, and at least 23 listed", called, readOnly)
	}
	after := snapshot(t, repo)
	for p, sig := range before {
		if after[p] != sig {
			t.Errorf("changed: %s\n before %s\n after  %s", p, sig, after[p])
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			t.Errorf("created: %s", p)
		}
	}
	// Control: plain git status does rewrite this index, so the check
	// above is not vacuous.
	cmd := gitCmd(repo, "status", "--porcelain")
	cmd.Env = gitEnv()
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if snapshot(t, repo)[filepath.Join(repo, ".git", "index")] == before[filepath.Join(repo, ".git", "index")] {
		t.Fatal("control: plain git status left the stat-dirty index alone; the test proves nothing")
	}
}
