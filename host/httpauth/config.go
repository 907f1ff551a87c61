package httpauth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

// Mode selects how the HTTP transport authenticates requests.
type Mode string

// The authentication modes MCP_AUTH_MODE accepts.
const (
	// ModeNone accepts every request; the transport refuses to bind a
	// non-loopback address in this mode.
	ModeNone Mode = "none"
	// ModeJWT verifies bearer tokens against a shared secret (HS256), a
	// public key file, or a JWKS URL, with a configured issuer and audience.
	ModeJWT Mode = "jwt"
	// ModeOAuth makes fluxgit an OAuth 2.1 resource server per the MCP
	// authorization specification: protected resource metadata (RFC 9728),
	// tokens verified against the authorization server's published keys and
	// bound to this server's canonical resource URI (RFC 8707).
	ModeOAuth Mode = "oauth"
)

// Environment variables read by ConfigFromEnv. They are documented in
// docs/http.md ("Authentication").
const (
	EnvAuthMode         = "MCP_AUTH_MODE"
	EnvJWTSecret        = "MCP_JWT_SECRET"
	EnvJWTPublicKey     = "MCP_JWT_PUBLIC_KEY"
	EnvJWTJWKSURL       = "MCP_JWT_JWKS_URL"
	EnvJWTIssuer        = "MCP_JWT_ISSUER"
	EnvJWTAudience      = "MCP_JWT_AUDIENCE"
	EnvOAuthResource    = "MCP_OAUTH_RESOURCE"
	EnvOAuthAuthServers = "MCP_OAUTH_AUTHORIZATION_SERVERS"
	EnvOAuthJWKSURL     = "MCP_OAUTH_JWKS_URL"
	EnvRequiredScopes   = "MCP_AUTH_REQUIRED_SCOPES"
)

// Limits that bound what a client or an authorization server can make
// this package do.
const (
	// MaxLeeway is the largest clock skew tolerated for exp, nbf and iat.
	MaxLeeway = 60 * time.Second
	// MaxTokenBytes bounds the bearer token parsed; larger ones are refused
	// before any decoding.
	MaxTokenBytes = 16 << 10
	// MinSecretBytes is the shortest HS256 secret accepted (RFC 7518 §3.2
	// asks for a key at least as long as the hash output).
	MinSecretBytes = 32
	// maxDocumentBytes bounds a JWKS or authorization server metadata
	// response.
	maxDocumentBytes = 1 << 20
	// fetchTimeout bounds one metadata or JWKS request.
	fetchTimeout = 10 * time.Second
	// maxSubjectBytes bounds the subject that becomes an agent id.
	maxSubjectBytes = 256
)

// Config holds the authentication settings. The zero value is ModeNone.
type Config struct {
	// Mode is none (default when empty), jwt or oauth.
	Mode Mode

	// JWTSecret is the HS256 shared secret (jwt mode; at least
	// MinSecretBytes bytes).
	JWTSecret string
	// JWTPublicKey is a PEM file path (or the PEM text itself) holding an
	// RSA (≥2048 bits), P-256 ECDSA or Ed25519 public key or certificate
	// (jwt mode).
	JWTPublicKey string
	// JWTJWKSURL is a JWKS document URL whose keys verify tokens (jwt mode).
	JWTJWKSURL string
	// Issuer is the required iss claim (jwt mode).
	Issuer string
	// Audience is the value the aud claim must contain (jwt mode).
	Audience string

	// Resource is this server's canonical resource URI, the MCP endpoint
	// URL clients use, e.g. https://mcp.example.com/mcp (oauth mode). Tokens
	// must name it in aud; the protected resource metadata names it.
	Resource string
	// AuthorizationServers are the issuer URLs of the authorization servers
	// whose tokens are accepted (oauth mode, at least one).
	AuthorizationServers []string
	// OAuthJWKSURL overrides JWKS discovery from the authorization server's
	// RFC 8414 metadata (oauth mode, only with one authorization server).
	OAuthJWKSURL string

	// RequiredScopes must all be granted by the token's scope (or scp)
	// claim; a token lacking one gets 403 insufficient_scope.
	RequiredScopes []string
	// Leeway is the clock skew tolerated for exp, nbf and iat; zero means
	// MaxLeeway, larger values are refused.
	Leeway time.Duration

	// HTTPClient fetches metadata and JWKS documents; nil means a client
	// with the package's timeout and redirect policy. Tests inject one that
	// trusts their TLS server.
	HTTPClient *http.Client
	// Now is the clock (nil: time.Now).
	Now func() time.Time
	// Logger receives one line per refused request (never the token); nil
	// discards them.
	Logger *slog.Logger
}

