package fluxbridge

import (
	"errors"
	"testing"
)

func TestNormalize(t *testing.T) {
	tests := []struct {
		in   string
		want string
		err  error
	}{
		{"127.0.0.1:59647", "127.0.0.1:59647", nil},
		{"  127.0.0.1:1 \n", "127.0.0.1:1", nil},
		{"http://127.0.0.1:8080", "127.0.0.1:8080", nil},
		{"http://127.0.0.1:8080/", "127.0.0.1:8080", nil},
		{"http://[::1]:5/", "[::1]:5", nil},
		{"[::1]:65535", "[::1]:65535", nil},
		{"127.9.8.7:80", "127.9.8.7:80", nil},
		{"", "", ErrEmpty},
		{"   ", "", ErrEmpty},
		{"localhost:1234", "", ErrNotIP},
		{"http://localhost:1234", "", ErrNotIP},
		{"127.0.0.1", "", ErrPortRequired},
		{"http://127.0.0.1/", "", ErrPortRequired},
		{"127.0.0.1:0", "", ErrPort},
		{"127.0.0.1:65536", "", ErrPort},
		{"https://127.0.0.1:5", "", ErrScheme},
		{"ftp://127.0.0.1:5", "", ErrScheme},
		{"http://u:p@127.0.0.1:5", "", ErrUserinfo},
		{"http://u@127.0.0.1:5", "", ErrUserinfo},
		{"http://127.0.0.1:5/v1", "", ErrExtra},
		{"http://127.0.0.1:5/?a=b", "", ErrExtra},
		{"http://127.0.0.1:5?", "", ErrExtra},
		{"http://127.0.0.1:5#x", "", ErrExtra},
		{"10.0.0.1:5", "", ErrNotLoopback},
		{"0.0.0.0:5", "", ErrNotLoopback},
		{"[::ffff:127.0.0.1]:5", "", ErrNotLoopback},
		{"[fe80::1%25eth0]:5", "", ErrNotIP},
		{"127.1:5", "", ErrNotIP},
		{"127.0.0.1 :5", "", ErrSyntax},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := Normalize(tt.in)
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("Normalize(%q) = %v, %v; want error %v", tt.in, got, err, tt.err)
				}
				return
			}
			if err != nil || got.String() != tt.want {
				t.Fatalf("Normalize(%q) = %v, %v; want %s", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestResolve(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		want    string
		wantVar string
	}{
		{"unset", nil, "", ""},
		{"handshake wins", map[string]string{
			"FLUXGIT_MCP_HANDSHAKE_ADDR": "127.0.0.1:1", "FLUXGIT_GATEWAY_ADDR": "127.0.0.1:2", "FLUXGIT_GATEWAY_URL": "http://127.0.0.1:3/",
		}, "127.0.0.1:1", "FLUXGIT_MCP_HANDSHAKE_ADDR"},
		{"invalid first is skipped", map[string]string{
			"FLUXGIT_MCP_HANDSHAKE_ADDR": "localhost:1", "FLUXGIT_GATEWAY_ADDR": "127.0.0.1:2",
		}, "127.0.0.1:2", "FLUXGIT_GATEWAY_ADDR"},
		{"url last", map[string]string{
			"FLUXGIT_GATEWAY_ADDR": "127.0.0.1", "FLUXGIT_GATEWAY_URL": "http://[::1]:5/",
		}, "[::1]:5", "FLUXGIT_GATEWAY_URL"},
		{"all invalid", map[string]string{
			"FLUXGIT_MCP_HANDSHAKE_ADDR": "localhost:1234", "FLUXGIT_GATEWAY_ADDR": "127.0.0.1", "FLUXGIT_GATEWAY_URL": "https://127.0.0.1:5",
		}, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, ok := Resolve(func(k string) string { return tt.env[k] })
			if ok != (tt.want != "") {
				t.Fatalf("ok = %v, address %v", ok, a)
			}
			if ok && (a.String() != tt.want || a.Variable != tt.wantVar || a.BaseURL() != "http://"+tt.want) {
				t.Fatalf("got %s from %s (%s)", a, a.Variable, a.BaseURL())
			}
		})
	}
}

func TestFromEnv(t *testing.T) {
	for _, v := range Variables {
		t.Setenv(v, "")
	}
	if _, ok := FromEnv(); ok {
		t.Fatal("configured with empty variables")
	}
	t.Setenv("FLUXGIT_GATEWAY_URL", "http://[::1]:5/")
	if a, ok := FromEnv(); !ok || a.String() != "[::1]:5" {
		t.Fatalf("got %v %v", a, ok)
	}
}
