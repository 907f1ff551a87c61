package operation

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v5"
	"gopkg.in/yaml.v3"

	"github.com/fluxgit/fluxgit/schemas"
)

// schemaDoc reads one embedded schema as a generic JSON value.
func schemaDoc(t *testing.T, file string) map[string]any {
	t.Helper()
	raw, err := fs.ReadFile(schemas.FS, file)
	if err != nil {
		t.Fatalf("read %s: %v", file, err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("parse %s: %v", file, err)
	}
	return m
}

// jsonFields maps each JSON key of struct type t (embedded structs
// flattened, as encoding/json does) to whether it is sent always (no
// omitempty).
func jsonFields(t reflect.Type) map[string]bool {
	out := map[string]bool{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag, ok := f.Tag.Lookup("json")
		if f.Anonymous && !ok {
			for k, v := range jsonFields(f.Type) {
				out[k] = v
			}
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		out[name] = !strings.Contains(opts, "omitempty")
	}
	return out
}

// schemaFields maps each property of an object schema to whether it is
// required.
func schemaFields(t *testing.T, where string, s map[string]any) map[string]bool {
	t.Helper()
	props, ok := s["properties"].(map[string]any)
	if !ok {
		t.Fatalf("%s has no properties", where)
	}
	if s["additionalProperties"] != false {
		t.Errorf("%s must set additionalProperties false: the contract lists every key", where)
	}
	out := map[string]bool{}
	for k := range props {
		out[k] = false
	}
	req, _ := s["required"].([]any)
	for _, r := range req {
		k := r.(string)
		if _, ok := out[k]; !ok {
			t.Errorf("%s requires %q, which it does not describe", where, k)
		}
		out[k] = true
	}
	return out
}

func sameFields(t *testing.T, where string, goType reflect.Type, s map[string]any) {
	t.Helper()
	got, want := jsonFields(goType), schemaFields(t, where, s)
	for k, always := range want {
		sent, ok := got[k]
		switch {
		case !ok:
			t.Errorf("%s: schema property %q has no field in %s", where, k, goType)
		case always != sent:
			t.Errorf("%s: %q required=%v in the schema but %s sends it always=%v (omitempty must match required)", where, k, always, goType, sent)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: %s field %q is not a schema property", where, goType, k)
		}
	}
}

// Every operation's Go body has exactly its schema's keys, and a key is
// sent always exactly when the schema requires it; the same for the plan
// steps and the branchDelete targets.
func TestBodiesMatchSchemas(t *testing.T) {
	for _, op := range Names() {
		t.Run(op, func(t *testing.T) {
			s := schemaDoc(t, SchemaFile(op))
			sameFields(t, SchemaFile(op), reflect.TypeOf(New(op)).Elem(), s)
		})
	}
	plan := schemaDoc(t, SchemaFile("plan"))
	defs := plan["$defs"].(map[string]any)
	if len(defs) != len(PlanStepOps) {
		t.Errorf("plan schema defines %d steps, PlanStepOps lists %d", len(defs), len(PlanStepOps))
	}
	for _, op := range PlanStepOps {
		d, ok := defs[op+"Step"].(map[string]any)
		if !ok {
			t.Errorf("plan schema has no $defs/%sStep", op)
			continue
		}
		sameFields(t, "plan $defs/"+op+"Step", reflect.TypeOf(StepBody(op)).Elem(), d)
	}
	bd := schemaDoc(t, SchemaFile("branchDelete"))
	items := bd["properties"].(map[string]any)["targets"].(map[string]any)["items"].(map[string]any)
	sameFields(t, "branchDelete targets[]", reflect.TypeOf(DeleteTarget{}), items)
}

// The operation list is one list: All, the schema files, the agent
// policy's operations enum and the operation.preview.* spec files (whose
// audit.risk is the operation's Risk) name the same operations.
func TestOperationListIsOneList(t *testing.T) {
	names := Names()
	sorted := slices.Sorted(slices.Values(names))

	files, err := fs.Glob(schemas.FS, "operations/*.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var fromSchemas []string
	for _, f := range files {
		fromSchemas = append(fromSchemas, strings.TrimSuffix(strings.TrimPrefix(f, "operations/"), ".schema.json"))
	}
	sort.Strings(fromSchemas)
	if !slices.Equal(fromSchemas, sorted) {
		t.Errorf("schemas/operations has %v, operation.All has %v", fromSchemas, sorted)
	}

	pol := schemaDoc(t, "agent-policy.schema.json")
	enum := pol["properties"].(map[string]any)["rules"].(map[string]any)["items"].(map[string]any)["properties"].(map[string]any)["operations"].(map[string]any)["items"].(map[string]any)["enum"].([]any)
	var fromPolicy []string
	for _, e := range enum {
		fromPolicy = append(fromPolicy, e.(string))
	}
	if !slices.Equal(fromPolicy, names) {
		t.Errorf("agent-policy.schema.json operations enum is %v, want %v (operation.All, in order)", fromPolicy, names)
	}

	specs, err := filepath.Glob(filepath.Join("..", "..", "spec", "tools", "operation.preview.*.yaml"))
	if err != nil || len(specs) == 0 {
		t.Fatalf("no spec/tools/operation.preview.*.yaml found (%v)", err)
	}
	var fromSpec []string
	for _, f := range specs {
		op := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), "operation.preview."), ".yaml")
		fromSpec = append(fromSpec, op)
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Audit struct {
				Risk string `yaml:"risk"`
			} `yaml:"audit"`
		}
		if err := yaml.Unmarshal(raw, &doc); err != nil {
			t.Fatalf("parse %s: %v", f, err)
		}
		if Known(op) && doc.Audit.Risk != Risk(op) {
			t.Errorf("%s has audit.risk %q, operation.Risk(%q) is %q", filepath.Base(f), doc.Audit.Risk, op, Risk(op))
		}
	}
	sort.Strings(fromSpec)
	if !slices.Equal(fromSpec, sorted) {
		t.Errorf("spec/tools has previews %v, operation.All has %v", fromSpec, sorted)
	}
}

