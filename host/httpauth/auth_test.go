package httpauth

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4/jwt"
)

const testResource = "http://localhost:3010/mcp"

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// std returns registered claims valid at t0 for iss and aud.
func std(iss string, aud ...string) jwt.Claims {
	return jwt.Claims{
		Issuer: iss, Subject: "alice", Audience: aud,
		Expiry: jwt.NewNumericDate(t0.Add(5 * time.Minute)), NotBefore: jwt.NewNumericDate(t0.Add(-time.Minute)),
		IssuedAt: jwt.NewNumericDate(t0.Add(-time.Minute)),
	}
}

// with returns c changed by f.
func with(c jwt.Claims, f func(*jwt.Claims)) jwt.Claims {
	f(&c)
	return c
}

// b64 is unpadded base64url, for hand-built tokens.
func b64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

func pemOf(t *testing.T, typ string, der []byte) []byte {
	t.Helper()
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

func publicPEM(t *testing.T, k signingKey) []byte {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(k.priv.Public())
	if err != nil {
		t.Fatal(err)
	}
	return pemOf(t, "PUBLIC KEY", der)
}

func newOAuth(t *testing.T, as *authServer, clk *clock, scopes ...string) *Authenticator {
	t.Helper()
	a, err := New(Config{Mode: ModeOAuth, Resource: testResource, AuthorizationServers: []string{as.issuer},
		RequiredScopes: scopes, Now: clk.now, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return a
}

// TestOAuthTokens drives the oauth mode with tokens from a local
// authorization server: each bad token is refused with the status,
// challenge and body the MCP authorization specification asks for, and
// good ones reach the handler with their subject.
func TestOAuthTokens(t *testing.T) {
	testKeys(t)
	as := newAuthServer(t, "", rsaKey, ecKey, edKey)
	clk := &clock{t: t0}
	a := newOAuth(t, as, clk)
	h := a.Wrap(echoSubject)
	good := std(as.issuer, testResource)
	meta := `resource_metadata="http://localhost:3010/.well-known/oauth-protected-resource/mcp"`

	rsaPublicPEM := publicPEM(t, rsaKey)
	valid := mint(t, rsaKey, good)
	parts := strings.Split(valid, ".")
	tampered := parts[0] + "." + b64(`{"iss":"`+as.issuer+`","sub":"mallory","aud":"`+testResource+`","exp":`+fmt.Sprint(t0.Add(time.Hour).Unix())+`}`) + "." + parts[2]

	tests := []struct {
		name      string
		authz     string
		status    int
		code      string // body error
		challenge string // exact WWW-Authenticate when not empty
		descHas   string
		subject   string
	}{
		{name: "valid RS256", authz: "Bearer " + valid, status: 200, subject: "alice"},
		{name: "valid ES256", authz: "Bearer " + mint(t, ecKey, good), status: 200, subject: "alice"},
		{name: "valid EdDSA", authz: "Bearer " + mint(t, edKey, good), status: 200, subject: "alice"},
		{name: "scheme is case-insensitive", authz: "bearer " + valid, status: 200, subject: "alice"},
		{name: "audience among several", authz: "Bearer " + mint(t, rsaKey, with(good, func(c *jwt.Claims) { c.Audience = jwt.Audience{"https://other.example", testResource} })), status: 200, subject: "alice"},
		{name: "equivalent spelling of the resource", authz: "Bearer " + mint(t, rsaKey, with(good, func(c *jwt.Claims) { c.Audience = jwt.Audience{"HTTP://LOCALHOST:3010/mcp/"} })), status: 200, subject: "alice"},
		{name: "client_id when no sub", authz: "Bearer " + mint(t, rsaKey, with(good, func(c *jwt.Claims) { c.Subject = "" }), map[string]any{"client_id": "ci-bot"}), status: 200, subject: "ci-bot"},
		{name: "expired within leeway", authz: "Bearer " + mint(t, rsaKey, with(good, func(c *jwt.Claims) { c.Expiry = jwt.NewNumericDate(t0.Add(-59 * time.Second)) })), status: 200, subject: "alice"},

		{name: "missing", status: 401, code: "unauthorized", challenge: "Bearer " + meta, descHas: "Authorization: Bearer"},
		{name: "other scheme", authz: "Basic YWxpY2U6cHc=", status: 401, code: "unauthorized", challenge: "Bearer " + meta, descHas: "Bearer"},
		{name: "empty bearer", authz: "Bearer ", status: 401, code: "invalid_token"},
		{name: "malformed", authz: "Bearer not.a.jwt", status: 401, code: "invalid_token", descHas: "compact JWS"},
		{name: "expired", authz: "Bearer " + mint(t, rsaKey, with(good, func(c *jwt.Claims) { c.Expiry = jwt.NewNumericDate(t0.Add(-61 * time.Second)) })), status: 401, code: "invalid_token", descHas: "expired"},
		{name: "no exp", authz: "Bearer " + mint(t, rsaKey, with(good, func(c *jwt.Claims) { c.Expiry = nil })), status: 401, code: "invalid_token", descHas: "exp"},
		{name: "not yet valid", authz: "Bearer " + mint(t, rsaKey, with(good, func(c *jwt.Claims) { c.NotBefore = jwt.NewNumericDate(t0.Add(2 * time.Minute)) })), status: 401, code: "invalid_token", descHas: "not valid before"},
		{name: "issued in the future", authz: "Bearer " + mint(t, rsaKey, with(good, func(c *jwt.Claims) { c.IssuedAt = jwt.NewNumericDate(t0.Add(2 * time.Minute)) })), status: 401, code: "invalid_token", descHas: "future"},
		{name: "wrong issuer", authz: "Bearer " + mint(t, rsaKey, with(good, func(c *jwt.Claims) { c.Issuer = "https://evil.example" })), status: 401, code: "invalid_token", descHas: "not an authorization server"},
		{name: "wrong audience", authz: "Bearer " + mint(t, rsaKey, with(good, func(c *jwt.Claims) { c.Audience = jwt.Audience{"fluxgit"} })), status: 401, code: "invalid_token", descHas: "resource=" + testResource},
		{name: "token for another resource", authz: "Bearer " + mint(t, rsaKey, with(good, func(c *jwt.Claims) { c.Audience = jwt.Audience{"http://localhost:3011/mcp"} })), status: 401, code: "invalid_token", descHas: "not for this server"},
		{name: "resource with another path", authz: "Bearer " + mint(t, rsaKey, with(good, func(c *jwt.Claims) { c.Audience = jwt.Audience{"http://localhost:3010/mcp/admin"} })), status: 401, code: "invalid_token"},
		{name: "no audience", authz: "Bearer " + mint(t, rsaKey, with(good, func(c *jwt.Claims) { c.Audience = nil })), status: 401, code: "invalid_token", descHas: "no audience"},
		{name: "no subject", authz: "Bearer " + mint(t, rsaKey, with(good, func(c *jwt.Claims) { c.Subject = "" })), status: 401, code: "invalid_token", descHas: "no subject"},
		{name: "bad signature (other key, same kid)", authz: "Bearer " + mint(t, rsaForged, good), status: 401, code: "invalid_token", descHas: "signature"},
		{name: "tampered payload", authz: "Bearer " + tampered, status: 401, code: "invalid_token", descHas: "signature"},
		{name: "alg none", authz: "Bearer " + b64(`{"alg":"none","typ":"JWT"}`) + "." + parts[1] + ".", status: 401, code: "invalid_token", descHas: "RS256, ES256, EdDSA"},
		{name: "HS256 keyed with the public key", authz: "Bearer " + mintHMAC(t, rsaPublicPEM, rsaKey.kid, good), status: 401, code: "invalid_token"},
		{name: "oversized token", authz: "Bearer " + strings.Repeat("a", MaxTokenBytes+1), status: 401, code: "invalid_token", descHas: "at most"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := do(h, "/mcp", tc.authz)
			if rec.Code != tc.status {
				t.Fatalf("status = %d, want %d; body %s", rec.Code, tc.status, rec.Body)
			}
			if tc.status == 200 {
				if got := rec.Body.String(); got != tc.subject {
					t.Fatalf("subject = %q, want %q", got, tc.subject)
				}
				return
			}
			code, desc := errorBody(t, rec)
			if code != tc.code {
				t.Errorf("error = %q, want %q", code, tc.code)
			}
			if tc.descHas != "" && !strings.Contains(desc, tc.descHas) {
				t.Errorf("error_description %q lacks %q", desc, tc.descHas)
			}
			ch := rec.Header().Get("WWW-Authenticate")
			if tc.challenge != "" && ch != tc.challenge {
				t.Errorf("WWW-Authenticate = %q, want %q", ch, tc.challenge)
			}
			if !strings.HasPrefix(ch, "Bearer ") || !strings.Contains(ch, meta) {
				t.Errorf("WWW-Authenticate = %q, want a Bearer challenge with %s", ch, meta)
			}
			if tc.code == "invalid_token" && !strings.Contains(ch, `error="invalid_token"`) {
				t.Errorf("WWW-Authenticate = %q lacks error=\"invalid_token\"", ch)
			}
			if strings.Contains(ch, tc.authz[min(len(tc.authz), 7):]) && len(tc.authz) > 20 {
				t.Errorf("WWW-Authenticate echoes the token")
			}
		})
	}
}

// TestQueryTokenRefused: the MCP authorization specification forbids
// tokens in the URI query.
func TestQueryTokenRefused(t *testing.T) {
	testKeys(t)
	as := newAuthServer(t, "", rsaKey)
	a := newOAuth(t, as, &clock{t: t0})
	rec := do(a.Wrap(echoSubject), "/mcp?access_token="+mint(t, rsaKey, std(as.issuer, testResource)), "")
	if rec.Code != http.StatusBadRequest {
		t.Fatalf("status = %d, want 400", rec.Code)
	}
	if code, _ := errorBody(t, rec); code != "invalid_request" {
		t.Fatalf("error = %q, want invalid_request", code)
	}
}

// TestKeyRotation: a token signed with a key the cached JWKS lacks makes
// the JWKS be fetched again (at most once per minRefetch), so a rotated key
// is accepted without a restart.
func TestKeyRotation(t *testing.T) {
	testKeys(t)
	as := newAuthServer(t, "", rsaKey)
	clk := &clock{t: t0}
	a := newOAuth(t, as, clk)
	h := a.Wrap(echoSubject)
	claims := func() jwt.Claims {
		c := std(as.issuer, testResource)
		c.Expiry = jwt.NewNumericDate(clk.now().Add(5 * time.Minute))
		return c
	}

	if rec := do(h, "/mcp", "Bearer "+mint(t, rsaKey, claims())); rec.Code != 200 {
		t.Fatalf("old key: status %d", rec.Code)
	}
	if n := as.fetches.Load(); n != 1 {
		t.Fatalf("JWKS fetched %d times after first token, want 1", n)
	}
	rotated := "Bearer " + mint(t, rsaKey2, claims())
	for range 3 {
		rec := do(h, "/mcp", rotated)
		if rec.Code != 401 {
			t.Fatalf("unknown kid before rotation: status %d, want 401", rec.Code)
		}
	}
	if n := as.fetches.Load(); n != 1 {
		t.Fatalf("JWKS fetched %d times within minRefetch, want 1", n)
	}

	as.publish(rsaKey, rsaKey2)
	clk.advance(minRefetch + time.Second)
	rotated = "Bearer " + mint(t, rsaKey2, claims())
	if rec := do(h, "/mcp", rotated); rec.Code != 200 || rec.Body.String() != "alice" {
		t.Fatalf("rotated key: status %d body %s", rec.Code, rec.Body)
	}
	if n := as.fetches.Load(); n != 2 {
		t.Fatalf("JWKS fetched %d times after rotation, want 2", n)
	}

	// After the TTL the set is fetched again; the old key, now withdrawn,
	// no longer verifies.
	as.publish(rsaKey2)
	clk.advance(keysTTL + time.Second)
	if rec := do(h, "/mcp", "Bearer "+mint(t, rsaKey, claims())); rec.Code != 401 {
		t.Fatalf("withdrawn key: status %d, want 401", rec.Code)
	}
}

// TestScopes: a valid token without a required scope gets 403
// insufficient_scope with the scopes to request.
func TestScopes(t *testing.T) {
	testKeys(t)
	as := newAuthServer(t, "", rsaKey)
	a := newOAuth(t, as, &clock{t: t0}, "mcp:tools", "mcp:resources")
	h := a.Wrap(echoSubject)
	good := std(as.issuer, testResource)
	tests := []struct {
		name   string
		extra  any
		status int
	}{
		{"no scope claim", map[string]any{}, 403},
		{"one of two", map[string]any{"scope": "mcp:tools"}, 403},
		{"scope string", map[string]any{"scope": "openid mcp:resources mcp:tools"}, 200},
		{"scp array", map[string]any{"scp": []string{"mcp:tools", "mcp:resources"}}, 200},
		{"scope of wrong type", map[string]any{"scope": 7}, 403},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := do(h, "/mcp", "Bearer "+mint(t, rsaKey, good, tc.extra))
			if rec.Code != tc.status {
				t.Fatalf("status = %d, want %d; body %s", rec.Code, tc.status, rec.Body)
			}
			if tc.status != 403 {
				return
			}
			code, desc := errorBody(t, rec)
			ch := rec.Header().Get("WWW-Authenticate")
			for _, want := range []string{`error="insufficient_scope"`, `scope="mcp:tools mcp:resources"`, `resource_metadata="`} {
				if !strings.Contains(ch, want) {
					t.Errorf("WWW-Authenticate %q lacks %s", ch, want)
				}
			}
			if code != "insufficient_scope" || !strings.Contains(desc, "mcp:") {
				t.Errorf("body = %s", rec.Body)
			}
		})
	}
	// The missing-token challenge names the scopes too (MCP authorization
	// specification: SHOULD include scope).
	rec := do(h, "/mcp", "")
	if ch := rec.Header().Get("WWW-Authenticate"); !strings.Contains(ch, `scope="mcp:tools mcp:resources"`) {
		t.Fatalf("challenge %q lacks scope", ch)
	}
}

