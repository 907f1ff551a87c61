// Package httpauth authenticates requests to fluxgit's Streamable HTTP
// endpoint with bearer tokens. In jwt mode tokens are verified against a
// configured secret, public key or JWKS with a fixed issuer and audience;
// in oauth mode fluxgit is an OAuth 2.1 resource server as the MCP
// authorization specification describes: it publishes protected resource
// metadata (RFC 9728), answers 401 with a WWW-Authenticate challenge naming
// that metadata, and accepts only access tokens signed with a listed
// authorization server's published keys and issued for this server's
// canonical resource URI (RFC 8707).
//
// The verified subject reaches the wrapped handler through the request
// context (Subject); the transport uses it as the session's agent id.
// Tokens are never logged or echoed.
package httpauth

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// Authenticator verifies bearer tokens for one configuration.
type Authenticator struct {
	cfg  Config
	algs []jose.SignatureAlgorithm
	now  func() time.Time
	log  *slog.Logger

	staticKeys []any                  // jwt mode with a secret or public key
	remote     map[string]*remoteKeys // by issuer (oauth) or "" (jwt JWKS)

	metadataURL   string // oauth: where the protected resource metadata lives
	metadataPaths []string
	metadataJSON  []byte
}

// New validates cfg and returns an Authenticator. Any missing, unreadable,
// weak or contradictory setting is an error: the server must not start
// with authentication it cannot enforce.
func New(cfg Config) (*Authenticator, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	a := &Authenticator{cfg: cfg, now: cfg.Now, log: cfg.Logger}
	if a.now == nil {
		a.now = time.Now
	}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	client := fetchClient(cfg.HTTPClient)
	asymmetric := []jose.SignatureAlgorithm{jose.RS256, jose.ES256, jose.EdDSA}
	switch cfg.Mode {
	case ModeNone:
		return a, nil
	case ModeJWT:
		switch {
		case cfg.JWTSecret != "":
			// HS256 only here: a secret never verifies an asymmetric alg and
			// no public key ever verifies HS256.
			a.algs = []jose.SignatureAlgorithm{jose.HS256}
			a.staticKeys = []any{[]byte(cfg.JWTSecret)}
		case cfg.JWTPublicKey != "":
			key, err := loadPublicKey(cfg.JWTPublicKey)
			if err != nil {
				return nil, err
			}
			a.algs = asymmetric
			a.staticKeys = []any{key}
		default:
			a.algs = asymmetric
			a.remote = map[string]*remoteKeys{"": {client: client, jwksURL: cfg.JWTJWKSURL, now: a.now}}
		}
	case ModeOAuth:
		a.algs = asymmetric
		a.remote = make(map[string]*remoteKeys, len(cfg.AuthorizationServers))
		for _, as := range cfg.AuthorizationServers {
			a.remote[as] = &remoteKeys{client: client, issuer: as, jwksURL: cfg.OAuthJWKSURL, now: a.now}
		}
		if err := a.buildMetadata(); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// Mode reports the configured mode (none when authentication is off).
func (a *Authenticator) Mode() Mode { return a.cfg.Mode }

// Resource returns the canonical resource URI in oauth mode, else "".
func (a *Authenticator) Resource() string { return a.cfg.Resource }

type subjectKey struct{}

// Subject returns the verified subject of the request whose context this
// is: the token's sub, or client_id, or azp when sub is absent (a
// client-credentials token names only the client).
func Subject(ctx context.Context) (string, bool) {
	s, ok := ctx.Value(subjectKey{}).(string)
	return s, ok && s != ""
}

// ContextWithSubject returns ctx carrying subject as Subject reports it.
// Transports and tests use it to run a handler as an already-verified
// identity.
func ContextWithSubject(ctx context.Context, subject string) context.Context {
	return context.WithValue(ctx, subjectKey{}, subject)
}

// Wrap returns a handler that serves the protected resource metadata paths
// (oauth mode) and lets through to next only requests carrying a valid
// token, with the subject in their context. In none mode it returns next.
// CORS preflights (OPTIONS with Access-Control-Request-Method) pass
// without a token, since browsers never attach one to them; next sees no
// subject there.
func (a *Authenticator) Wrap(next http.Handler) http.Handler {
	if a.cfg.Mode == ModeNone {
		return next
	}
	meta := a.MetadataHandler()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if meta != nil && slices.Contains(a.metadataPaths, r.URL.Path) {
			meta.ServeHTTP(w, r)
			return
		}
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			next.ServeHTTP(w, r)
			return
		}
		sub, err := a.authenticate(r)
		if err != nil {
			a.refuse(w, r, err)
			return
		}
		next.ServeHTTP(w, r.WithContext(ContextWithSubject(r.Context(), sub)))
	})
}

