package tests

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The Dockerfile builds an image that runs as a non-root user and serves MCP
// over stdio to the official SDK client. Without a working container engine
// (`docker info` fails) the test skips: nothing here can stand in for one.
func TestContainerImage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a container image")
	}
	docker, err := exec.LookPath("docker")
	if err != nil {
		t.Skip("no docker client on PATH")
	}
	if out, err := exec.Command(docker, "info", "--format", "{{.ServerVersion}}").CombinedOutput(); err != nil {
		t.Skipf("no working container engine (docker info: %v: %s)", err, strings.TrimSpace(string(out)))
	}
	const image = "fluxgit-smoke-test:latest"
	build := exec.Command(docker, "build", "--build-arg", "VERSION=0.0.0-smoke", "-t", image, "..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("docker build: %v\n%s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command(docker, "image", "rm", "-f", image).Run() })

	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"version", []string{"run", "--rm", image, "--version"}, "fluxgit 0.0.0-smoke"},
		{"non-root user", []string{"run", "--rm", "--entrypoint", "id", image, "-u"}, "10001"},
		{"git present", []string{"run", "--rm", "--entrypoint", "git", image, "--version"}, "git version"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := exec.Command(docker, tc.args...).Output()
			if err != nil {
				t.Fatalf("docker %v: %v", tc.args, err)
			}
			if !strings.Contains(string(out), tc.want) {
				t.Fatalf("docker %v printed %q, want %q", tc.args, out, tc.want)
			}
		})
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "container-smoke", Version: "1.0.0"}, nil)
	cmd := exec.Command(docker, "run", "-i", "--rm", image)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect to the container over stdio: %v", err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	if !strings.Contains(strings.Join(names, " "), "repo.status") {
		t.Fatalf("repo.status not served by the image; tools: %v", names)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "shift_check_in", Arguments: map[string]any{"gist": "container smoke test", "workspace": "smoke"}})
	if err != nil || res.IsError {
		t.Fatalf("shift_check_in in the image (roster under /var/lib/shift-mcp-server): %v %+v", err, res)
	}
}
