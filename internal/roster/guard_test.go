package roster

import (
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
			got := GuardConflicts(tc.rows, root, tc.workspace, tc.self, tc.touched)
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