// authError is a refusal: its status, the OAuth error code (empty when no
// token was presented, per RFC 6750 §3.1) and a description that tells the
// client what to do.
type authError struct {
	status int
	code   string
	desc   string
	reason string // for the log; never holds the token
}

func (e *authError) Error() string { return e.code + ": " + e.desc }

func (a *Authenticator) invalidToken(desc string, reason string) *authError {
	return &authError{status: http.StatusUnauthorized, code: "invalid_token", desc: desc, reason: reason}
}

// authenticate extracts and verifies the bearer token of r.
func (a *Authenticator) authenticate(r *http.Request) (string, *authError) {
	values := r.Header.Values("Authorization")
	if r.URL.Query().Has("access_token") {
		return "", &authError{status: http.StatusBadRequest, code: "invalid_request",
			desc:   "Access tokens in the URL query are refused (MCP authorization specification); remove access_token from the URL and send the token as 'Authorization: Bearer <token>'.",
			reason: "token in query string"}
	}
	if len(values) == 0 {
		return "", &authError{status: http.StatusUnauthorized,
			desc:   "This MCP endpoint requires a bearer token. Send 'Authorization: Bearer <access token>'" + a.whereToGetToken() + ".",
			reason: "no Authorization header"}
	}
	if len(values) > 1 {
		return "", &authError{status: http.StatusBadRequest, code: "invalid_request",
			desc: "Send exactly one Authorization header.", reason: "several Authorization headers"}
	}
	scheme, token, _ := strings.Cut(strings.TrimSpace(values[0]), " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return "", &authError{status: http.StatusUnauthorized,
			desc:   "Only the Bearer scheme is accepted. Send 'Authorization: Bearer <access token>'" + a.whereToGetToken() + ".",
			reason: "non-Bearer scheme"}
	}
	token = strings.TrimSpace(token)
	if token == "" {
		return "", a.invalidToken("The Authorization header has no token after 'Bearer '. Send 'Authorization: Bearer <access token>'.", "empty token")
	}
	if len(token) > MaxTokenBytes {
		return "", a.invalidToken(fmt.Sprintf("The bearer token is %d bytes; this server accepts at most %d. Send a compact JWS access token.", len(token), MaxTokenBytes), "oversized token")
	}
	return a.verify(r.Context(), token)
}

// whereToGetToken completes a sentence with where a token comes from.
func (a *Authenticator) whereToGetToken() string {
	if a.cfg.Mode == ModeOAuth {
		return "; obtain one from an authorization server listed in the protected resource metadata at " + a.metadataURL + ", requesting resource=" + a.cfg.Resource
	}
	return " with a JWT issued by " + a.cfg.Issuer + " for audience " + a.cfg.Audience
}

// extraClaims are the non-registered claims read after verification.
type extraClaims struct {
	Scope    json.RawMessage `json:"scope"`
	Scp      json.RawMessage `json:"scp"`
	ClientID string          `json:"client_id"`
	Azp      string          `json:"azp"`
}

