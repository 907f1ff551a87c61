package proposal

import (
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/fluxgit/fluxgit/internal/operation"
)

// validBody is a conforming preview body of op, as the handshake provider
// sends it.
func validBody(op string) map[string]any {
	b := map[string]any{
		"previewId":      "0b6b3c1e-6f1a-4d3b-9a51-2f0a4c1e9b7d",
		"agentId":        "claude-code",
		"idempotencyKey": op + ":client:k1",
		"operationType":  op,
		"repoPath":       "/home/dev/repo",
		"reason":         "because",
		"requestedAt":    "2026-05-28T11:42:09.512Z",
	}
	extra := map[string]map[string]any{
		"merge":    {"sourceRef": "feature", "targetRef": "main", "strategy": "merge"},
		"rebase":   {"currentRef": "HEAD", "ontoRef": "main", "interactive": false},
		"discard":  {"paths": []any{"a.txt"}},
		"reset":    {"targetRef": "HEAD~1", "mode": "mixed"},
		"patch":    {"patchContent": "diff --git a/x b/x\n", "applyToIndex": false},
		"plan":     {"steps": []any{map[string]any{"operationType": "merge", "sourceRef": "a", "targetRef": "b"}}},
		"worktree": {"branch": "feature"},
		"commit":   {"message": "m", "stageAll": false},
		"push":     {"remote": "origin", "setUpstream": false, "forceWithLease": false},
		"branch":   {"name": "n", "checkout": true},
		"branchDelete": {"targets": []any{
			map[string]any{"repoPath": "/home/dev/repo", "branches": []any{"old"}},
		}},
		"submodulePointer": {"parentPath": "", "relativePath": "lib/sub", "direction": "return"},
	}[op]
	if extra == nil && IsOp(op) {
		// An operation added after these twelve: its schema's example.
		return schemaExample(op)
	}
	for k, v := range extra {
		b[k] = v
	}
	return b
}

func TestCheckAcceptsEveryOperation(t *testing.T) {
	if !reflect.DeepEqual(Ops, operation.Names()) {
		t.Fatalf("Ops = %v, want operation.Names() %v", Ops, operation.Names())
	}
	for _, op := range Ops {
		if p := Check(op, validBody(op)); len(p) != 0 {
			t.Errorf("%s: valid body refused: %v", op, p)
		}
		if !IsOp(op) {
			t.Errorf("IsOp(%q) = false", op)
		}
	}
	if IsOp("amend") {
		t.Error(`IsOp("amend") = true`)
	}
}

