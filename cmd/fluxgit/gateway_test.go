package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/fluxgit/fluxgit/gateway/server"
	"github.com/fluxgit/fluxgit/host/repopath"
	"github.com/fluxgit/fluxgit/internal/credpaths"
)

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// runCmd runs the fluxgit command line in-process.
func runCmd(ctx context.Context, out *lockedBuffer, args ...string) error {
	root := newRootCmd()
	root.SetArgs(args)
	root.SetOut(out)
	root.SetErr(out)
	return root.ExecuteContext(ctx)
}

func exitCode(err error) int {
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	if err != nil {
		return exitUsage
	}
	return exitOK
}

func gatewayEnv(t *testing.T) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("FLUXGIT_RUN_DIR", dir)
	t.Setenv("FLUXGIT_MCP_AUDIT_DISABLED", "1")
	secret, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(secret, 0o700); err != nil { // the gateway insists
		t.Fatal(err)
	}
	t.Setenv(credpaths.EnvSecretDir, secret)
	t.Setenv(repopath.EnvAllowedRoots, "")
	os.Unsetenv(repopath.EnvAllowedRoots)
	return dir
}

// scriptedTerminal is a terminal whose person types answer; what the
// command writes to it is kept in shown.
type scriptedTerminal struct {
	in    *strings.Reader
	shown *lockedBuffer
}

func (s scriptedTerminal) Read(p []byte) (int, error)  { return s.in.Read(p) }
func (s scriptedTerminal) Write(p []byte) (int, error) { return s.shown.Write(p) }
func (scriptedTerminal) Close() error                  { return nil }

// withTerminal makes openTerminal hand out a terminal where the person
// types answer, or no terminal at all when answer is nil, for the rest of
// the test.
func withTerminal(t *testing.T, answer *string) *lockedBuffer {
	t.Helper()
	shown := &lockedBuffer{}
	prev := openTerminal
	t.Cleanup(func() { openTerminal = prev })
	openTerminal = func() (io.ReadWriteCloser, error) {
		if answer == nil {
			return nil, errNoTerminal
		}
		return scriptedTerminal{in: strings.NewReader(*answer), shown: shown}, nil
	}
	return shown
}

func ptr(s string) *string { return &s }

// A policy that cannot be loaded, or an address off loopback, stops the
// gateway before it listens: non-zero exit, a message, no session file.
func TestGatewayRefusesToStart(t *testing.T) {
	for _, tc := range []struct {
		name   string
		policy string // file content; "-" for a missing file, "" for none
		addr   string
		says   string
	}{
		{"missing policy file", "-", "127.0.0.1:0", "agent policy"},
		{"malformed policy", `{"version":`, "127.0.0.1:0", "agent policy"},
		{"unsupported policy version", `{"version":99}`, "127.0.0.1:0", "unsupported policy version"},
		{"non-loopback address", "", "0.0.0.0:0", "not loopback"},
		{"host name address", "", "localhost:0", "IP literal"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runDir := gatewayEnv(t)
			switch tc.policy {
			case "":
			case "-":
				t.Setenv("FLUXGIT_MCP_AGENT_POLICY", filepath.Join(runDir, "absent.yaml"))
			default:
				p := filepath.Join(runDir, "policy.json")
				if err := os.WriteFile(p, []byte(tc.policy), 0o600); err != nil {
					t.Fatal(err)
				}
				t.Setenv("FLUXGIT_MCP_AGENT_POLICY", p)
			}
			out := &lockedBuffer{}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			err := runCmd(ctx, out, "gateway", "--addr", tc.addr)
			if exitCode(err) != 1 || !strings.Contains(err.Error(), tc.says) || !strings.Contains(err.Error(), "did not start") {
				t.Fatalf("exit %d, err %v; want exit 1 saying %q", exitCode(err), err, tc.says)
			}
			if strings.Contains(out.String(), "FLUXGIT_MCP_HANDSHAKE_ADDR") {
				t.Fatalf("printed the start-up lines: %s", out)
			}
			if _, err := os.Stat(server.SessionPath(os.Getenv(credpaths.EnvSecretDir), runDir)); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("session file: %v", err)
			}
		})
	}
}