// ConfigFromEnv reads the MCP_* variables through getenv (os.Getenv in
// production, a map in tests). It only collects values: New validates them,
// so flags can override fields in between.
func ConfigFromEnv(getenv func(string) string) Config {
	get := func(k string) string { return strings.TrimSpace(getenv(k)) }
	return Config{
		Mode: Mode(strings.ToLower(get(EnvAuthMode))),
		// The secret is used verbatim: trimming would silently change it.
		JWTSecret:            getenv(EnvJWTSecret),
		JWTPublicKey:         get(EnvJWTPublicKey),
		JWTJWKSURL:           get(EnvJWTJWKSURL),
		Issuer:               get(EnvJWTIssuer),
		Audience:             get(EnvJWTAudience),
		Resource:             get(EnvOAuthResource),
		AuthorizationServers: splitList(get(EnvOAuthAuthServers)),
		OAuthJWKSURL:         get(EnvOAuthJWKSURL),
		RequiredScopes:       splitList(get(EnvRequiredScopes)),
	}
}

// splitList splits on commas and white space, dropping empty items; nil
// when there are none.
func splitList(s string) []string {
	out := strings.FieldsFunc(s, func(r rune) bool {
		return r == ',' || r == ' ' || r == '\t' || r == '\n'
	})
	if len(out) == 0 {
		return nil
	}
	return out
}

// validate checks the settings for the selected mode and fails closed:
// anything missing, unreadable, weak or ambiguous is an error naming the
// setting and how to fix it.
func (c *Config) validate() error {
	if c.Mode == "" {
		c.Mode = ModeNone
	}
	if c.Leeway < 0 || c.Leeway > MaxLeeway {
		return fmt.Errorf("httpauth: leeway %s is outside 0..%s", c.Leeway, MaxLeeway)
	}
	if c.Leeway == 0 {
		c.Leeway = MaxLeeway
	}
	for _, s := range c.RequiredScopes {
		if !validScopeToken(s) {
			return fmt.Errorf("httpauth: %s: scope %q has a character RFC 6749 §3.3 does not allow", EnvRequiredScopes, s)
		}
	}
	switch c.Mode {
	case ModeNone:
		return nil
	case ModeJWT:
		return c.validateJWT()
	case ModeOAuth:
		return c.validateOAuth()
	default:
		return fmt.Errorf("httpauth: %s=%q is not a mode; use none, jwt or oauth", EnvAuthMode, c.Mode)
	}
}