// verify checks the token's algorithm, signature, issuer, audience, time
// claims, subject and scopes, in that order, and returns the subject.
func (a *Authenticator) verify(ctx context.Context, raw string) (string, *authError) {
	tok, err := jwt.ParseSigned(raw, a.algs)
	if err != nil {
		return "", a.invalidToken(fmt.Sprintf("The bearer token is not a compact JWS signed with an accepted algorithm (%s). Obtain a new access token.", algNames(a.algs)), "parse: "+err.Error())
	}
	if len(tok.Headers) != 1 {
		return "", a.invalidToken("The bearer token must carry exactly one signature. Obtain a new access token.", "multiple signatures")
	}
	hdr := tok.Headers[0]
	alg := jose.SignatureAlgorithm(hdr.Algorithm)

	// The issuer picks the keys (oauth mode lists several servers); it is
	// compared again below, once the signature has vouched for it.
	var unverified jwt.Claims
	if err := tok.UnsafeClaimsWithoutVerification(&unverified); err != nil {
		return "", a.invalidToken("The bearer token's claims are not valid JWT claims. Obtain a new access token.", "claims: "+err.Error())
	}
	expectedIss := a.cfg.Issuer
	var keys []any
	switch {
	case a.staticKeys != nil:
		keys = a.staticKeys
	case a.cfg.Mode == ModeJWT:
		keys, err = a.remote[""].candidates(ctx, hdr.KeyID, alg)
	default:
		src, ok := a.remote[unverified.Issuer]
		if !ok {
			return "", a.invalidToken(fmt.Sprintf("The access token was issued by %q, which is not an authorization server of this resource. Obtain a token from one listed at %s.", clip(unverified.Issuer), a.metadataURL), "unknown issuer")
		}
		expectedIss = unverified.Issuer
		keys, err = src.candidates(ctx, hdr.KeyID, alg)
	}
	if err != nil {
		return "", &authError{status: http.StatusServiceUnavailable, code: "temporarily_unavailable",
			desc:   "The server cannot fetch the authorization server's signing keys right now; retry in a little while.",
			reason: err.Error()}
	}
	if len(keys) == 0 {
		return "", a.invalidToken("No signing key of the issuer matches the token's kid and alg. Obtain a new access token.", fmt.Sprintf("no key for kid %q alg %s", hdr.KeyID, alg))
	}
	verified := false
	for _, k := range keys {
		if tok.Claims(k) == nil {
			verified = true
			break
		}
	}
	if !verified {
		return "", a.invalidToken("The bearer token's signature does not verify. Obtain a new access token from the issuer.", "bad signature")
	}
	var claims jwt.Claims
	var extra extraClaims
	if err := tok.UnsafeClaimsWithoutVerification(&claims, &extra); err != nil {
		return "", a.invalidToken("The bearer token's claims are malformed. Obtain a new access token.", "claims: "+err.Error())
	}
	if claims.Issuer != expectedIss {
		return "", a.invalidToken(fmt.Sprintf("The token's issuer %q is not the accepted issuer %q. Obtain a token from that issuer.", clip(claims.Issuer), expectedIss), "wrong issuer")
	}
	if e := a.checkAudience(claims.Audience); e != nil {
		return "", e
	}
	if e := a.checkTimes(claims); e != nil {
		return "", e
	}
	sub := claims.Subject
	if sub == "" {
		sub = extra.ClientID
	}
	if sub == "" {
		sub = extra.Azp
	}
	if sub == "" {
		return "", a.invalidToken("The token names no subject (sub, client_id or azp). Obtain a token that identifies the user or client.", "no subject")
	}
	if len(sub) > maxSubjectBytes || strings.IndexFunc(sub, unicode.IsControl) >= 0 {
		return "", a.invalidToken(fmt.Sprintf("The token's subject is longer than %d bytes or has control characters.", maxSubjectBytes), "unusable subject")
	}
	if missing := missingScopes(a.cfg.RequiredScopes, extra); len(missing) > 0 {
		return "", &authError{status: http.StatusForbidden, code: "insufficient_scope",
			desc:   fmt.Sprintf("The access token lacks the scope(s) %s. Request a token with scope=%q and retry.", strings.Join(missing, " "), strings.Join(a.cfg.RequiredScopes, " ")),
			reason: "missing scopes " + strings.Join(missing, " ")}
	}
	return sub, nil
}

