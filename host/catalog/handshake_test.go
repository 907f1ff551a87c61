package catalog

import (
	"strings"
	"testing"

	"github.com/fluxgit/fluxgit/internal/operation"
	"github.com/fluxgit/fluxgit/spec"
)

// The write-handshake tools refuse bad arguments in the schema, before any
// request could reach the approval gateway, and say what is wrong.
func TestHandshakeArguments(t *testing.T) {
	cat, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	const repo = "/home/dev/src/webshop"
	oid := strings.Repeat("ab", 20)
	base := func(kv ...any) map[string]any {
		m := map[string]any{"repoPath": repo, "reason": "because"}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	step := func(kv ...any) map[string]any {
		m := map[string]any{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	for _, tc := range []struct {
		name, tool string
		args       map[string]any
		want       string // "" = valid; else a substring of the details
	}{
		{"merge ok", "operation.preview.merge", base("sourceRef", "a", "targetRef", "main"), ""},
		{"merge rebase strategy", "operation.preview.merge", base("sourceRef", "a", "targetRef", "main", "strategy", "rebase"), `arguments.strategy must be one of "merge", "squash"`},
		{"reason missing", "operation.preview.merge", map[string]any{"repoPath": repo, "sourceRef": "a", "targetRef": "b"}, "arguments.reason is required"},
		{"reason empty", "operation.preview.reset", base("targetRef", "HEAD~1", "reason", ""), "arguments.reason must not be empty"},
		{"reason too long", "operation.preview.reset", base("targetRef", "HEAD~1", "reason", strings.Repeat("r", 4097)), "arguments.reason must be at most 4096 characters long"},
		{"reason at the bound", "operation.preview.reset", base("targetRef", "HEAD~1", "reason", strings.Repeat("r", 4096)), ""},
		{"idempotencyKey ok", "operation.preview.reset", base("targetRef", "HEAD~1", "idempotencyKey", "retry_1-a"), ""},
		{"idempotencyKey bad char", "operation.preview.reset", base("targetRef", "HEAD~1", "idempotencyKey", "a:b"), "arguments.idempotencyKey must match the pattern"},
		{"idempotencyKey too long", "operation.preview.reset", base("targetRef", "HEAD~1", "idempotencyKey", strings.Repeat("k", 129)), "arguments.idempotencyKey must be at most 128"},
		{"reset bad mode", "operation.preview.reset", base("targetRef", "HEAD~1", "mode", "keep"), "arguments.mode must be one of"},
		{"ref option injection", "operation.preview.reset", base("targetRef", "--hard"), "arguments.targetRef must not start with '-'"},
		{"unknown key", "operation.preview.reset", base("targetRef", "HEAD~1", "execute", true), "arguments.execute is not allowed"},
		{"rebase interactive", "operation.preview.rebase", base("ontoRef", "main", "interactive", true), "arguments.interactive must be false"},
		{"rebase not interactive", "operation.preview.rebase", base("ontoRef", "main", "interactive", false), ""},
		{"discard no paths", "operation.preview.discard", base("paths", []any{}), "arguments.paths must have at least 1 items"},
		{"patch empty", "operation.preview.patch", base("patchContent", ""), "arguments.patchContent must not be empty"},
		{"commit empty paths", "operation.preview.commit", base("message", "m", "paths", []any{}), ""},
		{"commit no message", "operation.preview.commit", base(), "arguments.message is required"},
		{"push defaults", "operation.preview.push", base(), ""},
		{"push blank branch", "operation.preview.push", base("branch", "", "remote", ""), ""},
		{"push option branch", "operation.preview.push", base("branch", "--all"), "arguments.branch must match the pattern"},
		{"branch blank start", "operation.preview.branch", base("name", "x", "startPoint", ""), ""},
		{"worktree without path", "operation.preview.worktree", base("branch", "x"), ""},
		{"worktree blank path", "operation.preview.worktree", base("branch", "x", "path", ""), ""},

		{"plan ok", "operation.preview.plan", base("steps", []any{
			step("operationType", "merge", "sourceRef", "a", "targetRef", "b"),
			step("operationType", "rebase", "ontoRef", "main"),
			step("operationType", "discard", "paths", []any{"x"}),
			step("operationType", "reset", "targetRef", "HEAD", "mode", "hard"),
			step("operationType", "patch", "patchContent", "diff"),
		}), ""},
		{"plan empty", "operation.preview.plan", base("steps", []any{}), "arguments.steps must have at least 1 items"},
		{"plan too long", "operation.preview.plan", base("steps", func() []any {
			var l []any
			for i := 0; i < 11; i++ {
				l = append(l, step("operationType", "rebase", "ontoRef", "main"))
			}
			return l
		}()), "arguments.steps must have at most 10 items"},
		{"plan step missing field", "operation.preview.plan", base("steps", []any{step("operationType", "merge", "sourceRef", "a")}), "arguments.steps[0].targetRef is required"},
		{"plan step foreign field", "operation.preview.plan", base("steps", []any{step("operationType", "reset", "targetRef", "a", "paths", []any{"x"})}), "arguments.steps[0].paths is not allowed"},
		{"plan step unknown type", "operation.preview.plan", base("steps", []any{step("operationType", "push")}), `arguments.steps[0].operationType must be one of "merge", "rebase", "discard", "reset", "patch"`},
		{"plan step no type", "operation.preview.plan", base("steps", []any{step("ontoRef", "main")}), "arguments.steps[0].operationType is required"},
		{"plan step interactive", "operation.preview.plan", base("steps", []any{step("operationType", "rebase", "ontoRef", "main", "interactive", true)}), "arguments.steps[0].interactive must be false"},
		{"plan step repoPath", "operation.preview.plan", base("steps", []any{step("operationType", "rebase", "ontoRef", "main", "repoPath", repo)}), "arguments.steps[0].repoPath is not allowed"},

		{"branchDelete ok", "operation.preview.branchDelete", base("targets", []any{step("repoPath", repo, "branches", []any{"a", "b"})}), ""},
		{"branchDelete duplicate", "operation.preview.branchDelete", base("targets", []any{step("repoPath", repo, "branches", []any{"a", "a"})}), "arguments.targets[0].branches[1] duplicates an earlier item"},
		{"branchDelete full ref", "operation.preview.branchDelete", base("targets", []any{step("repoPath", repo, "branches", []any{"refs/heads/a"})}), "arguments.targets[0].branches[0] must not match the pattern ^refs/"},
		{"branchDelete extra key", "operation.preview.branchDelete", base("targets", []any{step("repoPath", repo, "branches", []any{"a"}, "force", true)}), "arguments.targets[0].force is not allowed"},
		{"branchDelete no targets", "operation.preview.branchDelete", base("targets", []any{}), "arguments.targets must have at least 1 items"},
		{"branchDelete 21 branches", "operation.preview.branchDelete", base("targets", []any{step("repoPath", repo, "branches", func() []any {
			var l []any
			for i := 0; i < 21; i++ {
				l = append(l, string(rune('a'+i)))
			}
			return l
		}())}), "arguments.targets[0].branches must have at most 20 items"},

		{"record ok", "operation.preview.submodulePointer", base("relativePath", "vendor/x", "direction", "record", "message", "m", "expectedRecordedOid", oid), ""},
		{"record without message", "operation.preview.submodulePointer", base("relativePath", "vendor/x", "direction", "record"), "arguments.message is required"},
		{"return with message", "operation.preview.submodulePointer", base("relativePath", "vendor/x", "direction", "return", "message", "m"), "arguments.message is not allowed here"},
		{"return ok", "operation.preview.submodulePointer", base("relativePath", "vendor/x", "direction", "return", "expectedCheckedOutOid", strings.Repeat("0", 64)), ""},
		{"short pin", "operation.preview.submodulePointer", base("relativePath", "vendor/x", "direction", "return", "expectedCheckedOutOid", "abc1234"), "arguments.expectedCheckedOutOid must match the pattern"},
		{"upper-case pin", "operation.preview.submodulePointer", base("relativePath", "vendor/x", "direction", "return", "expectedRecordedOid", strings.ToUpper(oid)), "arguments.expectedRecordedOid must match the pattern"},
		{"message too long", "operation.preview.submodulePointer", base("relativePath", "vendor/x", "direction", "record", "message", strings.Repeat("m", 2001)), "arguments.message must be at most 2000"},
		{"no direction", "operation.preview.submodulePointer", base("relativePath", "vendor/x"), "arguments.direction is required"},

		{"status ok", "operation.status", map[string]any{"previewId": "3f2b8c1e-5d4a"}, ""},
		{"status bad id", "operation.status", map[string]any{"previewId": "../x"}, "arguments.previewId must match the pattern"},
		{"status long id", "operation.status", map[string]any{"previewId": strings.Repeat("a", 129)}, "arguments.previewId must be at most 128"},
		{"status repoPath", "operation.status", map[string]any{"previewId": "a", "repoPath": repo}, "arguments.repoPath is not allowed"},
		{"cancel missing id", "operation.cancel", map[string]any{}, "arguments.previewId is required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tool, ok := cat.Tool(tc.tool)
			if !ok {
				t.Fatalf("no tool %s", tc.tool)
			}
			err := tool.ValidateArguments(tc.args)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && err == nil:
				t.Fatalf("accepted, want %q", tc.want)
			case tc.want != "" && !strings.Contains(err.Error(), tc.want):
				t.Fatalf("details %q, want %q", err, tc.want)
			}
		})
	}
}

// Every write-handshake spec file carries examples, and each validates:
// arguments against inputSchema, payload against outputSchema, with the
// tool's own name, tier and read-only class.
func TestHandshakeExamplesValidate(t *testing.T) {
	cat, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	src := newDocSource(spec.FS)
	files, err := specFiles(spec.FS, "tools")
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, file := range files {
		if !strings.HasPrefix(baseName(file), "operation.") {
			continue
		}
		seen++
		t.Run(file, func(t *testing.T) {
			doc, err := src.doc(file)
			if err != nil {
				t.Fatal(err)
			}
			o := doc.(*object)
			tool, ok := cat.Tool(o.str("name"))
			if !ok {
				t.Fatalf("%s is not loaded", o.str("name"))
			}
			if tool.Tier != "fluxgit-write-handshake" || tool.Provider != "handshake" {
				t.Fatalf("tier %q provider %q", tool.Tier, tool.Provider)
			}
			list, _ := o.vals["examples"].([]any)
			if len(list) == 0 {
				t.Fatal("no examples")
			}
			for i, e := range list {
				ex := e.(*object)
				args, _ := ex.get("arguments")
				if err := tool.ValidateArguments(toPlain(args)); err != nil {
					t.Errorf("examples[%d] arguments: %v", i, err)
				}
				p, ok := ex.get("payload")
				if !ok {
					t.Errorf("examples[%d] has no payload", i)
					continue
				}
				payload := toPlain(p).(map[string]any)
				if err := tool.ValidatePayload(payload); err != nil {
					t.Errorf("examples[%d] payload: %v", i, err)
				}
				if payload["tool"] != tool.Name || payload["readOnly"] != tool.ReadOnly || payload["tier"] != tool.Tier {
					t.Errorf("examples[%d] payload names %v/%v/%v", i, payload["tool"], payload["readOnly"], payload["tier"])
				}
			}
		})
	}
	// operation.status, operation.cancel and one preview per operation.
	if want := 2 + len(operation.All); seen != want {
		t.Fatalf("%d operation.* spec files, want %d", seen, want)
	}
}

// The result variants hold the provider to the shapes the handshake
// promises: a live proposal is never terminal, a failure carries its own
// code, an unreachable gateway names no source.
func TestHandshakePayloadVariants(t *testing.T) {
	cat, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	const pid = "p-1"
	env := func(tool string, ro bool, kv ...any) map[string]any {
		m := map[string]any{"tool": tool, "readOnly": ro, "tier": "fluxgit-write-handshake"}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	errObj := func(code int) map[string]any { return map[string]any{"code": code, "message": "m", "data": nil} }
	next := map[string]any{"tool": "operation.status", "message": "poll", "data": map[string]any{"previewId": pid}}
	const merge = "operation.preview.merge"
	app := []any{"source", "fluxgit-app", "repoPath", "/r"}
	with := func(kv ...any) []any { return append(append([]any{}, app...), kv...) }
	for _, tc := range []struct {
		name, tool string
		payload    map[string]any
		ok         bool
	}{
		{"completed", merge, env(merge, false, with("previewId", pid, "status", "completed", "data", map[string]any{})...), true},
		{"live", merge, env(merge, false, with("previewId", pid, "status", "approved", "accepted", true, "nextAction", next, "data", map[string]any{})...), true},
		{"live, other token", merge, env(merge, false, with("previewId", pid, "status", "queued_2", "accepted", true, "nextAction", next, "data", []any{})...), true},
		{"live cannot be terminal", merge, env(merge, false, with("previewId", pid, "status", "rejected", "accepted", true, "nextAction", next, "data", map[string]any{})...), false},
		{"live needs nextAction", merge, env(merge, false, with("previewId", pid, "status", "pending", "accepted", true, "data", map[string]any{})...), false},
		{"status must be a token", merge, env(merge, false, with("previewId", pid, "status", "Pending", "accepted", true, "nextAction", next, "data", map[string]any{})...), false},
		{"ended", merge, env(merge, false, with("previewId", pid, "status", "expired", "error", errObj(10004))...), true},
		{"ended with the wrong code", merge, env(merge, false, with("previewId", pid, "status", "expired", "error", errObj(10006))...), false},
		{"refused", merge, env(merge, false, with("previewId", pid, "status", "refused", "error", errObj(10006))...), true},
		{"unsafe id", merge, env(merge, false, with("error", errObj(10007))...), true},
		{"unsafe id must not carry one", merge, env(merge, false, with("previewId", pid, "error", errObj(10007))...), false},
		{"unreachable", merge, env(merge, false, "error", errObj(10003)), true},
		{"unreachable names no source", merge, env(merge, false, "source", "fluxgit-app", "error", errObj(10003)), false},
		{"bad previewId", merge, env(merge, false, with("previewId", "a/b", "status", "completed", "data", map[string]any{})...), false},
		{"read-only preview", merge, env(merge, true, "error", errObj(10003)), false},
		{"status found", "operation.status", env("operation.status", true, "source", "fluxgit-app", "previewId", pid, "data", nil), true},
		{"status not found", "operation.status", env("operation.status", true, "source", "fluxgit-app", "error", errObj(10005)), true},
		{"status unreachable", "operation.status", env("operation.status", true, "error", errObj(10003)), true},
		{"status refused is not a status answer", "operation.status", env("operation.status", true, "source", "fluxgit-app", "error", errObj(10006)), false},
		{"cancelled", "operation.cancel", env("operation.cancel", false, "source", "fluxgit-app", "previewId", pid, "status", "cancelled", "data", map[string]any{}), true},
		{"cancel refused", "operation.cancel", env("operation.cancel", false, "source", "fluxgit-app", "error", errObj(10006)), true},
		{"cancel not found", "operation.cancel", env("operation.cancel", false, "source", "fluxgit-app", "error", errObj(10005)), true},
		{"cancel with another status", "operation.cancel", env("operation.cancel", false, "source", "fluxgit-app", "previewId", pid, "status", "pending", "data", map[string]any{}), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tool, _ := cat.Tool(tc.tool)
			err := tool.ValidatePayload(tc.payload)
			if (err == nil) != tc.ok {
				t.Fatalf("valid=%v (%v), want %v", err == nil, err, tc.ok)
			}
		})
	}
}
