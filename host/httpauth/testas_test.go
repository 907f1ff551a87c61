package httpauth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// signingKey is a private key with the kid and alg tokens carry.
type signingKey struct {
	kid  string
	alg  jose.SignatureAlgorithm
	priv crypto.Signer
}

func (k signingKey) public() jose.JSONWebKey {
	return jose.JSONWebKey{Key: k.priv.Public(), KeyID: k.kid, Algorithm: string(k.alg), Use: "sig"}
}

var (
	keysOnce                   sync.Once
	rsaKey, rsaKey2, rsaForged signingKey
	ecKey, edKey               signingKey
)

// testKeys generates the keys once: RSA generation is slow under -race.
func testKeys(t *testing.T) {
	t.Helper()
	keysOnce.Do(func() {
		gen := func() *rsa.PrivateKey {
			k, err := rsa.GenerateKey(rand.Reader, 2048)
			if err != nil {
				panic(err)
			}
			return k
		}
		rsaKey = signingKey{"rsa-1", jose.RS256, gen()}
		rsaKey2 = signingKey{"rsa-2", jose.RS256, gen()}
		// Same kid as rsaKey, different key: a forged signature.
		rsaForged = signingKey{"rsa-1", jose.RS256, gen()}
		ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			panic(err)
		}
		ecKey = signingKey{"ec-1", jose.ES256, ec}
		_, ed, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			panic(err)
		}
		edKey = signingKey{"ed-1", jose.EdDSA, ed}
	})
}

// mint signs claims (a jwt.Claims plus extra fields) with key.
func mint(t *testing.T, key signingKey, claims ...any) string {
	t.Helper()
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: key.alg, Key: jose.JSONWebKey{Key: key.priv, KeyID: key.kid}},
		(&jose.SignerOptions{}).WithType("at+jwt"))
	if err != nil {
		t.Fatalf("signer: %v", err)
	}
	b := jwt.Signed(signer)
	for _, c := range claims {
		b = b.Claims(c)
	}
	s, err := b.Serialize()
	if err != nil {
		t.Fatalf("serialize: %v", err)
	}
	return s
}

// mintHMAC signs claims with HS256 and secret, naming kid.
func mintHMAC(t *testing.T, secret []byte, kid string, claims ...any) string {
	t.Helper()
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: jose.JSONWebKey{Key: secret, KeyID: kid}}, nil)
	if err != nil {
		t.Fatalf("hmac signer: %v", err)
	}
	b := jwt.Signed(signer)
	for _, c := range claims {
		b = b.Claims(c)
	}
	s, err := b.Serialize()
	if err != nil {
		t.Fatalf("serialize: %v", err)
	}
	return s
}

// authServer is a local authorization server: it publishes RFC 8414
// metadata for its issuer (which may have a path) and a JWKS whose keys a
// test can rotate, and counts JWKS fetches.
type authServer struct {
	srv       *httptest.Server
	issuer    string
	mu        sync.Mutex
	keys      []jose.JSONWebKey
	fetches   atomic.Int32
	metaIss   string // when set, the metadata names this issuer instead
	jwksExtra func(w http.ResponseWriter) bool
}

func newAuthServer(t *testing.T, issuerPath string, keys ...signingKey) *authServer {
	t.Helper()
	as := &authServer{}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/oauth-authorization-server"+issuerPath, func(w http.ResponseWriter, r *http.Request) {
		iss := as.issuer
		if as.metaIss != "" {
			iss = as.metaIss
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"issuer": iss, "jwks_uri": as.srv.URL + "/jwks",
			"authorization_endpoint": as.srv.URL + "/authorize", "token_endpoint": as.srv.URL + "/token",
			"code_challenge_methods_supported": []string{"S256"},
		})
	})
	mux.HandleFunc("/jwks", func(w http.ResponseWriter, r *http.Request) {
		as.fetches.Add(1)
		if as.jwksExtra != nil && as.jwksExtra(w) {
			return
		}
		as.mu.Lock()
		set := jose.JSONWebKeySet{Keys: as.keys}
		as.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(set)
	})
	as.srv = httptest.NewServer(mux)
	t.Cleanup(as.srv.Close)
	as.issuer = as.srv.URL + issuerPath
	as.publish(keys...)
	return as
}

// publish replaces the JWKS with the public halves of keys.
func (as *authServer) publish(keys ...signingKey) {
	as.mu.Lock()
	defer as.mu.Unlock()
	as.keys = nil
	for _, k := range keys {
		as.keys = append(as.keys, k.public())
	}
}

// clock is a settable time source.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// echoSubject is the protected handler: it answers 200 with the subject.
var echoSubject = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	sub, ok := Subject(r.Context())
	if !ok {
		http.Error(w, "no subject", http.StatusInternalServerError)
		return
	}
	_, _ = w.Write([]byte(sub))
})

// do sends a POST to path through h with the given Authorization header
// (none when empty).
func do(h http.Handler, path, authz string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, "http://localhost:3010"+path, strings.NewReader(`{}`))
	if authz != "" {
		req.Header.Set("Authorization", authz)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// errorBody decodes the refusal body and checks its shape.
func errorBody(t *testing.T, rec *httptest.ResponseRecorder) (code, desc string) {
	t.Helper()
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Fatalf("Content-Type = %q, want application/json", ct)
	}
	var body struct {
		Error            string `json:"error"`
		ErrorDescription string `json:"error_description"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatalf("body %q: %v", rec.Body.String(), err)
	}
	if body.ErrorDescription == "" {
		t.Fatalf("body %q has no error_description", rec.Body.String())
	}
	return body.Error, body.ErrorDescription
}