func (c *Config) validateJWT() error {
	n := 0
	for _, v := range []string{c.JWTSecret, c.JWTPublicKey, c.JWTJWKSURL} {
		if v != "" {
			n++
		}
	}
	if n != 1 {
		return fmt.Errorf("httpauth: jwt mode needs exactly one of %s, %s or %s (%d set)", EnvJWTSecret, EnvJWTPublicKey, EnvJWTJWKSURL, n)
	}
	if c.JWTSecret != "" && len(c.JWTSecret) < MinSecretBytes {
		return fmt.Errorf("httpauth: %s is %d bytes; HS256 needs at least %d random bytes (e.g. openssl rand -base64 48)", EnvJWTSecret, len(c.JWTSecret), MinSecretBytes)
	}
	if c.JWTJWKSURL != "" {
		if _, err := secureURL(EnvJWTJWKSURL, c.JWTJWKSURL); err != nil {
			return err
		}
	}
	if c.Issuer == "" {
		return fmt.Errorf("httpauth: jwt mode needs %s, the iss value tokens must carry", EnvJWTIssuer)
	}
	if c.Audience == "" {
		return fmt.Errorf("httpauth: jwt mode needs %s, a value the aud claim must contain", EnvJWTAudience)
	}
	if c.Resource != "" || len(c.AuthorizationServers) > 0 || c.OAuthJWKSURL != "" {
		return fmt.Errorf("httpauth: %s, %s and %s belong to oauth mode; unset them or set %s=oauth", EnvOAuthResource, EnvOAuthAuthServers, EnvOAuthJWKSURL, EnvAuthMode)
	}
	return nil
}

func (c *Config) validateOAuth() error {
	if c.JWTSecret != "" || c.JWTPublicKey != "" || c.JWTJWKSURL != "" || c.Issuer != "" || c.Audience != "" {
		return fmt.Errorf("httpauth: MCP_JWT_* settings belong to jwt mode; in oauth mode the issuer is the authorization server and the audience is %s", EnvOAuthResource)
	}
	if c.Resource == "" {
		return fmt.Errorf("httpauth: oauth mode needs %s, the URL clients use for the MCP endpoint (e.g. https://mcp.example.com/mcp)", EnvOAuthResource)
	}
	res, err := canonicalResource(c.Resource)
	if err != nil {
		return err
	}
	c.Resource = res
	if len(c.AuthorizationServers) == 0 {
		return fmt.Errorf("httpauth: oauth mode needs %s, the issuer URL(s) of the authorization server(s)", EnvOAuthAuthServers)
	}
	for _, as := range c.AuthorizationServers {
		u, err := secureURL(EnvOAuthAuthServers, as)
		if err != nil {
			return err
		}
		if u.RawQuery != "" || u.Fragment != "" {
			return fmt.Errorf("httpauth: %s: issuer %q must not have a query or fragment (RFC 8414 §2)", EnvOAuthAuthServers, as)
		}
	}
	if c.OAuthJWKSURL != "" {
		if len(c.AuthorizationServers) != 1 {
			return fmt.Errorf("httpauth: %s applies to one authorization server; with several, unset it so each server's keys are discovered", EnvOAuthJWKSURL)
		}
		if _, err := secureURL(EnvOAuthJWKSURL, c.OAuthJWKSURL); err != nil {
			return err
		}
	}
	return nil
}

// canonicalResource returns the canonical form of the resource URI (RFC
// 8707 §2: absolute, no fragment; scheme and host lower case) and requires
// https unless the host is loopback.
func canonicalResource(raw string) (string, error) {
	u, err := secureURL(EnvOAuthResource, raw)
	if err != nil {
		return "", err
	}
	if u.Fragment != "" || strings.Contains(raw, "#") {
		return "", fmt.Errorf("httpauth: %s %q must not have a fragment (RFC 8707 §2)", EnvOAuthResource, raw)
	}
	if u.RawQuery != "" {
		return "", fmt.Errorf("httpauth: %s %q must not have a query; give the MCP endpoint URL", EnvOAuthResource, raw)
	}
	return canonicalURL(u), nil
}

