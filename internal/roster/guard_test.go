package roster

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

func TestGuardConflicts(t *testing.T) {
	root := filepath.FromSlash("/home/dev/shop")
	live := Lease{File: "src/cart.ts", Mode: Exclusive, ExpiresAt: "2026-03-01T09:30:00.000Z"}
	row := func(id string, leases ...Lease) Row { return Row{WorkerID: id, Gist: "g", Leases: leases} }
	tests := []struct {
		name      string
		rows      []WorkspaceRow
		workspace string
		self      string
		touched   []string
		want      []string // conflicting files
	}{
		{"exclusive of another worker", []WorkspaceRow{{root, row("AAAAAA", live)}}, "", "", []string{"src/cart.ts", "x"}, []string{"src/cart.ts"}},
		{"own lease", []WorkspaceRow{{root, row("AAAAAA", live)}}, "", "AAAAAA", []string{"src/cart.ts"}, nil},
		{"shared", []WorkspaceRow{{root, row("AAAAAA", Lease{File: "src/cart.ts", Mode: Shared})}}, "", "", []string{"src/cart.ts"}, nil},
		{"expired", []WorkspaceRow{{root, row("AAAAAA", Lease{File: "src/cart.ts", Mode: Exclusive, Expired: true})}}, "", "", []string{"src/cart.ts"}, nil},
		{"stale holder", []WorkspaceRow{{root, Row{WorkerID: "AAAAAA", Leases: []Lease{live}, Stale: true}}}, "", "", []string{"src/cart.ts"}, nil},
		{"other workspace", []WorkspaceRow{{"shop", row("AAAAAA", live)}}, root, "", []string{"src/cart.ts"}, nil},
		{"named workspace", []WorkspaceRow{{"shop", row("AAAAAA", live)}}, "", "", []string{"src/cart.ts"}, []string{"src/cart.ts"}},
		{"absolute lease", []WorkspaceRow{{root, row("AAAAAA", Lease{File: filepath.Join(root, "src", "cart.ts"), Mode: Exclusive})}}, "", "", []string{"src/cart.ts"}, []string{"src/cart.ts"}},
		{"subdirectory workspace", []WorkspaceRow{{filepath.Join(root, "src"), row("AAAAAA", Lease{File: "cart.ts", Mode: Exclusive})}}, "", "", []string{"src/cart.ts"}, []string{"src/cart.ts"}},
		{"lease outside the root", []WorkspaceRow{{root, row("AAAAAA", Lease{File: "../other/cart.ts", Mode: Exclusive})}}, "", "", []string{"../other/cart.ts"}, nil},
		{"dot-slash", []WorkspaceRow{{root, row("AAAAAA", Lease{File: "./src/cart.ts", Mode: Exclusive})}}, "", "", []string{"src/cart.ts"}, []string{"src/cart.ts"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := GuardConflicts(tc.rows, root, tc.workspace, WorkerIDs(tc.self), tc.touched)
			var files []string
			for _, c := range got {
				files = append(files, c.File)
			}
			if len(files) != len(tc.want) || (len(files) > 0 && files[0] != tc.want[0]) {
				t.Fatalf("conflicts %v, want %v", files, tc.want)
			}
		})
	}
}

func TestGuardOwners(t *testing.T) {
	host := Hostname()
	me := os.Getpid()
	agent := func(h string, pid int, client string) *Agent { return &Agent{Client: client, Host: h, PID: pid} }
	tests := []struct {
		name  string
		owner Owner
		row   Row
		want  bool
	}{
		{"listed id", WorkerIDs("aaaaaa, BBBBBB"), Row{WorkerID: "BBBBBB"}, true},
		{"unlisted id", WorkerIDs("AAAAAA"), Row{WorkerID: "BBBBBB"}, false},
		{"malformed list", WorkerIDs(",x,"), Row{WorkerID: "BBBBBB"}, false},
		{"same process and client", CheckedInBy(host, me, "claude-code 1.2"), Row{Agent: agent(host, me, "claude-code 1.2")}, true},
		{"other client of the process", CheckedInBy(host, me, "claude-code 1.2"), Row{Agent: agent(host, me, "cursor 3")}, false},
		{"other process", CheckedInBy(host, me, "claude-code 1.2"), Row{Agent: agent(host, me+1, "claude-code 1.2")}, false},
		{"other host", CheckedInBy(host, me, "c"), Row{Agent: agent(host+"-elsewhere", me, "c")}, false},
		{"no agent recorded", CheckedInBy(host, me, ""), Row{}, false},
		{"no pid", CheckedInBy(host, 0, ""), Row{Agent: agent(host, 0, "")}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.owner(tc.row); got != tc.want {
				t.Fatalf("owner(%+v) = %v, want %v", tc.row, got, tc.want)
			}
		})
	}
	// A process that is gone owns nothing, even with a matching row.
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip(err)
	}
	gone := cmd.Process.Pid
	if CheckedInBy(host, gone, "c")(Row{Agent: agent(host, gone, "c")}) {
		t.Fatal("a finished process still owns its workers")
	}
}
