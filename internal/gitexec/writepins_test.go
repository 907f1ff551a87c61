//go:build !windows

package gitexec

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A program named only by the repository's own configuration never runs
// in a write; the person's own (global) configuration still does.
func TestWriterPinsRepositoryPrograms(t *testing.T) {
	tests := []struct {
		name      string
		global    string // extra global config; MARK is replaced by the person's marker
		local     map[string]string
		attrs     string
		args      []string
		wantErr   error // nil: any outcome but the repository's program running
		personRan bool
	}{
		{name: "core.sshCommand", local: map[string]string{"core.sshCommand": "sh -c 'touch REPO; exit 1'"},
			args: []string{"push", "-q", "ssh://127.0.0.1:1/x", "HEAD:refs/heads/x"}},
		{name: "filter only the repository defines", local: map[string]string{"filter.evil.clean": "sh -c 'touch REPO; cat'"},
			attrs: "*.txt filter=evil\n", args: []string{"add", "-A"}, wantErr: ErrRepoProgram},
		{name: "filter the person defines too", global: "[filter \"evil\"]\n\tclean = \"sh -c 'touch MARK; cat'\"\n",
			local: map[string]string{"filter.evil.clean": "sh -c 'touch REPO; cat'"},
			attrs: "*.txt filter=evil\n", args: []string{"add", "-A"}, personRan: true},
		{name: "merge driver", local: map[string]string{"merge.evil.driver": "sh -c 'touch REPO'"},
			attrs: "*.txt merge=evil\n", args: []string{"status"}, wantErr: ErrRepoProgram},
		{name: "core.gitProxy", local: map[string]string{"core.gitProxy": "SCRIPT"},
			args: []string{"push", "-q", "git://127.0.0.1:1/x", "HEAD:refs/heads/x"}, wantErr: ErrRepoProgram},
		{name: "signing program", local: map[string]string{"gpg.program": "SCRIPT", "commit.gpgSign": "true"},
			args: []string{"commit", "-q", "--allow-empty", "-m", "signed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			repoMark, personMark := filepath.Join(dir, "repo-ran"), filepath.Join(dir, "person-ran")
			repo := newRepo(t)
			global := "[user]\n\tname = U\n\temail = u@example.com\n" + tt.global
			withHome(t, strings.ReplaceAll(global, "MARK", personMark))
			// SCRIPT is a program (gpg.program is run without a shell).
			script := filepath.Join(dir, "repo-program")
			if err := os.WriteFile(script, []byte("#!/bin/sh\ntouch '"+repoMark+"'\nexit 1\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			for k, v := range tt.local {
				gitT(t, repo, "config", k, strings.ReplaceAll(strings.ReplaceAll(v, "REPO", repoMark), "SCRIPT", script))
			}
			if tt.attrs != "" {
				writeFile(t, filepath.Join(repo, ".gitattributes"), tt.attrs)
				writeFile(t, filepath.Join(repo, "new.txt"), "new\n")
			}
			_, err := (&Writer{}).Run(context.Background(), repo, tt.args...)
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Fatalf("err %v, want %v", err, tt.wantErr)
			}
			if _, statErr := os.Stat(repoMark); statErr == nil {
				t.Fatalf("the repository's program ran (err %v)", err)
			}
			if _, statErr := os.Stat(personMark); (statErr == nil) != tt.personRan {
				t.Fatalf("the person's program ran=%v, want %v (err %v)", statErr == nil, tt.personRan, err)
			}
		})
	}
}

// pinArgs keeps the person's credential helpers and drops the
// repository's, and pins a single-valued key to the person's value.
func TestPinArgs(t *testing.T) {
	got, err := pinArgs([]scopedEntry{
		{"global", "credential.helper", "store"},
		{"global", "credential.https://example.com.helper", "cache"},
		{"local", "credential.helper", "!evil"},
		{"global", "core.sshcommand", "ssh -i key"},
		{"local", "core.sshcommand", "evil"},
		{"local", "gpg.program", "evil"},
		{"local", "user.name", "not a program"},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range [][2]string{
		{"core.sshcommand", "ssh -i key"}, {"gpg.program", "gpg"},
		{"credential.helper", ""}, {"credential.helper", "store"}, {"credential.https://example.com.helper", "cache"},
	} {
		if !slices.Contains(got, want) {
			t.Errorf("missing %q in %q", want, got)
		}
	}
	for _, o := range got {
		if o[1] == "evil" || o[1] == "!evil" || o[0] == "user.name" {
			t.Errorf("kept the repository's %q", o)
		}
	}
	if got, _ := pinArgs([]scopedEntry{{"global", "credential.helper", "store"}}); len(got) != 0 {
		t.Errorf("nothing set by the repository, yet overrides %q", got)
	}
}