// lookup follows a '/'-separated path of object keys (and "items").
func lookup(t *testing.T, doc map[string]any, path string) map[string]any {
	t.Helper()
	cur := doc
	for _, k := range strings.Split(path, "/") {
		next, ok := cur[k].(map[string]any)
		if !ok {
			t.Fatalf("no %s in the schema", path)
		}
		cur = next
	}
	return cur
}

// The schemas carry the bounds the Go constants name.
func TestSchemaBoundsAreTheConstants(t *testing.T) {
	tests := []struct {
		file, path, key string
		want            int
	}{
		{"merge", "properties/sourceRef", "maxLength", MaxText},
		{"merge", "properties/reason", "maxLength", MaxText},
		{"merge", "properties/repoPath", "maxLength", MaxPathLen},
		{"push", "properties/remote", "maxLength", MaxText},
		{"discard", "properties/paths", "maxItems", MaxPaths},
		{"discard", "properties/paths/items", "maxLength", MaxPathLen},
		{"patch", "properties/patchContent", "maxLength", MaxPatch},
		{"commit", "properties/message", "maxLength", MaxCommitMessage},
		{"submodulePointer", "properties/message", "maxLength", MaxPointerMessage},
		{"plan", "properties/steps", "maxItems", MaxPlanSteps},
		{"plan", "$defs/patchStep/properties/patchContent", "maxLength", MaxPatch},
		{"branchDelete", "properties/targets", "maxItems", MaxDeleteRepos},
		{"branchDelete", "properties/targets/items/properties/branches", "maxItems", MaxDeleteBranches},
		{"branchDelete", "properties/targets/items/properties/branches/items", "maxLength", MaxText},
	}
	for _, tt := range tests {
		t.Run(tt.file+"/"+tt.path, func(t *testing.T) {
			got := lookup(t, schemaDoc(t, SchemaFile(tt.file)), tt.path)[tt.key]
			if got != float64(tt.want) {
				t.Errorf("%s %s.%s = %v, want %d", tt.file, tt.path, tt.key, got, tt.want)
			}
		})
	}
}

const testUUID = "0f8fad5b-d9cb-469f-a165-70867728950e"

// example is op's schema example: a full body as the provider builds it.
func example(t *testing.T, op string) map[string]any {
	t.Helper()
	ex, _ := schemaDoc(t, SchemaFile(op))["examples"].([]any)
	if len(ex) == 0 {
		t.Fatalf("%s has no examples: every operation schema carries one full body", SchemaFile(op))
	}
	return ex[0].(map[string]any)
}