// The subcommands drive a running gateway: list, show, reject, approve.
func TestGatewayCommands(t *testing.T) {
	runDir := gatewayEnv(t)
	repo := t.TempDir()
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"-c", "user.name=T", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false", "commit", "-q", "--allow-empty", "-m", "one"},
	} {
		if out, err := exec.Command("git", append([]string{"-C", repo}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	repo, _ = filepath.EvalSymlinks(repo)

	serveOut := &lockedBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- runCmd(ctx, serveOut, "gateway", "--addr", "127.0.0.1:0", "--run-dir", runDir) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("gateway: %v", err)
		}
		if _, err := os.Stat(server.SessionPath(os.Getenv(credpaths.EnvSecretDir), runDir)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("session file after exit: %v", err)
		}
	}()
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(serveOut.String(), "Approval page: http://") {
		if time.Now().After(deadline) {
			t.Fatalf("gateway did not start: %s", serveOut)
		}
		time.Sleep(10 * time.Millisecond)
	}
	sess, err := server.ReadSession(runDir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(serveOut.String(), "FLUXGIT_MCP_HANDSHAKE_ADDR="+sess.Addr+"\n") {
		t.Fatalf("first line: %q", serveOut)
	}
	propose := func(name string) string {
		id := uuid.NewString()
		b, _ := json.Marshal(map[string]any{
			"previewId": id, "agentId": "cli-test", "idempotencyKey": "branch:client:" + name, "operationType": "branch",
			"repoPath": repo, "reason": "make " + name, "requestedAt": time.Now().UTC().Format("2006-01-02T15:04:05.000Z"),
			"name": name, "checkout": false,
		})
		resp, err := http.Post("http://"+sess.Addr+"/v1/mcp/operation/preview/branch", "application/json", bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted {
			t.Fatalf("preview: %s", resp.Status)
		}
		return id
	}
	first, second, third := propose("first"), propose("second"), propose("third")

	for _, tc := range []struct {
		name   string
		args   []string
		answer *string // typed on the terminal; nil: no terminal
		code   int
		says   []string
	}{
		{"list", []string{"list"}, nil, 0, []string{"PREVIEW ID", first, second, "pending", "branch", "cli-test", "expires in"}},
		{"list by status", []string{"list", "--status", "completed"}, nil, 0, []string{"No proposals."}},
		{"show", []string{"show", first}, nil, 0, []string{`"previewId": "` + first + `"`, `"review"`}},
		{"show unknown", []string{"show", "nope"}, nil, 1, nil},
		{"show without id", []string{"show"}, nil, exitUsage, nil},
		{"reject without reason", []string{"reject", first}, nil, exitUsage, nil},
		{"reject without a terminal", []string{"reject", first, "--reason", "no"}, nil, 1, nil},
		{"reject", []string{"reject", first, "--reason", "not this one"}, ptr("yes\n"), 0, []string{"Rejected " + first}},
		{"approve rejected", []string{"approve", first}, ptr("yes\n"), 1, nil},
		{"approve without a terminal", []string{"approve", second}, nil, 1, nil},
		{"approve answered no", []string{"approve", second}, ptr("no\n"), 1, nil},
		{"approve answered nothing", []string{"approve", second}, ptr(""), 1, nil},
		{"approve and wait", []string{"approve", second, "--wait"}, ptr("yes\n"), 0, []string{"Approved " + second, second + ": completed"}},
		{"reconcile needs as", []string{"reconcile", second}, nil, exitUsage, nil},
		{"reconcile finished", []string{"reconcile", second, "--as", "failed"}, ptr("yes\n"), 1, nil},
		{"undo without a terminal", []string{"undo", "--repo", repo}, nil, 1, nil},
		{"list after", []string{"list", "--status", "pending"}, nil, 0, []string{third}},
		{"list all after", []string{"list"}, nil, 0, []string{"rejected", "reason: not this one", "completed"}},
		{"undo needs repo", []string{"undo"}, nil, exitUsage, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			shown := withTerminal(t, tc.answer)
			out := &lockedBuffer{}
			err := runCmd(context.Background(), out, append([]string{"gateway"}, tc.args...)...)
			if exitCode(err) != tc.code {
				t.Fatalf("exit %d (%v), want %d; output:\n%s", exitCode(err), err, tc.code, out)
			}
			if strings.HasSuffix(tc.name, "without a terminal") && !strings.Contains(err.Error(), "needs a person at an interactive terminal") {
				t.Fatalf("refusal without a terminal does not say a person must run it: %v", err)
			}
			if tc.answer != nil && len(tc.args) > 1 && tc.code == 0 && !strings.Contains(shown.String(), tc.args[1]) {
				t.Fatalf("the terminal was not shown the proposal %s: %q", tc.args[1], shown)
			}
			if tc.code != 0 && err != nil && err.Error() == "" {
				t.Fatal("a failure without a message")
			}
			for _, s := range tc.says {
				if !strings.Contains(out.String(), s) {
					t.Errorf("output lacks %q:\n%s", s, out)
				}
			}
		})
	}
	if err := exec.Command("git", "-C", repo, "rev-parse", "--verify", "-q", "refs/heads/second").Run(); err != nil {
		t.Fatal("the approved branch was not created")
	}
	if err := exec.Command("git", "-C", repo, "rev-parse", "--verify", "-q", "refs/heads/first").Run(); err == nil {
		t.Fatal("the rejected branch was created")
	}
}

// What the terminal shows of a proposal is the agent's text with control
// characters replaced: an escape sequence in the reason cannot clear the
// line and repaint the question.
func TestDescribeReplacesControlCharacters(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain reason", "plain reason"},
		{"hide\x1b[2K\rApprove nothing", "hide\uFFFD[2K Approve nothing"},
		{"rtl \u202etxt.exe", "rtl \uFFFDtxt.exe"},
		{"bell\a", "bell\uFFFD"},
	} {
		got := describe("Approve", server.View{PreviewID: "p1", OperationType: "branch", RepoPath: "/r", AgentID: "a", Reason: tc.in})
		if !strings.Contains(got, "The agent's reason: "+tc.want+"\n") || strings.ContainsAny(got, "\x1b\a\r\u202e") {
			t.Errorf("describe(reason %q) = %q, want the reason shown as %q", tc.in, got, tc.want)
		}
	}
}

