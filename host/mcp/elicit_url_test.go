package mcp

import (
	"encoding/json"
	"testing"

	"github.com/fluxgit/fluxgit/internal/wire"
)

// URL-mode elicitation counts only when capabilities.elicitation.url is
// an object; an elicitation object without it is form only, and a URL
// request to such a client is refused naming the nested capability.
func TestElicitationURLCapability(t *testing.T) {
	cases := []struct {
		caps      string
		form, url bool
	}{
		{`{}`, false, false},
		{`{"elicitation":{}}`, true, false},
		{`{"elicitation":{"form":{}}}`, true, false},
		{`{"elicitation":{"url":{}}}`, true, true},
		{`{"elicitation":{"form":{},"url":{}}}`, true, true},
		{`{"elicitation":{"url":true}}`, true, false},
		{`{"elicitation":{"url":null}}`, true, false},
		{`{"elicitation":null,"url":{}}`, false, false},
	}
	urlReq := &wire.ClientRequest{Method: wire.MethodElicitation, Params: json.RawMessage(`{"mode":"url","message":"m","url":"http://127.0.0.1:1/ui/p/x","elicitationId":"x"}`)}
	formReq := &wire.ClientRequest{Method: wire.MethodElicitation, Params: json.RawMessage(`{"message":"m","requestedSchema":{"type":"object"}}`)}
	for _, tc := range cases {
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(tc.caps), &m); err != nil {
			t.Fatal(err)
		}
		c := parseClientCaps(m)
		if c.elicitation != tc.form || c.elicitationURL != tc.url {
			t.Errorf("%s: elicitation %v url %v, want %v %v", tc.caps, c.elicitation, c.elicitationURL, tc.form, tc.url)
		}
		if f := capabilityRefusal(c, formReq, true); (f == nil) != tc.form {
			t.Errorf("%s: form request refusal %v", tc.caps, f)
		}
		f := capabilityRefusal(c, urlReq, true)
		if (f == nil) != tc.url {
			t.Errorf("%s: url request refusal %v", tc.caps, f)
		}
		if f != nil && tc.form {
			want := `{"requiredCapabilities":{"elicitation":{"url":{}}}}`
			if b, _ := json.Marshal(f.Data); string(b) != want {
				t.Errorf("%s: refusal data %s, want %s", tc.caps, b, want)
			}
		}
	}
}

// A requestState carries the provider's resume value after the host's
// token only when it is a safe token; anything else is never handed on.
func TestValidResume(t *testing.T) {
	for s, want := range map[string]bool{
		"3f2b8c1e-5d4a-4e6f-9a7b-1c2d3e4f5a6b": true,
		"a_b-C9":                               true,
		"":                                     false,
		"a.b":                                  false,
		"a/b":                                  false,
		string(make([]byte, wire.MaxResume+1)): false,
	} {
		if got := validResume(s); got != want {
			t.Errorf("validResume(%q) = %v, want %v", s, got, want)
		}
	}
}
