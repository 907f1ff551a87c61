package rpc

import (
	"encoding/json"
	"testing"
)

func TestUnescapeHTML(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"a":"x"}`, `{"a":"x"}`},
		{`{"a":"\u003cb\u003e \u0026 \u003C"}`, `{"a":"<b> & <"}`},
		// An escaped backslash followed by u003c is the literal text
		// \u003c and must stay escaped.
		{`{"a":"\\u003c"}`, `{"a":"\\u003c"}`},
		{`{"a":"\\\u003c"}`, `{"a":"\\<"}`},
		{`{"a":"\"\u0026\""}`, `{"a":"\"&\""}`},
		// Other \u escapes are untouched.
		{`{"a":"\u00e9\u2028\u0000"}`, `{"a":"\u00e9\u2028\u0000"}`},
		// Keys are strings too.
		{`{"\u003ck\u003e":[1,"\u0026"]}`, `{"<k>":[1,"&"]}`},
		{`"\u003c"`, `"<"`},
	} {
		got := string(UnescapeHTML([]byte(tc.in)))
		if got != tc.want {
			t.Errorf("UnescapeHTML(%s) = %s, want %s", tc.in, got, tc.want)
		}
		var a, b any
		if json.Unmarshal([]byte(tc.in), &a) != nil || json.Unmarshal([]byte(got), &b) != nil {
			t.Fatalf("%s: not JSON", tc.in)
		}
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		if string(ja) != string(jb) {
			t.Errorf("UnescapeHTML(%s) changed the value: %s vs %s", tc.in, ja, jb)
		}
	}
}

func TestMarshalDoesNotEscapeHTML(t *testing.T) {
	b, err := Marshal(map[string]any{"diff": "-a < b && c > d", "raw": json.RawMessage(`"<&>"`)})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"diff":"-a < b && c > d","raw":"<&>"}`; string(b) != want {
		t.Fatalf("got %s, want %s", b, want)
	}
}