// TestMetadata: both well-known locations serve the same RFC 9728 document
// without a token, naming the resource and its authorization server.
func TestMetadata(t *testing.T) {
	testKeys(t)
	as := newAuthServer(t, "", rsaKey)
	a := newOAuth(t, as, &clock{t: t0}, "mcp:tools")
	h := a.Wrap(echoSubject)
	if got, want := a.MetadataPaths(), []string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("MetadataPaths = %q, want %q", got, want)
	}
	if got := a.ResourceMetadataURL(); got != "http://localhost:3010/.well-known/oauth-protected-resource/mcp" {
		t.Fatalf("ResourceMetadataURL = %q", got)
	}
	for _, p := range a.MetadataPaths() {
		req := httptest.NewRequest(http.MethodGet, "http://localhost:3010"+p, nil)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != 200 || rec.Header().Get("Content-Type") != "application/json" {
			t.Fatalf("%s: status %d type %q", p, rec.Code, rec.Header().Get("Content-Type"))
		}
		var doc struct {
			Resource             string   `json:"resource"`
			AuthorizationServers []string `json:"authorization_servers"`
			BearerMethods        []string `json:"bearer_methods_supported"`
			Scopes               []string `json:"scopes_supported"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if doc.Resource != testResource || !reflect.DeepEqual(doc.AuthorizationServers, []string{as.issuer}) ||
			!reflect.DeepEqual(doc.BearerMethods, []string{"header"}) || !reflect.DeepEqual(doc.Scopes, []string{"mcp:tools"}) {
			t.Fatalf("%s: document %s", p, rec.Body)
		}
	}
	rec := do(h, "/.well-known/oauth-protected-resource", "")
	if rec.Code != http.StatusMethodNotAllowed {
		t.Fatalf("POST metadata: status %d, want 405", rec.Code)
	}
	// A path beside the metadata is still protected.
	if rec := do(h, "/.well-known/oauth-protected-resource/other", ""); rec.Code != 401 {
		t.Fatalf("other well-known path: status %d, want 401", rec.Code)
	}
}

// TestDiscovery covers the authorization server side: an issuer with a
// path is discovered by path insertion; metadata naming another issuer,
// an oversized JWKS, a JWKS redirect to plain http, or an unreachable
// server leave no keys, which is 503, not 401 (a new token would not help).
func TestDiscovery(t *testing.T) {
	testKeys(t)
	tests := []struct {
		name   string
		setup  func(as *authServer)
		status int
	}{
		{name: "issuer with path", status: 200},
		{name: "metadata names another issuer", setup: func(as *authServer) { as.metaIss = "https://evil.example" }, status: 503},
		{name: "oversized JWKS", setup: func(as *authServer) {
			as.jwksExtra = func(w http.ResponseWriter) bool {
				_, _ = w.Write([]byte(`{"keys":[],"pad":"` + strings.Repeat("x", maxDocumentBytes) + `"}`))
				return true
			}
		}, status: 503},
		{name: "JWKS redirects to non-loopback http", setup: func(as *authServer) {
			as.jwksExtra = func(w http.ResponseWriter) bool {
				w.Header().Set("Location", "http://jwks.example.invalid/jwks")
				w.WriteHeader(http.StatusFound)
				return true
			}
		}, status: 503},
		{name: "server down", setup: func(as *authServer) { as.srv.Close() }, status: 503},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			as := newAuthServer(t, "/tenant1", rsaKey)
			if tc.setup != nil {
				tc.setup(as)
			}
			a := newOAuth(t, as, &clock{t: t0})
			rec := do(a.Wrap(echoSubject), "/mcp", "Bearer "+mint(t, rsaKey, std(as.issuer, testResource)))
			if rec.Code != tc.status {
				t.Fatalf("status = %d, want %d; body %s", rec.Code, tc.status, rec.Body)
			}
			if tc.status == 503 {
				if code, _ := errorBody(t, rec); code != "temporarily_unavailable" || rec.Header().Get("Retry-After") == "" {
					t.Fatalf("503 body %s, Retry-After %q", rec.Body, rec.Header().Get("Retry-After"))
				}
			}
		})
	}
}

// TestConcurrentFirstUse: many requests arriving before any key is cached
// share one JWKS fetch and all succeed (run with -race).
func TestConcurrentFirstUse(t *testing.T) {
	testKeys(t)
	as := newAuthServer(t, "", rsaKey)
	a := newOAuth(t, as, &clock{t: t0})
	h := a.Wrap(echoSubject)
	tok := "Bearer " + mint(t, rsaKey, std(as.issuer, testResource))
	var wg sync.WaitGroup
	codes := make([]int, 32)
	for i := range codes {
		wg.Go(func() { codes[i] = do(h, "/mcp", tok).Code })
	}
	wg.Wait()
	for i, c := range codes {
		if c != 200 {
			t.Fatalf("request %d: status %d", i, c)
		}
	}
	if n := as.fetches.Load(); n != 1 {
		t.Fatalf("JWKS fetched %d times, want 1", n)
	}
}

// TestJWTMode covers the three key sources of jwt mode.
func TestJWTMode(t *testing.T) {
	testKeys(t)
	secret := []byte("0123456789abcdef0123456789abcdef-secret")
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "pub.pem")
	if err := os.WriteFile(keyFile, publicPEM(t, rsaKey), 0o600); err != nil {
		t.Fatal(err)
	}
	jwks := newAuthServer(t, "", ecKey)
	good := std("https://issuer.example", "fluxgit")

	type tok struct {
		name   string
		token  string
		status int
	}
	tests := []struct {
		name string
		cfg  Config
		toks []tok
	}{
		{"secret", Config{JWTSecret: string(secret)}, []tok{
			{"valid", mintHMAC(t, secret, "", good), 200},
			{"wrong secret", mintHMAC(t, []byte("another-secret-of-at-least-32-bytes!!"), "", good), 401},
			{"RS256 refused", mint(t, rsaKey, good), 401},
			{"wrong audience", mintHMAC(t, secret, "", with(good, func(c *jwt.Claims) { c.Audience = jwt.Audience{"other"} })), 401},
			{"wrong issuer", mintHMAC(t, secret, "", with(good, func(c *jwt.Claims) { c.Issuer = "https://evil.example" })), 401},
			{"expired", mintHMAC(t, secret, "", with(good, func(c *jwt.Claims) { c.Expiry = jwt.NewNumericDate(t0.Add(-2 * time.Minute)) })), 401},
		}},
		{"public key file", Config{JWTPublicKey: keyFile}, []tok{
			{"valid", mint(t, rsaKey, good), 200},
			{"HS256 keyed with the PEM", mintHMAC(t, publicPEM(t, rsaKey), "", good), 401},
			{"other key", mint(t, rsaKey2, good), 401},
		}},
		{"inline PEM", Config{JWTPublicKey: string(publicPEM(t, rsaKey))}, []tok{
			{"valid", mint(t, rsaKey, good), 200},
		}},
		{"JWKS URL", Config{JWTJWKSURL: jwks.srv.URL + "/jwks"}, []tok{
			{"valid", mint(t, ecKey, good), 200},
			{"unknown key", mint(t, edKey, good), 401},
		}},
	}
	for _, tc := range tests {
		cfg := tc.cfg
		cfg.Mode, cfg.Issuer, cfg.Audience, cfg.Now = ModeJWT, "https://issuer.example", "fluxgit", (&clock{t: t0}).now
		a, err := New(cfg)
		if err != nil {
			t.Fatalf("%s: New: %v", tc.name, err)
		}
		h := a.Wrap(echoSubject)
		for _, k := range tc.toks {
			t.Run(tc.name+"/"+k.name, func(t *testing.T) {
				rec := do(h, "/mcp", "Bearer "+k.token)
				if rec.Code != k.status {
					t.Fatalf("status = %d, want %d; body %s", rec.Code, k.status, rec.Body)
				}
				if k.status == 200 {
					if rec.Body.String() != "alice" {
						t.Fatalf("subject = %q", rec.Body)
					}
					return
				}
				errorBody(t, rec)
				if ch := rec.Header().Get("WWW-Authenticate"); !strings.HasPrefix(ch, `Bearer realm="fluxgit", error="invalid_token"`) {
					t.Fatalf("WWW-Authenticate = %q", ch)
				}
			})
		}
	}
}

// TestNoneMode: none wraps nothing and has no metadata.
func TestNoneMode(t *testing.T) {
	a, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	if a.Mode() != ModeNone || a.MetadataHandler() != nil || a.MetadataPaths() != nil {
		t.Fatalf("none mode: mode %q, metadata %v", a.Mode(), a.MetadataPaths())
	}
	rec := do(a.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := Subject(r.Context()); ok {
			t.Error("subject in none mode")
		}
		w.WriteHeader(204)
	})), "/mcp", "")
	if rec.Code != 204 {
		t.Fatalf("status %d", rec.Code)
	}
}

// TestNewRefusesBadSettings: every unusable setting fails New with an
// error naming the setting.
func TestNewRefusesBadSettings(t *testing.T) {
	testKeys(t)
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	rsaPriv := rsaKey.priv.(*rsa.PrivateKey)
	privFile := write("priv.pem", pemOf(t, "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(rsaPriv)))
	small, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	smallDER, _ := x509.MarshalPKIXPublicKey(&small.PublicKey)
	smallFile := write("small.pem", pemOf(t, "PUBLIC KEY", smallDER))
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	p384DER, _ := x509.MarshalPKIXPublicKey(&p384.PublicKey)
	p384File := write("p384.pem", pemOf(t, "PUBLIC KEY", p384DER))
	garbage := write("garbage.pem", []byte("not pem"))

	jwtBase := func(c Config) Config {
		c.Mode = ModeJWT
		if c.Issuer == "" {
			c.Issuer = "https://issuer.example"
		}
		if c.Audience == "" {
			c.Audience = "fluxgit"
		}
		return c
	}
	secret := strings.Repeat("s", MinSecretBytes)
	oauth := func(c Config) Config {
		c.Mode = ModeOAuth
		if c.Resource == "" {
			c.Resource = "https://mcp.example.com/mcp"
		}
		if c.AuthorizationServers == nil {
			c.AuthorizationServers = []string{"https://auth.example.com"}
		}
		return c
	}
	tests := []struct {
		name    string
		cfg     Config
		errHas  string
		allowed bool
	}{
		{name: "unknown mode", cfg: Config{Mode: "basic"}, errHas: "none, jwt or oauth"},
		{name: "jwt without key", cfg: jwtBase(Config{}), errHas: "exactly one"},
		{name: "jwt with two keys", cfg: jwtBase(Config{JWTSecret: secret, JWTJWKSURL: "https://a.example/jwks"}), errHas: "exactly one"},
		{name: "weak secret", cfg: jwtBase(Config{JWTSecret: secret[1:]}), errHas: "at least 32"},
		{name: "secret of 32 bytes", cfg: jwtBase(Config{JWTSecret: secret}), allowed: true},
		{name: "missing key file", cfg: jwtBase(Config{JWTPublicKey: filepath.Join(dir, "absent.pem")}), errHas: "read the public key file"},
		{name: "not PEM", cfg: jwtBase(Config{JWTPublicKey: garbage}), errHas: "no PEM block"},
		{name: "private key given", cfg: jwtBase(Config{JWTPublicKey: privFile}), errHas: "private key"},
		{name: "RSA 1024", cfg: jwtBase(Config{JWTPublicKey: smallFile}), errHas: "2048"},
		{name: "P-384", cfg: jwtBase(Config{JWTPublicKey: p384File}), errHas: "P-256"},
		{name: "http JWKS off loopback", cfg: jwtBase(Config{JWTJWKSURL: "http://keys.example.com/jwks"}), errHas: "use https"},
		{name: "relative JWKS URL", cfg: jwtBase(Config{JWTJWKSURL: "/jwks"}), errHas: "absolute"},
		{name: "jwt without issuer", cfg: Config{Mode: ModeJWT, JWTSecret: secret, Audience: "x"}, errHas: EnvJWTIssuer},
		{name: "jwt without audience", cfg: Config{Mode: ModeJWT, JWTSecret: secret, Issuer: "x"}, errHas: EnvJWTAudience},
		{name: "jwt with oauth settings", cfg: jwtBase(Config{JWTSecret: secret, Resource: "https://mcp.example.com/mcp"}), errHas: "oauth mode"},
		{name: "oauth valid", cfg: oauth(Config{}), allowed: true},
		{name: "oauth loopback http", cfg: oauth(Config{Resource: "http://127.0.0.1:3010/mcp", AuthorizationServers: []string{"http://localhost:9000"}}), allowed: true},
		{name: "oauth without resource", cfg: Config{Mode: ModeOAuth, AuthorizationServers: []string{"https://auth.example.com"}}, errHas: EnvOAuthResource},
		{name: "resource with fragment", cfg: oauth(Config{Resource: "https://mcp.example.com/mcp#x"}), errHas: "fragment"},
		{name: "resource with query", cfg: oauth(Config{Resource: "https://mcp.example.com/mcp?a=b"}), errHas: "query"},
		{name: "resource over http off loopback", cfg: oauth(Config{Resource: "http://mcp.example.com/mcp"}), errHas: "use https"},
		{name: "oauth without authorization server", cfg: oauth(Config{AuthorizationServers: []string{}}), errHas: EnvOAuthAuthServers},
		{name: "authorization server over http", cfg: oauth(Config{AuthorizationServers: []string{"http://auth.example.com"}}), errHas: "use https"},
		{name: "authorization server with query", cfg: oauth(Config{AuthorizationServers: []string{"https://auth.example.com/?x=1"}}), errHas: "query"},
		{name: "JWKS URL with two servers", cfg: oauth(Config{AuthorizationServers: []string{"https://a.example", "https://b.example"}, OAuthJWKSURL: "https://a.example/jwks"}), errHas: "one authorization server"},
		{name: "oauth with jwt settings", cfg: oauth(Config{JWTSecret: secret}), errHas: "jwt mode"},
		{name: "leeway too large", cfg: oauth(Config{Leeway: 2 * time.Minute}), errHas: "leeway"},
		{name: "bad scope", cfg: oauth(Config{RequiredScopes: []string{`a"b`}}), errHas: EnvRequiredScopes},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.cfg)
			if tc.allowed {
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.errHas) {
				t.Fatalf("New error = %v, want one containing %q", err, tc.errHas)
			}
		})
	}
}

