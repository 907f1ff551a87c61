package catalog

import (
	"encoding/json"
	"testing"

	"github.com/fluxgit/fluxgit/spec"
)

// BenchmarkLoad measures host startup work for the embedded spec: parse,
// metaschema check, $ref inlining (schemas are compiled lazily, not here).
func BenchmarkLoad(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Load(spec.FS); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCompile measures the one-off lazy compilation of every tool's
// input and output schema (what the first call of each tool pays).
func BenchmarkCompile(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		c, err := Load(spec.FS)
		if err != nil {
			b.Fatal(err)
		}
		for _, t := range c.Tools {
			if _, _, err := t.in.get("mem:///bench/in.json", t.InputSchema); err != nil {
				b.Fatal(err)
			}
			if _, _, err := t.out.get("mem:///bench/out.json", t.OutputSchema); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func BenchmarkValidateArguments(b *testing.B) {
	c, err := Load(spec.FS)
	if err != nil {
		b.Fatal(err)
	}
	tool, _ := c.Tool("diff.text")
	var valid, invalid any
	_ = json.Unmarshal([]byte(`{"repoPath":"/home/dev/src/webshop","base":"HEAD~1","head":"HEAD","path":"src/a.go","maxBytes":65536}`), &valid)
	_ = json.Unmarshal([]byte(`{"repoPath":"/home/dev/src/webshop","base":"--output=/tmp/x","maxBytes":65536}`), &invalid)
	if err := tool.ValidateArguments(valid); err != nil {
		b.Fatal(err)
	}
	b.Run("valid", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := tool.ValidateArguments(valid); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("invalid", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := tool.ValidateArguments(invalid); err == nil {
				b.Fatal("no error")
			}
		}
	})
}

func BenchmarkValidatePayload(b *testing.B) {
	c, err := Load(spec.FS)
	if err != nil {
		b.Fatal(err)
	}
	tool, _ := c.Tool("repo.status")
	var payload any
	_ = json.Unmarshal([]byte(`{"tool":"repo.status","readOnly":true,"tier":"free","source":"local-git","repoPath":"/r",
		"data":{"branch":"main","detached":false,"oid":null,"upstream":null,"ahead":0,"behind":0,"clean":false,"changedFiles":2,
		"entries":[{"status":" M","path":"a.go"},{"status":"??","path":"b.go"}],"truncated":false}}`), &payload)
	b.ReportAllocs()
	for b.Loop() {
		if err := tool.ValidatePayload(payload); err != nil {
			b.Fatal(err)
		}
	}
}
