package gatewaytest

import contract "github.com/fluxgit/fluxgit/gateway/proposal"

// The body contract itself lives in gateway/proposal, which fluxgit's own
// approval gateway enforces too; these names keep the test gateway's API.

// Ops are the twelve preview operations, in the contract's order.
var Ops = contract.Ops

// CommonKeys are the keys every preview body carries.
var CommonKeys = contract.CommonKeys

// SafeID reports whether id may be used as a previewId: 1-128 of
// [A-Za-z0-9_-].
func SafeID(id string) bool { return contract.SafeID(id) }

// IsUUIDv4 reports whether s is a lowercase UUID of version 4, RFC 4122
// variant.
func IsUUIDv4(s string) bool { return contract.IsUUIDv4(s) }

// IsStamp reports whether s is RFC 3339 UTC with milliseconds and Z.
func IsStamp(s string) bool { return contract.IsStamp(s) }

// IsIdempotencyKey reports whether key is one of the two forms the
// contract allows for op: "<op>:client:<key>" or "<op>:call:<uuid v4>".
func IsIdempotencyKey(op, key string) bool { return contract.IsIdempotencyKey(op, key) }

// DefaultResult is a completed proposal's result for op, with the fields
// the contract lists for that operation (the common ones and its own).
func DefaultResult(op string) map[string]any {
	const (
		before = "1111111111111111111111111111111111111111"
		after  = "2222222222222222222222222222222222222222"
	)
	r := map[string]any{
		"status":  "completed",
		"message": op + " completed",
		"restorePoint": map[string]any{
			"operation": op, "branchRef": "refs/heads/main",
			"beforeCommit": before, "afterCommit": after, "canUndo": true,
		},
	}
	add := func(kv ...any) {
		for i := 0; i < len(kv); i += 2 {
			r[kv[i].(string)] = kv[i+1]
		}
	}
	switch op {
	case "merge":
		add("mergeCommit", after, "summary", "Merged feature into main")
	case "rebase":
		add("newHeadSha", after, "replayedCommits", 2, "restorePointId", "rp-1")
	case "discard":
		add("pathsDiscarded", []any{"README.md"}, "restorePointId", "rp-1")
	case "reset":
		add("newHeadSha", after, "mode", "mixed", "restorePointId", "rp-1")
	case "patch":
		add("appliedFiles", []any{"src/app.go"}, "stagedToIndex", false, "restorePointId", "rp-1")
	case "plan":
		add("steps", []any{map[string]any{"operationType": "merge", "status": "completed", "message": "merged"}})
	case "worktree":
		add("worktreePath", "/tmp/worktrees/feature", "branch", "feature")
	case "commit":
		add("commitSha", after)
	case "push":
		add("pushedRef", "refs/heads/main", "remote", "origin")
	case "branch":
		add("branch", "feature/new", "checkedOut", true)
	case "branchDelete":
		add("branchDelete", map[string]any{
			"deleted": 1, "failed": 0, "skipped": 0,
			"repositories": []any{map[string]any{"repoPath": "/tmp/repo", "branches": []any{
				map[string]any{"branch": "old", "status": "deleted", "tipOid": before, "restoreOid": before},
			}}},
		})
	case "submodulePointer":
		add("commitSha", after, "submodulePointer", map[string]any{
			"direction": "record", "parentPath": "", "relativePath": "lib/sub",
			"parentHeadRef": "refs/heads/main", "previousParentOid": before, "commitSha": after,
			"pointerOid": before, "checkedOutOid": before,
			"restorePoint": map[string]any{"previousRef": "refs/heads/main", "previousOid": before},
		})
	}
	return r
}