// canonicalURL lower-cases scheme and host, drops a default port and a
// trailing slash after a non-root path, so equivalent spellings compare
// equal.
func canonicalURL(u *url.URL) string {
	v := *u
	v.Scheme = strings.ToLower(v.Scheme)
	host := strings.ToLower(v.Hostname())
	port := v.Port()
	if (v.Scheme == "https" && port == "443") || (v.Scheme == "http" && port == "80") {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	v.Host = host
	v.Fragment, v.RawFragment = "", ""
	if len(v.Path) > 1 {
		v.Path = strings.TrimSuffix(v.Path, "/")
		v.RawPath = ""
	}
	if v.Path == "/" {
		v.Path = ""
	}
	return v.String()
}

// secureURL parses an absolute URL and requires https, allowing http only
// for a loopback host (a local authorization server in development).
func secureURL(setting, raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("httpauth: %s %q is not a URL: %w", setting, raw, err)
	}
	if !u.IsAbs() || u.Host == "" {
		return nil, fmt.Errorf("httpauth: %s %q must be an absolute URL such as https://auth.example.com", setting, raw)
	}
	if u.User != nil {
		return nil, fmt.Errorf("httpauth: %s %q must not carry user info", setting, raw)
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
	case "http":
		if !isLoopbackHost(u.Hostname()) {
			return nil, fmt.Errorf("httpauth: %s %q uses http on a non-loopback host; use https", setting, raw)
		}
	default:
		return nil, fmt.Errorf("httpauth: %s %q must use https", setting, raw)
	}
	return u, nil
}

// isLoopbackHost reports whether host names this machine only.
func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// validScopeToken follows RFC 6749 §3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E ).
func validScopeToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		b := s[i]
		if b < 0x21 || b > 0x7e || b == '"' || b == '\\' {
			return false
		}
	}
	return true
}

// loadPublicKey reads a PEM public key or certificate from a file path or
// from the PEM text itself, and accepts only key types and sizes fit for
// RS256, ES256 or EdDSA.
func loadPublicKey(v string) (crypto.PublicKey, error) {
	data := []byte(v)
	if !strings.HasPrefix(strings.TrimSpace(v), "-----BEGIN") {
		b, err := os.ReadFile(v)
		if err != nil {
			return nil, fmt.Errorf("httpauth: %s: read the public key file: %w", EnvJWTPublicKey, err)
		}
		data = b
	}
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, fmt.Errorf("httpauth: %s: no PEM block found; give a PEM \"PUBLIC KEY\" or \"CERTIFICATE\"", EnvJWTPublicKey)
	}
	var key any
	var err error
	switch block.Type {
	case "PUBLIC KEY":
		key, err = x509.ParsePKIXPublicKey(block.Bytes)
	case "RSA PUBLIC KEY":
		key, err = x509.ParsePKCS1PublicKey(block.Bytes)
	case "CERTIFICATE":
		var cert *x509.Certificate
		cert, err = x509.ParseCertificate(block.Bytes)
		if err == nil {
			key = cert.PublicKey
		}
	default:
		if strings.Contains(block.Type, "PRIVATE") {
			return nil, fmt.Errorf("httpauth: %s holds a private key; give only the public key (openssl pkey -pubout)", EnvJWTPublicKey)
		}
		return nil, fmt.Errorf("httpauth: %s: PEM type %q is not a public key or certificate", EnvJWTPublicKey, block.Type)
	}
	if err != nil {
		return nil, fmt.Errorf("httpauth: %s: parse the public key: %w", EnvJWTPublicKey, err)
	}
	if err := checkPublicKey(key); err != nil {
		return nil, fmt.Errorf("httpauth: %s: %w", EnvJWTPublicKey, err)
	}
	return key, nil
}

// checkPublicKey refuses key types and sizes outside RS256/ES256/EdDSA.
func checkPublicKey(key any) error {
	switch k := key.(type) {
	case *rsa.PublicKey:
		if k.N.BitLen() < 2048 {
			return fmt.Errorf("RSA key has %d bits; at least 2048 are required", k.N.BitLen())
		}
	case *ecdsa.PublicKey:
		if k.Curve != elliptic.P256() {
			return errors.New("ECDSA key is not on P-256; ES256 needs P-256")
		}
	case ed25519.PublicKey:
	default:
		return fmt.Errorf("key type %T is not supported; use RSA, P-256 ECDSA or Ed25519", key)
	}
	return nil
}