// TestConfigFromEnv: the documented variables land in the right fields
// and lists split on commas or spaces.
func TestConfigFromEnv(t *testing.T) {
	env := map[string]string{
		EnvAuthMode:         " OAuth ",
		EnvOAuthResource:    "https://mcp.example.com/mcp",
		EnvOAuthAuthServers: "https://a.example, https://b.example",
		EnvOAuthJWKSURL:     "https://a.example/jwks",
		EnvRequiredScopes:   "mcp:tools mcp:resources",
		EnvJWTSecret:        " keep spaces ",
		EnvJWTPublicKey:     "/etc/fluxgit/pub.pem",
		EnvJWTJWKSURL:       "https://keys.example/jwks",
		EnvJWTIssuer:        "https://issuer.example",
		EnvJWTAudience:      "fluxgit",
	}
	got := ConfigFromEnv(func(k string) string { return env[k] })
	want := Config{
		Mode: ModeOAuth, Resource: "https://mcp.example.com/mcp",
		AuthorizationServers: []string{"https://a.example", "https://b.example"}, OAuthJWKSURL: "https://a.example/jwks",
		RequiredScopes: []string{"mcp:tools", "mcp:resources"}, JWTSecret: " keep spaces ",
		JWTPublicKey: "/etc/fluxgit/pub.pem", JWTJWKSURL: "https://keys.example/jwks",
		Issuer: "https://issuer.example", Audience: "fluxgit",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ConfigFromEnv = %+v\nwant %+v", got, want)
	}
	if empty := ConfigFromEnv(func(string) string { return "" }); !reflect.DeepEqual(empty, Config{}) {
		t.Fatalf("empty environment gave %+v", empty)
	}
}

