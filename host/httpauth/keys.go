package httpauth

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
)

const (
	// keysTTL is how long a fetched JWKS is used before it is fetched again.
	keysTTL = 10 * time.Minute
	// minRefetch bounds how often a token with an unknown kid can make us
	// fetch the JWKS again, so random kids cannot turn into a request flood
	// against the authorization server.
	minRefetch = 30 * time.Second
	// maxKeys bounds the keys considered from one JWKS.
	maxKeys = 64
	// failedRetry is how long a failed first fetch is reported to callers
	// before another is tried.
	failedRetry = 5 * time.Second
)

// errKeysUnavailable means no verification keys could be obtained; the
// request gets 503 rather than 401, since a new token would not help.
var errKeysUnavailable = errors.New("verification keys unavailable")

// remoteKeys is a cached JWKS, fetched from jwksURL or, when that is empty,
// from the jwks_uri in the issuer's RFC 8414 (or OpenID) metadata.
type remoteKeys struct {
	client *http.Client
	issuer string // for discovery; empty when jwksURL is configured
	now    func() time.Time

	fetchMu sync.Mutex // one fetch at a time; waiters reuse its result

	mu          sync.Mutex
	jwksURL     string
	set         []jose.JSONWebKey
	fetchedAt   time.Time
	lastAttempt time.Time
	lastErr     error
}

// candidates returns the public keys that may verify a token signed with
// alg and carrying kid, fetching or refreshing the JWKS as needed.
func (k *remoteKeys) candidates(ctx context.Context, kid string, alg jose.SignatureAlgorithm) ([]any, error) {
	k.mu.Lock()
	set, fetched := k.set, k.fetchedAt
	k.mu.Unlock()
	if set != nil && k.now().Sub(fetched) < keysTTL {
		if c := selectKeys(set, kid, alg); len(c) > 0 || kid == "" {
			return c, nil
		}
	}
	// Stale, missing, or a kid we have not seen (the server may have
	// rotated its keys): refresh, then look again.
	set, err := k.refresh(ctx, fetched)
	if set == nil {
		return nil, fmt.Errorf("%w: %v", errKeysUnavailable, err)
	}
	return selectKeys(set, kid, alg), nil
}

