package repo

import "testing"

// TestLeanPatchHeaders checks that exactly the header lines repeating the
// diff line are left out, and that everything carrying a fact stays.
func TestLeanPatchHeaders(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"modified",
			"diff --git a/x.go b/x.go\nindex 1b232bc..ce9eb53 100644\n--- a/x.go\n+++ b/x.go\n@@ -1 +1 @@\n-a\n+b\n",
			"diff --git a/x.go b/x.go\n@@ -1 +1 @@\n-a\n+b\n"},
		{"executable mode kept",
			"diff --git a/run.sh b/run.sh\nindex 1b232bc..ce9eb53 100755\n--- a/run.sh\n+++ b/run.sh\n@@ -1 +1 @@\n-a\n+b\n",
			"diff --git a/run.sh b/run.sh\nindex 1b232bc..ce9eb53 100755\n@@ -1 +1 @@\n-a\n+b\n"},
		{"mode change",
			"diff --git a/r b/r\nold mode 100644\nnew mode 100755\nindex 1b232bc..ce9eb53\n--- a/r\n+++ b/r\n@@ -1 +1 @@\n-a\n+b\n",
			"diff --git a/r b/r\nold mode 100644\nnew mode 100755\n@@ -1 +1 @@\n-a\n+b\n"},
		{"new file",
			"diff --git a/n b/n\nnew file mode 100644\nindex 0000000..ce9eb53\n--- /dev/null\n+++ b/n\n@@ -0,0 +1 @@\n+b\n",
			"diff --git a/n b/n\nnew file mode 100644\n@@ -0,0 +1 @@\n+b\n"},
		{"deleted file",
			"diff --git a/d b/d\ndeleted file mode 100644\nindex ce9eb53..0000000\n--- a/d\n+++ /dev/null\n@@ -1 +0,0 @@\n-b\n",
			"diff --git a/d b/d\ndeleted file mode 100644\n@@ -1 +0,0 @@\n-b\n"},
		{"rename with edit",
			"diff --git a/old b/new\nsimilarity index 90%\nrename from old\nrename to new\nindex 1..2 100644\n--- a/old\n+++ b/new\n@@ -1 +1 @@\n-a\n+b\n",
			"diff --git a/old b/new\nsimilarity index 90%\nrename from old\nrename to new\n@@ -1 +1 @@\n-a\n+b\n"},
		{"name with space",
			"diff --git a/x y b/x y\nindex 1..2 100644\n--- a/x y\t\n+++ b/x y\t\n@@ -1 +1 @@\n-a\n+b\n",
			"diff --git a/x y b/x y\n@@ -1 +1 @@\n-a\n+b\n"},
		{"combined",
			"diff --cc p.go\nindex 39b70f7,dc8f6b5..0000000\n--- a/p.go\n+++ b/p.go\n@@@ -1,1 -1,1 +1,5 @@@\n++<<<<<<< HEAD\n",
			"diff --cc p.go\n@@@ -1,1 -1,1 +1,5 @@@\n++<<<<<<< HEAD\n"},
		{"content lines that look like headers stay",
			"diff --git a/m b/m\nindex 1..2 100644\n--- a/m\n+++ b/m\n@@ -1,2 +1,2 @@\n--- a/m\n+++ b/m\n index 1\n",
			"diff --git a/m b/m\n@@ -1,2 +1,2 @@\n--- a/m\n+++ b/m\n index 1\n"},
		{"binary",
			"diff --git a/b.bin b/b.bin\nindex 1..2 100644\nBinary files a/b.bin and b/b.bin differ\n",
			"diff --git a/b.bin b/b.bin\nBinary files a/b.bin and b/b.bin differ\n"},
		{"stat untouched", " x.go | 2 +-\n 1 file changed\n", " x.go | 2 +-\n 1 file changed\n"},
		{"cut inside a header", "diff --git a/x b/x\nindex 1..2 100644\n--- a/x", "diff --git a/x b/x\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(leanPatchHeaders([]byte(tc.in))); got != tc.want {
				t.Errorf("leanPatchHeaders:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

// TestUTCZ checks that only a +00:00 offset becomes Z.
func TestUTCZ(t *testing.T) {
	for in, want := range map[string]string{
		"2025-04-05T00:06:00+00:00": "2025-04-05T00:06:00Z",
		"2026-01-01T10:00:00+01:00": "2026-01-01T10:00:00+01:00",
		"2026-01-01T10:00:00-05:30": "2026-01-01T10:00:00-05:30",
	} {
		if got := utcZ(in); got != want {
			t.Errorf("utcZ(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestRemotesSaidByBranches checks when repo.refs' lean remotes list is
// left out: only when every remote shows as the prefix of a listed branch.
func TestRemotesSaidByBranches(t *testing.T) {
	for _, tc := range []struct {
		name             string
		remotes, rbranch []string
		want             bool
	}{
		{"each remote has a branch", []string{"origin", "up"}, []string{"origin/main", "up/dev"}, true},
		{"a remote without a listed branch", []string{"origin", "up"}, []string{"origin/main"}, false},
		{"no remote branches listed", []string{"origin"}, nil, false},
		{"a prefix is not a remote", []string{"orig"}, []string{"origin/main"}, false},
		{"a remote name with a slash", []string{"team/a"}, []string{"team/a/main"}, false},
		{"no remotes", nil, []string{"origin/main"}, false},
	} {
		if got := remotesSaidByBranches(tc.remotes, tc.rbranch); got != tc.want {
			t.Errorf("%s: remotesSaidByBranches(%v, %v) = %v, want %v", tc.name, tc.remotes, tc.rbranch, got, tc.want)
		}
	}
}
