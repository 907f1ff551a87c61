package tests

import (
	"bytes"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/fluxgit/fluxgit/tests/gatewaytest"
)

const (
	jwtSecret   = "0123456789abcdef0123456789abcdef-http-test"
	jwtIssuer   = "https://issuer.test"
	jwtAudience = "fluxgit-test"
)

func jwtEnv(t testing.TB, env []string) []string {
	return append(env, "MCP_AUTH_MODE=jwt", "MCP_JWT_SECRET="+jwtSecret, "MCP_JWT_ISSUER="+jwtIssuer, "MCP_JWT_AUDIENCE="+jwtAudience)
}

// mint signs an HS256 token for subject sub with the audience and expiry given.
func mint(t testing.TB, sub, aud string, exp time.Time) string {
	t.Helper()
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: []byte(jwtSecret)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.Signed(signer).Claims(jwt.Claims{Subject: sub, Issuer: jwtIssuer, Audience: jwt.Audience{aud},
		Expiry: jwt.NewNumericDate(exp), IssuedAt: jwt.NewNumericDate(time.Now().Add(-time.Minute))}).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// With MCP_AUTH_MODE=jwt the endpoint answers only valid bearer tokens,
// and the token's subject is the agent id the gateway sees, whatever
// clientInfo says; a non-loopback bind is then allowed.
func TestHTTPAuthJWT(t *testing.T) {
	g := gatewaytest.New(t)
	repo := fixtureRepo(t)
	s := startHTTP(t, jwtEnv(t, handshakeEnv(t, g)), "--session-mode", "stateful")
	list := modernRequest(1, "tools/list", nil)
	for _, c := range []struct {
		name   string
		token  string
		status int
	}{
		{"no token", "", 401},
		{"expired", mint(t, "agent-alice", jwtAudience, time.Now().Add(-time.Hour)), 401},
		{"wrong audience", mint(t, "agent-alice", "someone-else", time.Now().Add(time.Hour)), 401},
		{"garbage", "not.a.token", 401},
		{"valid", mint(t, "agent-alice", jwtAudience, time.Now().Add(time.Hour)), 200},
	} {
		t.Run(c.name, func(t *testing.T) {
			hdr := modernHeaders("tools/list", "")
			if c.token != "" {
				hdr["Authorization"] = "Bearer " + c.token
			}
			resp, body := post(t, s.url, list, hdr)
			if resp.StatusCode != c.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, c.status, body)
			}
			if c.status == 401 && !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
				t.Fatalf("401 without a Bearer challenge: %v", resp.Header)
			}
		})
	}
	// The subject, not clientInfo.name, reaches the gateway; the session
	// is the subject's own.
	tok := mint(t, "agent-alice", jwtAudience, time.Now().Add(time.Hour))
	auth := map[string]string{"Authorization": "Bearer " + tok}
	resp, body := post(t, s.url, []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"claims-to-be-bob","version":"1"}}}`), auth)
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != 200 || sid == "" {
		t.Fatalf("initialize: %d %s", resp.StatusCode, body)
	}
	g.Script(gatewaytest.Plan{Statuses: []string{"completed"}})
	call := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"operation.preview.branch","arguments":` +
		jsonOf(withPreviewBase(minimalArgs(repo)["branch"], repo)) + `}}`)
	resp, body = post(t, s.url, call, merge(auth, map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}))
	if resp.StatusCode != 200 || !bytes.Contains(body, []byte(`completed`)) {
		t.Fatalf("preview: %d %s", resp.StatusCode, body)
	}
	if reqs := g.RequestsTo(gatewaytest.Preview); len(reqs) != 1 || reqs[0].JSON()["agentId"] != "agent-alice" {
		t.Fatalf("gateway saw %s", describe(reqs))
	}
	other := mint(t, "agent-mallory", jwtAudience, time.Now().Add(time.Hour))
	resp, _ = post(t, s.url, []byte(`{"jsonrpc":"2.0","id":2,"method":"ping"}`), map[string]string{"Authorization": "Bearer " + other, "Mcp-Session-Id": sid})
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("another subject on alice's session: %d", resp.StatusCode)
	}
	// With authentication a wildcard bind is allowed.
	open := startHTTP(t, jwtEnv(t, baseEnv(t)), "--http-host", "0.0.0.0")
	if !strings.Contains(open.url, "0.0.0.0") && !strings.Contains(open.url, "[::]") {
		t.Fatalf("bound %s", open.url)
	}
	// A bad auth setting stops the server with the reason.
	cmd := exec.Command(fluxgitBin, "serve", "--transport", "http", "--http-port", "0", "--auth-mode", "jwt")
	cmd.Env = baseEnv(t)
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "MCP_JWT_") {
		t.Fatalf("jwt without settings: %v %s", err, out)
	}
}