// checkAudience requires aud to name this server: the canonical resource
// URI in oauth mode (RFC 8707; equivalent spellings of the URL match), the
// configured audience in jwt mode.
func (a *Authenticator) checkAudience(aud jwt.Audience) *authError {
	want := a.cfg.Audience
	if a.cfg.Mode == ModeOAuth {
		want = a.cfg.Resource
	}
	for _, v := range aud {
		if v == want {
			return nil
		}
		if a.cfg.Mode == ModeOAuth {
			if u, err := url.Parse(v); err == nil && u.IsAbs() && canonicalURL(u) == want {
				return nil
			}
		}
	}
	if a.cfg.Mode == ModeOAuth {
		return a.invalidToken(fmt.Sprintf("The access token was issued for %s, not for this server. Request a token with resource=%s (RFC 8707) and retry.", audString(aud), want), "wrong audience")
	}
	return a.invalidToken(fmt.Sprintf("The token's audience %s does not include %q. Obtain a token issued for that audience.", audString(aud), want), "wrong audience")
}

func audString(aud jwt.Audience) string {
	if len(aud) == 0 {
		return "no audience"
	}
	b, _ := json.Marshal([]string(aud))
	return clip(string(b))
}

// clip bounds a claim value echoed in a refusal: it comes from an
// unverified or foreign token and must not blow up the header.
func clip(s string) string {
	const limit = 200
	if len(s) <= limit {
		return s
	}
	return s[:limit] + "…"
}

// checkTimes requires exp and applies the leeway to exp, nbf and iat.
func (a *Authenticator) checkTimes(c jwt.Claims) *authError {
	now := a.now()
	lw := a.cfg.Leeway
	if c.Expiry == nil {
		return a.invalidToken("The token has no exp claim; this server accepts only expiring tokens. Obtain a new access token.", "no exp")
	}
	if exp := c.Expiry.Time(); now.After(exp.Add(lw)) {
		return a.invalidToken(fmt.Sprintf("The access token expired at %s. Obtain a new access token (refresh it or authorize again) and retry.", exp.UTC().Format(time.RFC3339)), "expired")
	}
	if c.NotBefore != nil {
		if nbf := c.NotBefore.Time(); now.Add(lw).Before(nbf) {
			return a.invalidToken(fmt.Sprintf("The access token is not valid before %s. Check the clocks or wait, then retry.", nbf.UTC().Format(time.RFC3339)), "not yet valid")
		}
	}
	if c.IssuedAt != nil {
		if iat := c.IssuedAt.Time(); now.Add(lw).Before(iat) {
			return a.invalidToken(fmt.Sprintf("The access token claims to be issued at %s, in the future. Check the issuer's clock and obtain a new token.", iat.UTC().Format(time.RFC3339)), "issued in the future")
		}
	}
	return nil
}

// missingScopes returns the required scopes the token does not grant. The
// grant is the space-separated scope claim (RFC 9068 §2.2.3) or, as some
// servers issue it, scp as a string or an array.
func missingScopes(required []string, extra extraClaims) []string {
	if len(required) == 0 {
		return nil
	}
	granted := map[string]bool{}
	for _, raw := range []json.RawMessage{extra.Scope, extra.Scp} {
		var s string
		var list []string
		if json.Unmarshal(raw, &s) == nil {
			list = strings.Fields(s)
		} else {
			_ = json.Unmarshal(raw, &list)
		}
		for _, v := range list {
			granted[v] = true
		}
	}
	var missing []string
	for _, s := range required {
		if !granted[s] {
			missing = append(missing, s)
		}
	}
	return missing
}

func algNames(algs []jose.SignatureAlgorithm) string {
	names := make([]string, len(algs))
	for i, a := range algs {
		names[i] = string(a)
	}
	return strings.Join(names, ", ")
}

// refuse writes the challenge and a JSON body a model can act on.
func (a *Authenticator) refuse(w http.ResponseWriter, r *http.Request, e *authError) {
	a.log.Info("httpauth: request refused", "status", e.status, "error", e.code, "reason", e.reason, "remote", r.RemoteAddr, "path", r.URL.Path)
	h := w.Header()
	if e.status == http.StatusUnauthorized || e.status == http.StatusForbidden || e.status == http.StatusBadRequest {
		h.Set("WWW-Authenticate", a.challenge(e))
	}
	if e.status == http.StatusServiceUnavailable {
		h.Set("Retry-After", "30")
	}
	code := e.code
	if code == "" {
		code = "unauthorized"
	}
	body, _ := json.Marshal(map[string]string{"error": code, "error_description": e.desc})
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(e.status)
	_, _ = w.Write(append(body, '\n'))
}