func TestCheckViolations(t *testing.T) {
	for _, tc := range []struct {
		name string
		op   string
		mut  func(map[string]any)
		want string
	}{
		{"unknown op", "amend", func(map[string]any) {}, `operation "amend" is not one of`},
		{"extra key", "merge", func(b map[string]any) { b["force"] = true }, `key "force" is not in the merge body`},
		{"missing required", "merge", func(b map[string]any) { delete(b, "strategy") }, "missing required key strategy"},
		{"missing common", "commit", func(b map[string]any) { delete(b, "agentId") }, "missing required key agentId"},
		{"previewId v1", "merge", func(b map[string]any) { b["previewId"] = "1f3c5b9a-0000-1000-8000-000000000000" }, "previewId"},
		{"agentId leading dash", "merge", func(b map[string]any) { b["agentId"] = "-x" }, "agentId"},
		{"stamp offset", "merge", func(b map[string]any) { b["requestedAt"] = "2026-05-28T11:42:09.512+00:00" }, "requestedAt"},
		{"key of another op", "merge", func(b map[string]any) { b["idempotencyKey"] = "reset:client:k" }, "idempotencyKey"},
		{"relative repoPath", "merge", func(b map[string]any) { b["repoPath"] = "repo" }, "repoPath must be a non-blank absolute path"},
		{"blank ref", "merge", func(b map[string]any) { b["sourceRef"] = "  " }, "sourceRef must be a non-blank string"},
		{"bad enum", "reset", func(b map[string]any) { b["mode"] = "keep" }, "mode must be one of soft|mixed|hard"},
		{"interactive", "rebase", func(b map[string]any) { b["interactive"] = true }, "interactive must be false"},
		{"empty discard", "discard", func(b map[string]any) { b["paths"] = []any{} }, "paths must be an array"},
		{"empty reason", "commit", func(b map[string]any) { b["reason"] = "" }, "reason must be a string"},
		{"operationType mismatch", "merge", func(b map[string]any) { b["operationType"] = "reset" }, "operationType reset on the merge endpoint"},
		{"step field of other op", "plan", func(b map[string]any) {
			b["steps"] = []any{map[string]any{"operationType": "merge", "sourceRef": "a", "targetRef": "b", "paths": []any{"x"}}}
		}, `key "paths" is not a merge step field`},
		{"step op", "plan", func(b map[string]any) {
			b["steps"] = []any{map[string]any{"operationType": "push"}}
		}, "steps[0].operationType"},
		{"eleven steps", "plan", func(b map[string]any) {
			s := make([]any, 11)
			for i := range s {
				s[i] = map[string]any{"operationType": "reset", "targetRef": "HEAD"}
			}
			b["steps"] = s
		}, "steps must be an array of 1-10 steps"},
		{"target extra", "branchDelete", func(b map[string]any) {
			b["targets"] = []any{map[string]any{"repoPath": "/r", "branches": []any{"a"}, "remote": "origin"}}
		}, `key "remote"`},
		{"full ref branch", "branchDelete", func(b map[string]any) {
			b["targets"] = []any{map[string]any{"repoPath": "/r", "branches": []any{"refs/heads/a"}}}
		}, "must be a short branch name"},
		{"duplicate branch", "branchDelete", func(b map[string]any) {
			b["targets"] = []any{map[string]any{"repoPath": "/r", "branches": []any{"a", "a"}}}
		}, "duplicates an earlier branch"},
		{"record without message", "submodulePointer", func(b map[string]any) { b["direction"] = "record" }, "message is required"},
		{"return with message", "submodulePointer", func(b map[string]any) { b["message"] = "m" }, "message is not sent"},
		{"short oid", "submodulePointer", func(b map[string]any) { b["expectedRecordedOid"] = "abc" }, "full lowercase object id"},
		{"absolute parentPath", "submodulePointer", func(b map[string]any) { b["parentPath"] = "/x" }, "relative path"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := validBody(tc.op)
			tc.mut(b)
			p := Check(tc.op, b)
			if !strings.Contains(strings.Join(p, "\n"), tc.want) {
				t.Fatalf("violations %q do not mention %q", p, tc.want)
			}
		})
	}
}

func TestCheckCancel(t *testing.T) {
	for _, tc := range []struct {
		name string
		body map[string]any
		want string // "" = conforms
	}{
		{"ok", map[string]any{"agentId": "claude-code"}, ""},
		{"missing", map[string]any{}, "missing required key agentId"},
		{"extra", map[string]any{"agentId": "a", "reason": "x"}, `key "reason"`},
		{"bad id", map[string]any{"agentId": "a b"}, "not a sanitized agent id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := strings.Join(CheckCancel(tc.body), "\n")
			if tc.want == "" && p != "" || !strings.Contains(p, tc.want) {
				t.Fatalf("violations %q, want %q", p, tc.want)
			}
		})
	}
}

func TestCheckSemantic(t *testing.T) {
	ok := map[string]any{"repoId": "r", "repoPath": "/r", "baseRef": "", "headRef": "", "paths": []any{}}
	if p := CheckSemantic(ok); len(p) != 0 {
		t.Fatalf("valid semantic body refused: %v", p)
	}
	bad := map[string]any{"repoId": "", "repoPath": "/r", "baseRef": "", "paths": []any{}, "x": 1}
	p := strings.Join(CheckSemantic(bad), "\n")
	for _, want := range []string{`key "x"`, "missing required key headRef", "repoId must be a non-empty string"} {
		if !strings.Contains(p, want) {
			t.Errorf("violations %q do not mention %q", p, want)
		}
	}
}

func TestDecodeObject(t *testing.T) {
	for _, tc := range []struct {
		name, body, want string // want "" = accepted
	}{
		{"object", `{"a":1,"b":{"c":[1,{"d":2}]}}`, ""},
		{"empty", "  ", "the body is empty"},
		{"array", `[1]`, "not a JSON object"},
		{"null", `null`, "not a JSON object"},
		{"duplicate top", `{"a":1,"a":2}`, `repeats the key "a" in $`},
		{"duplicate nested", `{"s":[{"k":1,"k":1}]}`, `repeats the key "k" in $.s[0]`},
		{"trailing", `{"a":1} {}`, "data after its JSON object"},
		{"broken", `{"a":`, "not valid JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := DecodeObject([]byte(tc.body))
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want == "" && m == nil:
				t.Fatal("accepted without an object")
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v, want one mentioning %q", err, tc.want)
			}
		})
	}
}

