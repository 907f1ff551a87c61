package audit

import (
	"errors"
	"strings"
	"testing"
)

func TestCanonicalRoundTrip(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"sorted keys, compact", `{ "b" : 1, "a" : [3, 2, 1] }`, `{"a":[3,2,1],"b":1}`},
		{"nested objects sort too", `{"z":{"y":1,"x":2},"a":null}`, `{"a":null,"z":{"x":2,"y":1}}`},
		{"upper case before lower", `{"b":1,"B":2,"_":3}`, `{"B":2,"_":3,"b":1}`},
		// UTF-8 byte order, not UTF-16: U+FFFF (EF BF BF) sorts before U+10000 (F0 90 80 80).
		{"utf-8 byte order", `{"𐀀":1,"\uffff":2,"é":3,"z":4}`, "{\"z\":4,\"é\":3,\"\uffff\":2,\"𐀀\":1}"},
		{"html and separators stay raw", `"</script>&\u2028\u007f/"`, "\"</script>&\u2028\u007f/\""},
		{"short escapes", `"\b\f\n\r\t\"\\\/"`, `"\b\f\n\r\t\"\\/"`},
		{"other controls as lower-case \\u00XX", `"\u0001\u001F"`, `"\u0001\u001f"`},
		{"surrogate pair decoded", `"\ud83d\ude00"`, `"😀"`},
		{"empty containers", `{"a":{},"b":[]}`, `{"a":{},"b":[]}`},
		{"literals", `[true,false,null]`, `[true,false,null]`},
		{"integers", `[0,1,-1,18446744073709551615,-9223372036854775808]`, `[0,1,-1,18446744073709551615,-9223372036854775808]`},
		{"big integers become doubles", `[18446744073709551616,-9223372036854775809]`, `[1.8446744073709552e19,-9.223372036854776e18]`},
		{"negative zero", `[-0,-0.0,0.0]`, `[-0.0,-0.0,0.0]`},
		{"doubles like ryu", `[1.0,1e2,1.5,0.1,1e15,1e16,1.5e16,0.00001,0.000001,1.5e-7,123456.789e3,5e-324,1.7976931348623157e308]`,
			`[1.0,100.0,1.5,0.1,1000000000000000.0,1e16,1.5e16,0.00001,1e-6,1.5e-7,123456789.0,5e-324,1.7976931348623157e308]`},
		{"exponent forms", `[1E2,1e+2,2.5E-3]`, `[100.0,100.0,0.0025]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := Parse([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			got, err := Canonical(v)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Fatalf("got  %s\nwant %s", got, tc.want)
			}
			// Canonical output is a fixed point.
			v2, err := Parse(got)
			if err != nil {
				t.Fatal(err)
			}
			if again, _ := Canonical(v2); string(again) != tc.want {
				t.Fatalf("not a fixed point: %s", again)
			}
		})
	}
}

func TestParseRejects(t *testing.T) {
	deep := strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1)
	for _, in := range []string{
		``, `{`, `{"a":1,}`, `[1,]`, `{"a" 1}`, `{a:1}`, `01`, `1.`, `.5`, `-`, `1e`, `+1`, `tru`, `nul`,
		`"\ud800"`, `"\udc00x"`, `"\ud800\u0041"`, "\"\x01\"", "\"\xff\"", `"\x"`, `"\u12"`,
		`1 2`, `{"a":1}x`, `1e400`, `-1e400`, deep,
	} {
		if _, err := Parse([]byte(in)); err == nil {
			t.Errorf("Parse(%q) succeeded", in)
		}
	}
	if _, err := Parse([]byte(`{"a":1,"b":2,"a":3}`)); !errors.Is(err, ErrDuplicateKey) {
		t.Errorf("duplicate key: %v", err)
	}
	if _, err := Parse([]byte(`{"b":{"x":1,"x":1}}`)); !errors.Is(err, ErrDuplicateKey) {
		t.Errorf("nested duplicate key: %v", err)
	}
}

func TestObjectSetGetWithout(t *testing.T) {
	var o Object
	for _, k := range []string{"m", "a", "z", "b", "a"} {
		o = o.Set(k, k)
	}
	if got, _ := Canonical(o); string(got) != `{"a":"a","b":"b","m":"m","z":"z"}` {
		t.Fatalf("got %s", got)
	}
	if v, ok := o.Get("m"); !ok || v != "m" {
		t.Fatal("Get")
	}
	if _, ok := o.Get("q"); ok {
		t.Fatal("Get missing")
	}
	if got, _ := Canonical(o.Without("a", "z")); string(got) != `{"b":"b","m":"m"}` {
		t.Fatalf("Without: %s", got)
	}
	// An unsorted Object literal is still written canonically.
	if got, _ := Canonical(Object{{"b", 1}, {"a", map[string]any{"d": true, "c": []any{int64(1)}}}}); string(got) != `{"a":{"c":[1],"d":true},"b":1}` {
		t.Fatalf("unsorted: %s", got)
	}
}

func FuzzCanonical(f *testing.F) {
	for _, s := range []string{`{"b":1,"a":[1.5,"x\n"]}`, `"\ud83d\ude00"`, `-0`, `1e300`, `{"é":{"e":null}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		v, err := Parse(in)
		if err != nil {
			return
		}
		c1, err := Canonical(v)
		if err != nil {
			t.Fatal(err)
		}
		v2, err := Parse(c1)
		if err != nil {
			t.Fatalf("canonical output does not parse: %s: %v", c1, err)
		}
		c2, _ := Canonical(v2)
		if string(c1) != string(c2) {
			t.Fatalf("not a fixed point:\n%s\n%s", c1, c2)
		}
	})
}
