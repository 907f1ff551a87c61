package gitexec

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestWriteEnv(t *testing.T) {
	parent := []string{
		"HOME=/home/u", "PATH=/usr/bin", "GIT_DIR=/elsewhere", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=Agent", "LD_PRELOAD=/x.so", "DYLD_INSERT_LIBRARIES=/y", "SSH_ASKPASS=/ask",
		"GCM_INTERACTIVE=always", "PAGER=less", "LANG=de_DE.UTF-8",
	}
	env := writeEnv(parent, nil, "")
	for _, gone := range []string{"GIT_DIR", "GIT_CONFIG_GLOBAL", "GIT_AUTHOR_NAME", "LD_PRELOAD", "DYLD_INSERT_LIBRARIES", "SSH_ASKPASS", "GCM_INTERACTIVE", "PAGER", "LANG=de_DE.UTF-8"} {
		for _, kv := range env {
			if strings.HasPrefix(kv, gone+"=") || kv == gone {
				t.Errorf("%s kept: %q", gone, kv)
			}
		}
	}
	for _, want := range []string{"HOME=/home/u", "PATH=/usr/bin", "GIT_TERMINAL_PROMPT=0", "GIT_EDITOR=:", "LC_ALL=C", "LANG=C"} {
		if !slices.Contains(env, want) {
			t.Errorf("missing %s in %q", want, env)
		}
	}
	// The user's configuration must stay visible: nothing may hide it.
	for _, kv := range env {
		if strings.HasPrefix(kv, "GIT_CONFIG_NOSYSTEM=") || strings.HasPrefix(kv, "GIT_CONFIG_GLOBAL=") {
			t.Errorf("write env hides user config: %s", kv)
		}
	}
}

func TestWriterArgs(t *testing.T) {
	tests := []struct {
		hooks     bool
		wantHooks bool
	}{{false, true}, {true, false}}
	for _, tt := range tests {
		argv := (&Writer{Hooks: tt.hooks}).writeArgs("/r", []string{"commit", "-m", "x"})
		joined := strings.Join(argv, " ")
		if got := strings.Contains(joined, "core.hooksPath=/dev/null"); got != tt.wantHooks {
			t.Errorf("hooks=%v: hooksPath override present=%v in %q", tt.hooks, got, joined)
		}
		for _, must := range []string{"protocol.ext.allow=never", "core.fsmonitor=false", "--no-pager", "-C /r commit -m x"} {
			if !strings.Contains(joined, must) {
				t.Errorf("missing %q in %q", must, joined)
			}
		}
	}
}

// withHome gives the test its own HOME with a global config, and poisons
// the variables the writer must strip.
func withHome(t *testing.T, globalConfig string) string {
	t.Helper()
	home := t.TempDir()
	writeFile(t, filepath.Join(home, ".gitconfig"), globalConfig)
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	return home
}

func TestWriterKeepsUserConfigAndStripsGitEnv(t *testing.T) {
	repo := newRepo(t)
	other := newRepo(t)
	withHome(t, "[user]\n\tname = Global Person\n\temail = global@example.com\n")
	t.Setenv("GIT_DIR", filepath.Join(other, ".git"))
	t.Setenv("GIT_AUTHOR_NAME", "Injected Agent")
	t.Setenv("GIT_CONFIG_GLOBAL", "/dev/null")
	w := &Writer{}
	ctx := context.Background()
	top, err := w.Run(ctx, repo, "rev-parse", "--show-toplevel")
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(string(top)) != repo {
		t.Fatalf("GIT_DIR leaked: toplevel %q, want %q", top, repo)
	}
	writeFile(t, filepath.Join(repo, "b.txt"), "b\n")
	if _, err := w.Run(ctx, repo, "add", "b.txt"); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Run(ctx, repo, "commit", "-q", "-m", "by writer"); err != nil {
		t.Fatal(err)
	}
	got, err := w.Run(ctx, repo, "log", "-1", "--format=%an <%ae>")
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(string(got)) != "Global Person <global@example.com>" {
		t.Fatalf("author %q: the user's global identity must apply and GIT_AUTHOR_NAME must not", got)
	}
}