// nested is a body of depth levels: an object whose key a holds arrays
// nested depth-1 deep.
func nested(depth int) string {
	return `{"a":` + strings.Repeat("[", depth-1) + strings.Repeat("]", depth-1) + `}`
}

func TestDecodeObjectDepth(t *testing.T) {
	for _, tc := range []struct {
		name, body, want string // want "" = accepted
	}{
		{"at the limit", nested(MaxDepth), ""},
		{"one over", nested(MaxDepth + 1), "more than 64 levels deep"},
		{"far over", nested(30000), "more than 64 levels deep"},
		{"brackets in strings do not count", `{"a":"` + strings.Repeat("[{", 1000) + `","b":"\\\"[["}`, ""},
		{"escaped quote keeps the string open", `{"a":"\"` + strings.Repeat("[", 100) + `"}`, ""},
		{"duplicate below the limit names its path", `{"s":[{"k":[{"x":1,"x":2}]}]}`, `repeats the key "x" in $.s[0].k[0]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeObject([]byte(tc.body))
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v, want one mentioning %q", err, tc.want)
			}
		})
	}
}

// A deep body is refused without building a JSON path per level: the old
// walk kept a path string per nesting level alive on its stack, which is
// quadratic in the depth (a 60 KB body 30,000 levels deep peaked at 2 GB).
// At 4,000 levels that walk allocates about 24 MB; the bounded one
// allocates next to nothing.
func TestDecodeObjectDeepBodyAllocatesLittle(t *testing.T) {
	for _, depth := range []int{4000, 30000} {
		body := []byte(`{"a":` + strings.Repeat("[", depth) + strings.Repeat("]", depth) + `}`)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, err := DecodeObject(body)
		runtime.ReadMemStats(&after)
		if got := after.TotalAlloc - before.TotalAlloc; got > 256<<10 {
			t.Fatalf("depth %d: decoding allocated %d bytes for a %d-byte body; want under 256 KiB", depth, got, len(body))
		}
		if err == nil || !strings.Contains(err.Error(), "levels deep") {
			t.Fatalf("depth %d: error %v, want the depth refusal", depth, err)
		}
	}
}

func TestIdentifiers(t *testing.T) {
	for _, tc := range []struct {
		name string
		got  bool
		want bool
	}{
		{"safe id", SafeID("abc_DEF-1"), true},
		{"unsafe id slash", SafeID("a/b"), false},
		{"unsafe id empty", SafeID(""), false},
		{"uuid v4", IsUUIDv4("0b6b3c1e-6f1a-4d3b-9a51-2f0a4c1e9b7d"), true},
		{"uuid upper", IsUUIDv4("0B6B3C1E-6F1A-4D3B-9A51-2F0A4C1E9B7D"), false},
		{"uuid variant", IsUUIDv4("0b6b3c1e-6f1a-4d3b-7a51-2f0a4c1e9b7d"), false},
		{"stamp", IsStamp("2026-05-28T11:42:09.512Z"), true},
		{"stamp invalid day", IsStamp("2026-02-30T11:42:09.512Z"), false},
		{"agent id", IsAgentID("claude-code:1.0"), true},
		{"agent id trailing dash", IsAgentID("claude-"), false},
		{"key client", IsIdempotencyKey("merge", "merge:client:k"), true},
		{"key call", IsIdempotencyKey("merge", "merge:call:0b6b3c1e-6f1a-4d3b-9a51-2f0a4c1e9b7d"), true},
		{"key other op", IsIdempotencyKey("merge", "reset:client:k"), false},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, tc.got, tc.want)
		}
	}
}

func TestFingerprint(t *testing.T) {
	base := Fingerprint(validBody("merge"))
	if len(base) != 64 || strings.Trim(base, "0123456789abcdef") != "" {
		t.Fatalf("fingerprint %q is not lowercase hex SHA-256", base)
	}
	for _, tc := range []struct {
		name string
		mut  func(map[string]any)
		same bool
	}{
		{"new previewId", func(b map[string]any) { b["previewId"] = "1b6b3c1e-6f1a-4d3b-9a51-2f0a4c1e9b7d" }, true},
		{"new requestedAt", func(b map[string]any) { b["requestedAt"] = "2027-01-01T00:00:00.000Z" }, true},
		{"both gone", func(b map[string]any) { delete(b, "previewId"); delete(b, "requestedAt") }, true},
		{"other reason", func(b map[string]any) { b["reason"] = "another" }, false},
		{"other ref", func(b map[string]any) { b["sourceRef"] = "feature2" }, false},
		{"other strategy", func(b map[string]any) { b["strategy"] = "squash" }, false},
		{"other agent", func(b map[string]any) { b["agentId"] = "codex" }, false},
		{"html characters", func(b map[string]any) { b["reason"] = "<&>" }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := validBody("merge")
			tc.mut(b)
			if got := Fingerprint(b) == base; got != tc.same {
				t.Fatalf("same fingerprint = %v, want %v", got, tc.same)
			}
		})
	}
	// Key order, spacing and number spelling never matter.
	a, err := DecodeObject([]byte(`{"n":1.50,"m":{"x":"<","y":1e0}}`))
	if err != nil {
		t.Fatal(err)
	}
	b, err := DecodeObject([]byte(`{ "m": {"y": 1.0, "x": "\u003c"}, "n": 15e-1 }`))
	if err != nil {
		t.Fatal(err)
	}
	if Fingerprint(a) != Fingerprint(b) || Fingerprint(a) == "" {
		t.Fatal("two spellings of the same body fingerprint differently")
	}
}

func TestRefs(t *testing.T) {
	for _, tc := range []struct {
		op   string
		mut  func(map[string]any)
		want []string
	}{
		{"merge", nil, []string{"feature", "main"}},
		{"rebase", nil, []string{"HEAD", "main"}},
		{"reset", nil, []string{"HEAD~1"}},
		{"worktree", nil, []string{"feature"}},
		{"push", nil, nil},
		{"push", func(b map[string]any) { b["branch"] = "release" }, []string{"release"}},
		{"branch", func(b map[string]any) { b["startPoint"] = "main" }, []string{"n", "main"}},
		{"plan", func(b map[string]any) {
			b["steps"] = []any{
				map[string]any{"operationType": "merge", "sourceRef": "a", "targetRef": "b"},
				map[string]any{"operationType": "rebase", "ontoRef": "c"},
				map[string]any{"operationType": "reset", "targetRef": "a"},
				map[string]any{"operationType": "discard", "paths": []any{"f"}},
			}
		}, []string{"a", "b", "c"}},
		{"branchDelete", func(b map[string]any) {
			b["targets"] = []any{
				map[string]any{"repoPath": "/r1", "branches": []any{"x", "y"}},
				map[string]any{"repoPath": "/r2", "branches": []any{"y", "z"}},
			}
		}, []string{"x", "y", "z"}},
		{"discard", nil, nil},
		{"commit", nil, nil},
		{"patch", nil, nil},
		{"submodulePointer", nil, nil},
	} {
		b := validBody(tc.op)
		if tc.mut != nil {
			tc.mut(b)
		}
		if got := Refs(tc.op, b); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Refs(%s) = %q, want %q", tc.op, got, tc.want)
		}
	}
}

func TestRepoPaths(t *testing.T) {
	for _, tc := range []struct {
		op   string
		mut  func(map[string]any)
		want []string
	}{
		{"merge", nil, []string{"/home/dev/repo"}},
		{"worktree", nil, []string{"/home/dev/repo"}},
		{"worktree", func(b map[string]any) { b["path"] = "/home/dev/wt" }, []string{"/home/dev/repo", "/home/dev/wt"}},
		{"branchDelete", func(b map[string]any) {
			b["targets"] = []any{
				map[string]any{"repoPath": "/home/dev/repo", "branches": []any{"x"}},
				map[string]any{"repoPath": "/home/dev/other", "branches": []any{"x"}},
			}
		}, []string{"/home/dev/repo", "/home/dev/other"}},
	} {
		b := validBody(tc.op)
		if tc.mut != nil {
			tc.mut(b)
		}
		if got := RepoPaths(tc.op, b); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("RepoPaths(%s) = %q, want %q", tc.op, got, tc.want)
		}
	}
}

func TestRisk(t *testing.T) {
	want := map[string]string{
		"reset": "high", "discard": "high",
		"merge": "medium", "rebase": "medium", "patch": "medium", "plan": "medium", "push": "medium",
		"branchDelete": "medium", "submodulePointer": "medium",
		"worktree": "low", "commit": "low", "branch": "low",
		"unknown": "high",
	}
	// The risks of the first twelve operations are pinned here; the
	// risk of a later one is its spec file's audit.risk, which
	// internal/operation's tests hold to operation.All.
	for op := range want {
		if got := Risk(op); got != want[op] {
			t.Errorf("Risk(%s) = %q, want %q", op, got, want[op])
		}
	}
}