// refresh fetches the JWKS unless another caller already did after seen,
// or a fetch was attempted within minRefetch. On failure the previous set,
// if any, stays in use: its keys are still the server's keys.
func (k *remoteKeys) refresh(ctx context.Context, seen time.Time) ([]jose.JSONWebKey, error) {
	k.fetchMu.Lock()
	defer k.fetchMu.Unlock()
	k.mu.Lock()
	if k.fetchedAt.After(seen) || (k.set != nil && k.now().Sub(k.lastAttempt) < minRefetch) {
		set := k.set
		k.mu.Unlock()
		return set, nil
	}
	if k.set == nil && !k.lastAttempt.IsZero() && k.now().Sub(k.lastAttempt) < failedRetry {
		// The server was unreachable a moment ago: answer from that failure
		// instead of queueing every request behind another timeout.
		err := k.lastErr
		k.mu.Unlock()
		return nil, err
	}
	k.lastAttempt = k.now()
	jwksURL := k.jwksURL
	k.mu.Unlock()

	var err error
	if jwksURL == "" {
		jwksURL, err = discoverJWKS(ctx, k.client, k.issuer)
		if err != nil {
			return k.failed(err)
		}
	}
	var doc jose.JSONWebKeySet
	if err := fetchJSON(ctx, k.client, jwksURL, &doc); err != nil {
		return k.failed(fmt.Errorf("fetch JWKS %s: %w", jwksURL, err))
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.lastErr = nil
	k.jwksURL = jwksURL
	k.set = doc.Keys
	if k.set == nil {
		k.set = []jose.JSONWebKey{}
	}
	k.fetchedAt = k.now()
	return k.set, nil
}

// failed records err and returns the previous set, if any, with it.
func (k *remoteKeys) failed(err error) ([]jose.JSONWebKey, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.lastErr = err
	return k.set, err
}

// selectKeys keeps the signing keys whose kid, alg and type fit the token.
// Symmetric keys are never taken from a JWKS: a published HMAC key would
// let anyone mint tokens.
func selectKeys(set []jose.JSONWebKey, kid string, alg jose.SignatureAlgorithm) []any {
	var out []any
	for i, key := range set {
		if i >= maxKeys {
			break
		}
		if kid != "" && key.KeyID != kid {
			continue
		}
		if key.Use != "" && key.Use != "sig" {
			continue
		}
		if key.Algorithm != "" && key.Algorithm != string(alg) {
			continue
		}
		if !key.IsPublic() || !keyFitsAlg(key.Key, alg) {
			continue
		}
		out = append(out, key.Key)
	}
	return out
}

// keyFitsAlg refuses key confusion: each algorithm verifies only with its
// own key type (RFC 8725 §3.1).
func keyFitsAlg(key any, alg jose.SignatureAlgorithm) bool {
	if checkPublicKey(key) != nil {
		return false
	}
	switch key.(type) {
	case *rsa.PublicKey:
		return alg == jose.RS256
	case *ecdsa.PublicKey:
		return alg == jose.ES256
	case ed25519.PublicKey:
		return alg == jose.EdDSA
	}
	return false
}

// discoverJWKS reads the issuer's authorization server metadata, trying
// the RFC 8414 and OpenID Connect locations in the order the MCP
// authorization specification gives, and returns its jwks_uri.
func discoverJWKS(ctx context.Context, client *http.Client, issuer string) (string, error) {
	u, err := url.Parse(issuer)
	if err != nil {
		return "", fmt.Errorf("parse issuer %q: %w", issuer, err)
	}
	origin := u.Scheme + "://" + u.Host
	path := strings.TrimSuffix(u.Path, "/")
	var tries []string
	if path == "" {
		tries = []string{origin + "/.well-known/oauth-authorization-server", origin + "/.well-known/openid-configuration"}
	} else {
		tries = []string{
			origin + "/.well-known/oauth-authorization-server" + path,
			origin + "/.well-known/openid-configuration" + path,
			origin + path + "/.well-known/openid-configuration",
		}
	}
	var errs []error
	for _, t := range tries {
		var meta struct {
			Issuer  string `json:"issuer"`
			JWKSURI string `json:"jwks_uri"`
		}
		if err := fetchJSON(ctx, client, t, &meta); err != nil {
			errs = append(errs, err)
			continue
		}
		// RFC 8414 §3.3: the metadata must name the issuer it was fetched
		// for, or it describes some other server.
		if meta.Issuer != issuer {
			errs = append(errs, fmt.Errorf("%s names issuer %q, not %q", t, meta.Issuer, issuer))
			continue
		}
		if meta.JWKSURI == "" {
			return "", fmt.Errorf("authorization server metadata at %s has no jwks_uri", t)
		}
		if _, err := secureURL("jwks_uri", meta.JWKSURI); err != nil {
			return "", fmt.Errorf("authorization server metadata at %s: %w", t, err)
		}
		return meta.JWKSURI, nil
	}
	return "", fmt.Errorf("discover authorization server metadata for %s: %w", issuer, errors.Join(errs...))
}

// fetchJSON GETs rawURL and decodes a bounded JSON body.
func fetchJSON(ctx context.Context, client *http.Client, rawURL string, dst any) error {
	ctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return fmt.Errorf("build request for %s: %w", rawURL, err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("get %s: %w", rawURL, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("get %s: status %s", rawURL, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxDocumentBytes+1))
	if err != nil {
		return fmt.Errorf("read %s: %w", rawURL, err)
	}
	if len(body) > maxDocumentBytes {
		return fmt.Errorf("get %s: body exceeds %d bytes", rawURL, maxDocumentBytes)
	}
	if err := json.Unmarshal(body, dst); err != nil {
		return fmt.Errorf("decode %s: %w", rawURL, err)
	}
	return nil
}

// fetchClient returns the client used for metadata and JWKS requests: the
// given one (or a default) with a timeout and a redirect policy that never
// leaves https, except between loopback http URLs in development.
func fetchClient(base *http.Client) *http.Client {
	c := &http.Client{}
	if base != nil {
		*c = *base
	}
	if c.Timeout == 0 {
		c.Timeout = fetchTimeout
	}
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= 3 {
			return errors.New("stopped after 3 redirects")
		}
		if req.URL.Scheme == "https" {
			return nil
		}
		if req.URL.Scheme == "http" && isLoopbackHost(req.URL.Hostname()) && via[0].URL.Scheme == "http" {
			return nil
		}
		return fmt.Errorf("refused redirect to %s: only https is followed", req.URL.Redacted())
	}
	return c
}
