package main

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

// Flags win over the environment; the environment fills what no flag
// gave; bad values are refused with the flag and variable named.
func TestHTTPOptionsResolve(t *testing.T) {
	for _, c := range []struct {
		name    string
		env     map[string]string
		args    []string
		want    httpOptions
		wantErr string
	}{
		{name: "defaults", want: httpOptions{transport: "stdio", host: "127.0.0.1", port: 3010, path: "/mcp", sessionMode: "auto", authMode: "none", maxConns: 1024, timeouts: defaultHTTPTimeouts}},
		{name: "environment", env: map[string]string{"MCP_TRANSPORT_TYPE": "HTTP", "MCP_HTTP_HOST": "::1", "MCP_HTTP_PORT": "8080", "MCP_SESSION_MODE": "stateless", "MCP_HTTP_PATH": "/x", "MCP_HTTP_MAX_CONNECTIONS": "7"},
			want: httpOptions{transport: "http", host: "::1", port: 8080, path: "/x", sessionMode: "stateless", authMode: "none", maxConns: 7, timeouts: defaultHTTPTimeouts}},
		{name: "flags win", env: map[string]string{"MCP_HTTP_PORT": "8080", "MCP_SESSION_MODE": "bogus"}, args: []string{"--http-port", "9", "--session-mode", "stateful"},
			want: httpOptions{transport: "stdio", host: "127.0.0.1", port: 9, path: "/mcp", sessionMode: "stateful", authMode: "none", maxConns: 1024, timeouts: defaultHTTPTimeouts}},
		{name: "test timeouts", args: []string{"--http-test-timeouts", "body=300ms,keepalive=50ms"},
			want: httpOptions{transport: "stdio", host: "127.0.0.1", port: 3010, path: "/mcp", sessionMode: "auto", authMode: "none", maxConns: 1024,
				testTimeouts: "body=300ms,keepalive=50ms", timeouts: httpTimeouts{header: 10 * time.Second, body: 300 * time.Millisecond, idle: 2 * time.Minute, keepAlive: 50 * time.Millisecond}}},
		{name: "bad test timeouts", args: []string{"--http-test-timeouts", "body=soon"}, wantErr: "--http-test-timeouts"},
		{name: "unknown test timeout", args: []string{"--http-test-timeouts", "read=1s"}, wantErr: "unknown deadline"},
		{name: "bad connection cap", env: map[string]string{"MCP_HTTP_MAX_CONNECTIONS": "0"}, wantErr: "MCP_HTTP_MAX_CONNECTIONS"},
		{name: "connection cap not a number", env: map[string]string{"MCP_HTTP_MAX_CONNECTIONS": "many"}, wantErr: "MCP_HTTP_MAX_CONNECTIONS"},
		{name: "bad transport", env: map[string]string{"MCP_TRANSPORT_TYPE": "sse"}, wantErr: "MCP_TRANSPORT_TYPE"},
		{name: "bad port", env: map[string]string{"MCP_HTTP_PORT": "http"}, wantErr: "MCP_HTTP_PORT"},
		{name: "port range", args: []string{"--http-port", "70000"}, wantErr: "out of range"},
		{name: "bad mode", env: map[string]string{"MCP_SESSION_MODE": "sometimes"}, wantErr: "MCP_SESSION_MODE"},
		{name: "bad path", args: []string{"--http-path", "mcp"}, wantErr: "must begin with /"},
		{name: "bad auth", env: map[string]string{"MCP_AUTH_MODE": "basic"}, wantErr: "MCP_AUTH_MODE"},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, k := range []string{"MCP_TRANSPORT_TYPE", "MCP_HTTP_HOST", "MCP_HTTP_PORT", "MCP_HTTP_PATH", "MCP_SESSION_MODE", "MCP_HTTP_ALLOWED_HOSTS", "MCP_HTTP_ALLOWED_ORIGINS", "MCP_AUTH_MODE", "MCP_HTTP_MAX_CONNECTIONS"} {
				t.Setenv(k, c.env[k])
			}
			o := &httpOptions{}
			fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
			o.register(fs)
			if err := fs.Parse(c.args); err != nil {
				t.Fatal(err)
			}
			err := o.resolve(fs)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err %v, want one naming %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(*o, c.want) {
				t.Fatalf("got %+v, want %+v", *o, c.want)
			}
		})
	}
}