func TestWriterHooks(t *testing.T) {
	tests := []struct {
		name  string
		hooks bool
		ran   bool
	}{{"hooks off", false, false}, {"hooks on", true, true}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			repo := newRepo(t)
			withHome(t, "[user]\n\tname = U\n\temail = u@example.com\n")
			marker := filepath.Join(t.TempDir(), "marker")
			hook := filepath.Join(repo, ".git", "hooks", "pre-commit")
			if err := os.WriteFile(hook, []byte("#!/bin/sh\necho \"ran $SHIFT_WORKER_ID\" > '"+marker+"'\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(repo, "c.txt"), "c\n")
			// Env reaches the hooks (the gateway's guard variables).
			w := &Writer{Hooks: tt.hooks, Env: []string{"SHIFT_WORKER_ID=AAAAAA"}}
			if _, err := w.Run(context.Background(), repo, "add", "c.txt"); err != nil {
				t.Fatal(err)
			}
			if _, err := w.Run(context.Background(), repo, "commit", "-q", "-m", "c"); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(marker)
			if ran := err == nil; ran != tt.ran {
				t.Fatalf("hook ran=%v, want %v", ran, tt.ran)
			}
			if tt.ran && strings.TrimSpace(string(b)) != "ran AAAAAA" {
				t.Fatalf("the hook saw %q, want the Env variable", b)
			}
		})
	}
}

func TestWriterRefusesExtProtocol(t *testing.T) {
	repo := newRepo(t)
	withHome(t, "[protocol \"ext\"]\n\tallow = always\n")
	marker := filepath.Join(t.TempDir(), "marker")
	_, err := (&Writer{}).Run(context.Background(), repo, "ls-remote", "ext::sh -c touch% "+marker)
	if err == nil {
		t.Fatal("ext:: remote was allowed")
	}
	if _, statErr := os.Stat(marker); statErr == nil {
		t.Fatal("ext:: remote ran a command")
	}
}

func TestWriterTimeoutKillsTree(t *testing.T) {
	repo := newRepo(t)
	withHome(t, "[user]\n\tname = U\n\temail = u@example.com\n")
	pidFile := filepath.Join(t.TempDir(), "pid")
	hook := filepath.Join(repo, ".git", "hooks", "pre-commit")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\nsleep 60 &\necho $! > '"+pidFile+"'\nwait\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	w := &Writer{Hooks: true, Timeout: 2 * time.Second}
	_, err := w.Run(context.Background(), repo, "commit", "-q", "--allow-empty", "-m", "slow")
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("want ErrTimeout, got %v", err)
	}
	waitGone(t, readPid(t, pidFile))
}

func TestWriterUsageErrors(t *testing.T) {
	w := &Writer{}
	for _, args := range [][]string{nil, {"status", "a\x00b"}} {
		if _, err := w.Run(context.Background(), "/tmp", args...); !errors.Is(err, ErrUsage) {
			t.Errorf("%q: want ErrUsage, got %v", args, err)
		}
	}
	if _, err := w.Run(context.Background(), "relative", "status"); !errors.Is(err, ErrUsage) {
		t.Errorf("relative repo: want ErrUsage, got %v", err)
	}
}

// TestWriterNoPrompt: a hook sees an empty stdin and no controlling
// terminal, so nothing git starts can wait for a person to type.
func TestWriterNoPrompt(t *testing.T) {
	repo := newRepo(t)
	withHome(t, "[user]\n\tname = U\n\temail = u@example.com\n")
	out := filepath.Join(t.TempDir(), "out")
	hook := filepath.Join(repo, ".git", "hooks", "pre-commit")
	script := "#!/bin/sh\n" +
		"if read line; then echo stdin-had-data >> '" + out + "'; else echo stdin-empty >> '" + out + "'; fi\n" +
		"if (exec </dev/tty) 2>/dev/null; then echo tty-open >> '" + out + "'; else echo no-tty >> '" + out + "'; fi\n" +
		"echo \"prompt=$GIT_TERMINAL_PROMPT\" >> '" + out + "'\n"
	if err := os.WriteFile(hook, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := (&Writer{Hooks: true}).Run(context.Background(), repo, "commit", "-q", "--allow-empty", "-m", "x"); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Fields(string(b)); !slices.Equal(got, []string{"stdin-empty", "no-tty", "prompt=0"}) {
		t.Fatalf("hook saw %q", got)
	}
}