// Each schema's example conforms to it and survives a decode into the Go
// type and an encode back unchanged (a key the type lacks, or drops when
// set, would be lost); each of the listed breaks makes a body fail.
func TestValidate(t *testing.T) {
	for _, op := range Names() {
		t.Run(op, func(t *testing.T) {
			m := example(t, op)
			if err := Validate(op, m); err != nil {
				t.Fatalf("the %s example fails its schema: %v", op, err)
			}
			raw, _ := json.Marshal(m)
			typed, err := Decode(op, raw)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			if back := generic(t, typed); !reflect.DeepEqual(back, m) {
				t.Errorf("the %s example changed through %T:\n got %v\nwant %v", op, typed, back, m)
			}
		})
	}
	breaks := []struct {
		name, op string
		edit     func(m map[string]any)
	}{
		{"unknown key", "merge", func(m map[string]any) { m["force"] = true }},
		{"missing strategy", "merge", func(m map[string]any) { delete(m, "strategy") }},
		{"blank ref", "merge", func(m map[string]any) { m["sourceRef"] = "   " }},
		{"ref too long", "reset", func(m map[string]any) { m["targetRef"] = strings.Repeat("é", MaxText+1) }},
		{"interactive rebase", "rebase", func(m map[string]any) { m["interactive"] = true }},
		{"bad mode", "reset", func(m map[string]any) { m["mode"] = "keep" }},
		{"no paths", "discard", func(m map[string]any) { m["paths"] = []any{} }},
		{"reason too long", "commit", func(m map[string]any) { m["reason"] = strings.Repeat("x", MaxText+1) }},
		{"previewId not a uuid", "push", func(m map[string]any) { m["previewId"] = "abc" }},
		{"key of another op", "push", func(m map[string]any) { m["idempotencyKey"] = "merge:call:" + testUUID }},
		{"wrong operationType", "branch", func(m map[string]any) { m["operationType"] = "merge" }},
		{"agentId ends with -", "branch", func(m map[string]any) { m["agentId"] = "claude-" }},
		{"stamp without millis", "worktree", func(m map[string]any) { m["requestedAt"] = "2026-01-02T03:04:05Z" }},
		{"plan step of another op", "plan", func(m map[string]any) { m["steps"] = []any{map[string]any{"operationType": "push"}} }},
		{"plan step with a foreign key", "plan", func(m map[string]any) {
			m["steps"] = []any{map[string]any{"operationType": "reset", "targetRef": "HEAD", "paths": []any{"a"}}}
		}},
		{"eleven plan steps", "plan", func(m map[string]any) {
			s := []any{}
			for range MaxPlanSteps + 1 {
				s = append(s, map[string]any{"operationType": "reset", "targetRef": "HEAD"})
			}
			m["steps"] = s
		}},
		{"full ref to delete", "branchDelete", func(m map[string]any) {
			m["targets"] = []any{map[string]any{"repoPath": "/r", "branches": []any{"refs/heads/x"}}}
		}},
		{"branch twice", "branchDelete", func(m map[string]any) {
			m["targets"] = []any{map[string]any{"repoPath": "/r", "branches": []any{"x", "x"}}}
		}},
		{"record without message", "submodulePointer", func(m map[string]any) { delete(m, "message") }},
		{"return with message", "submodulePointer", func(m map[string]any) { m["direction"] = "return" }},
		{"short oid", "submodulePointer", func(m map[string]any) { m["expectedRecordedOid"] = "abc123" }},
	}
	for _, tt := range breaks {
		t.Run("refuses/"+tt.name, func(t *testing.T) {
			m := example(t, tt.op)
			tt.edit(m)
			err := Validate(tt.op, m)
			var ve *jsonschema.ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("Validate(%s) = %v, want a schema violation", tt.op, err)
			}
		})
	}
	if err := Validate("amend", map[string]any{}); err == nil || !strings.Contains(err.Error(), "unknown operation") {
		t.Errorf("Validate of an unknown op = %v", err)
	}
}

// A plan step keeps its bytes: the provider forwards the agent's step
// exactly, and the executor sees it typed.
func TestPlanStepKeepsItsBytes(t *testing.T) {
	raw := `[{"operationType":"merge","sourceRef":"f","targetRef":"main","strategy":"squash"},{"operationType":"nope","x":1}]`
	var steps []PlanStep
	if err := json.Unmarshal([]byte(raw), &steps); err != nil {
		t.Fatal(err)
	}
	m, ok := steps[0].Body.(*MergeStep)
	if !ok || m.Strategy != "squash" || m.SourceRef != "f" {
		t.Errorf("step 0 = %#v", steps[0].Body)
	}
	if steps[1].Body != nil || steps[1].OperationType != "nope" {
		t.Errorf("step 1 = %#v", steps[1])
	}
	out, _ := json.Marshal(steps)
	if string(out) != raw {
		t.Errorf("re-encoded %s, want %s", out, raw)
	}
}

// generic encodes v and decodes it as a plain JSON value.
func generic(t *testing.T, v any) map[string]any {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// A plan's steps encode byte for byte as the provider encoded them when
// it sent the steps array as one json.RawMessage: spacing dropped, HTML
// characters escaped, key order and escapes kept.
func TestPlanStepsEncodeAsTheRawArrayDid(t *testing.T) {
	for _, raw := range []string{
		`[{"operationType":"reset","targetRef":"HEAD"}]`,
		" [ {\"operationType\" : \"merge\", \"sourceRef\":\"a<b>&\\u00e9\",\n \"targetRef\":\"main\"} ,{\"targetRef\":\"x\",\"operationType\":\"reset\"} ] ",
		`[{"operationType":"patch","patchContent":"x\ny","applyToIndex":true},{"operationType":"nope"}]`,
	} {
		old, err := json.Marshal(struct {
			Steps json.RawMessage `json:"steps"`
		}{json.RawMessage(strings.TrimSpace(raw))})
		if err != nil {
			t.Fatal(err)
		}
		var p Plan
		if err := json.Unmarshal([]byte(`{"steps":`+raw+`}`), &p); err != nil {
			t.Fatal(err)
		}
		now, err := json.Marshal(struct {
			Steps []PlanStep `json:"steps"`
		}{p.Steps})
		if err != nil {
			t.Fatal(err)
		}
		if string(now) != string(old) {
			t.Errorf("steps %q encode as\n%s\nwant\n%s", raw, now, old)
		}
	}
}