// A confirmation the proposal needs is named by the flag that carries it.
func TestMissingConfirmationsNameTheFlag(t *testing.T) {
	for _, tc := range []struct {
		name   string
		review string
		req    server.ApproveRequest
		says   []string // "" means no refusal
	}{
		{"hard reset", `{"requires":{"typeBranch":"main"}}`, server.ApproveRequest{}, []string{"--confirm-branch main"}},
		{"hard reset, wrong branch", `{"requires":{"typeBranch":"main"}}`, server.ApproveRequest{TypedBranch: "mian"}, []string{"--confirm-branch main"}},
		{"hard reset, confirmed", `{"requires":{"typeBranch":"main"}}`, server.ApproveRequest{TypedBranch: "main"}, nil},
		{"force push", `{"requires":{"forcePush":true}}`, server.ApproveRequest{}, []string{"--force-push"}},
		{"plan steps", `{"requires":{"destructiveSteps":[0,2]}}`, server.ApproveRequest{Steps: []int{0}}, []string{"--steps 0,2", "missing 2"}},
		{"nothing required", `{"requires":{}}`, server.ApproveRequest{}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := missingConfirmations(server.View{PreviewID: "p1", Status: "pending", Review: json.RawMessage(tc.review)}, tc.req)
			if len(tc.says) == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || exitCode(err) != exitUsage {
				t.Fatalf("err %v (exit %d), want a usage refusal", err, exitCode(err))
			}
			for _, s := range tc.says {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("%q does not name %q", err, s)
				}
			}
		})
	}
}
