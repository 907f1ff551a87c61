package audit

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/fluxgit/fluxgit/host/mcp"
	"github.com/fluxgit/fluxgit/schemas"
)

func entrySchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	raw, err := schemas.FS.ReadFile("audit-entry.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat = true
	if err := c.AddResource("mem:///audit-entry.schema.json", bytes.NewReader(raw)); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("mem:///audit-entry.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func decodeLine(t *testing.T, line []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// Every entry the ledger writes satisfies schemas/audit-entry.schema.json.
func TestEntriesMatchSchema(t *testing.T) {
	sch := entrySchema(t)
	for _, s := range []*Signer{nil, testSigner(11)} {
		path := ledgerPath(t)
		l := openTest(t, path, s, nil)
		appendN(t, l, 0, 8)
		odd := mcp.CallRecord{Tool: "bad\ttool\x00" + strings.Repeat("x", 400), Outcome: mcp.OutcomeBlocked,
			ErrorMessage: strings.Repeat("é", 600), ClientName: "\x00\x01"}
		if _, err := l.Append(EventFromCall(odd)); err != nil {
			t.Fatal(err)
		}
		for i, line := range readLines(t, path) {
			if err := sch.Validate(decodeLine(t, line)); err != nil {
				t.Errorf("entry %d does not match the schema: %#v", i+1, err)
			}
		}
	}
	// And the schema is not vacuous.
	path := ledgerPath(t)
	appendN(t, openTest(t, path, nil, nil), 0, 2)
	good := readLines(t, path)[1]
	for _, bad := range []string{
		strings.Replace(string(good), `"repo_scope":"repoId:sha256:`, `"repo_scope":"repoId:acme/secret`, 1),
		strings.Replace(string(good), `"sequence":2`, `"sequence":0`, 1),
		strings.Replace(string(good), `"risk":"high"`, `"risk":"extreme"`, 1),
		strings.Replace(string(good), `"sidecarReadOnly":true`, `"sidecarReadOnly":false`, 1),
		strings.Replace(string(good), `{`, `{"arguments":{"repoPath":"/x"},`, 1),
		strings.Replace(string(good), `"entryHash":"sha256:`, `"entryHash":"sha512:`, 1),
	} {
		if bad == string(good) {
			t.Fatalf("replacement did not apply to %s", good)
		}
		if err := sch.Validate(decodeLine(t, []byte(bad))); err == nil {
			t.Errorf("schema accepted %s", bad)
		}
	}
}