// challenge builds the Bearer challenge of RFC 6750 §3 with the MCP
// authorization specification's resource_metadata parameter.
func (a *Authenticator) challenge(e *authError) string {
	var params []string
	if a.cfg.Mode == ModeOAuth {
		params = append(params, `resource_metadata="`+a.metadataURL+`"`)
	} else {
		params = append(params, `realm="fluxgit"`)
	}
	if e.code != "" {
		params = append(params, `error="`+e.code+`"`, `error_description="`+headerSafe(e.desc)+`"`)
	}
	if len(a.cfg.RequiredScopes) > 0 {
		params = append(params, `scope="`+strings.Join(a.cfg.RequiredScopes, " ")+`"`)
	}
	return "Bearer " + strings.Join(params, ", ")
}

// headerSafe keeps the characters RFC 6750 §3 allows in error_description
// (%x20-21 / %x23-5B / %x5D-7E).
func headerSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r > 0x7e || r == '"' || r == '\\' {
			return '\''
		}
		return r
	}, s)
}

// MetadataPaths returns the paths Wrap answers with the protected resource
// metadata (oauth mode; nil otherwise): the path-suffixed well-known URI for
// the MCP endpoint and the root one (RFC 9728 §3.1). The transport must
// route them to the wrapped handler.
func (a *Authenticator) MetadataPaths() []string { return slices.Clone(a.metadataPaths) }

// ResourceMetadataURL returns the URL named in resource_metadata challenges
// (oauth mode; "" otherwise).
func (a *Authenticator) ResourceMetadataURL() string { return a.metadataURL }

const wellKnownPRM = "/.well-known/oauth-protected-resource"

func (a *Authenticator) buildMetadata() error {
	u, err := url.Parse(a.cfg.Resource)
	if err != nil {
		return fmt.Errorf("httpauth: parse resource: %w", err)
	}
	path := strings.TrimSuffix(u.EscapedPath(), "/")
	a.metadataURL = u.Scheme + "://" + u.Host + wellKnownPRM + path
	a.metadataPaths = []string{wellKnownPRM}
	if path != "" {
		a.metadataPaths = []string{wellKnownPRM + u.Path, wellKnownPRM}
	}
	doc := struct {
		Resource               string   `json:"resource"`
		AuthorizationServers   []string `json:"authorization_servers"`
		BearerMethodsSupported []string `json:"bearer_methods_supported"`
		ScopesSupported        []string `json:"scopes_supported,omitempty"`
		ResourceName           string   `json:"resource_name"`
	}{a.cfg.Resource, a.cfg.AuthorizationServers, []string{"header"}, a.cfg.RequiredScopes, "fluxgit"}
	a.metadataJSON, err = json.Marshal(doc)
	if err != nil {
		return fmt.Errorf("httpauth: encode protected resource metadata: %w", err)
	}
	return nil
}

// MetadataHandler serves the protected resource metadata document (oauth
// mode; nil otherwise). It is public: clients read it before they hold a
// token, browsers included, hence the permissive CORS header.
func (a *Authenticator) MetadataHandler() http.Handler {
	if a.metadataJSON == nil {
		return nil
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", "*")
		switch r.Method {
		case http.MethodGet, http.MethodHead:
		case http.MethodOptions:
			h.Set("Access-Control-Allow-Methods", "GET, HEAD, OPTIONS")
			w.WriteHeader(http.StatusNoContent)
			return
		default:
			h.Set("Allow", "GET, HEAD, OPTIONS")
			http.Error(w, "use GET", http.StatusMethodNotAllowed)
			return
		}
		h.Set("Content-Type", "application/json")
		h.Set("Cache-Control", "public, max-age=300")
		w.WriteHeader(http.StatusOK)
		if r.Method == http.MethodGet {
			_, _ = w.Write(a.metadataJSON)
		}
	})
}