// TestTokenNeverLogged: refusals are logged with a reason but never the
// token.
func TestTokenNeverLogged(t *testing.T) {
	testKeys(t)
	as := newAuthServer(t, "", rsaKey)
	var buf bytes.Buffer
	a, err := New(Config{Mode: ModeOAuth, Resource: testResource, AuthorizationServers: []string{as.issuer},
		Now: (&clock{t: t0}).now, Logger: slog.New(slog.NewTextHandler(&buf, nil))})
	if err != nil {
		t.Fatal(err)
	}
	tok := mint(t, rsaKey, std(as.issuer, "http://elsewhere/mcp"))
	if rec := do(a.Wrap(echoSubject), "/mcp", "Bearer "+tok); rec.Code != 401 {
		t.Fatalf("status %d", rec.Code)
	}
	sig := tok[strings.LastIndex(tok, ".")+1:]
	if !strings.Contains(buf.String(), "wrong audience") || strings.Contains(buf.String(), sig) {
		t.Fatalf("log = %q", buf.String())
	}
	if strings.Contains(do(a.Wrap(echoSubject), "/mcp", "Bearer "+tok).Body.String(), sig) {
		t.Fatal("body echoes the token")
	}
}

// TestPreflightPasses: CORS preflights carry no token and reach the
// handler without a subject.
func TestPreflightPasses(t *testing.T) {
	testKeys(t)
	as := newAuthServer(t, "", rsaKey)
	a := newOAuth(t, as, &clock{t: t0})
	h := a.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := Subject(r.Context()); ok {
			t.Error("subject on a preflight")
		}
		w.WriteHeader(204)
	}))
	req := httptest.NewRequest(http.MethodOptions, "http://localhost:3010/mcp", nil)
	req.Header.Set("Access-Control-Request-Method", "POST")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != 204 {
		t.Fatalf("preflight status %d", rec.Code)
	}
	// An OPTIONS that is no preflight needs a token like anything else.
	req = httptest.NewRequest(http.MethodOptions, "http://localhost:3010/mcp", nil)
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != 401 {
		t.Fatalf("plain OPTIONS status %d, want 401", rec.Code)
	}
}

// TestEchoedClaimsBounded: a long foreign issuer is clipped in the
// challenge, which stays a single header of modest size.
func TestEchoedClaimsBounded(t *testing.T) {
	testKeys(t)
	as := newAuthServer(t, "", rsaKey)
	a := newOAuth(t, as, &clock{t: t0})
	tok := mint(t, rsaKey, with(std(as.issuer, testResource), func(c *jwt.Claims) { c.Issuer = "https://" + strings.Repeat("e", 8000) }))
	rec := do(a.Wrap(echoSubject), "/mcp", "Bearer "+tok)
	if rec.Code != 401 {
		t.Fatalf("status %d", rec.Code)
	}
	if ch := rec.Header().Get("WWW-Authenticate"); len(ch) > 1024 || !strings.Contains(ch, `error="invalid_token"`) {
		t.Fatalf("challenge of %d bytes: %.200s", len(ch), ch)
	}
}
