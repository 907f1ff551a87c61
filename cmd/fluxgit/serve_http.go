package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/spf13/pflag"

	"github.com/fluxgit/fluxgit/host/httpauth"
	"github.com/fluxgit/fluxgit/host/httpserve"
	"github.com/fluxgit/fluxgit/host/mcp"
	"github.com/fluxgit/fluxgit/internal/envflag"
)

// httpOptions are serve's transport flags; each falls back to its
// environment variable (docs/http.md), and a flag given wins.
type httpOptions struct {
	transport      string
	host           string
	port           int
	path           string
	sessionMode    string
	allowedHosts   []string
	allowedOrigins []string
	authMode       string
	maxConns       int
	// testTimeouts is the hidden --http-test-timeouts flag (see
	// parseTestTimeouts); tests only.
	testTimeouts string
	timeouts     httpTimeouts
}

// httpTimeouts are the HTTP server's deadlines. The defaults suit real
// clients; tests shorten them with --http-test-timeouts so that no test
// waits on the wall clock for half a minute.
type httpTimeouts struct {
	header    time.Duration // the request line and headers (http.Server.ReadHeaderTimeout)
	body      time.Duration // the body, after the headers (httpserve.Options.BodyTimeout)
	idle      time.Duration // a keep-alive connection between requests (http.Server.IdleTimeout)
	keepAlive time.Duration // SSE comments on a quiet long-lived stream
}

var defaultHTTPTimeouts = httpTimeouts{header: 10 * time.Second, body: httpserve.DefaultBodyTimeout, idle: 2 * time.Minute, keepAlive: httpserve.DefaultKeepAlive}

// parseTestTimeouts reads "header=200ms,body=300ms,idle=1s,keepalive=100ms"
// (any subset) over the defaults.
func parseTestTimeouts(v string) (httpTimeouts, error) {
	t := defaultHTTPTimeouts
	for _, part := range strings.Split(v, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		k, val, ok := strings.Cut(part, "=")
		d, err := time.ParseDuration(strings.TrimSpace(val))
		if !ok || err != nil || d <= 0 {
			return t, fmt.Errorf("--http-test-timeouts: %q is not name=duration (a positive Go duration such as 300ms)", part)
		}
		switch strings.TrimSpace(k) {
		case "header":
			t.header = d
		case "body":
			t.body = d
		case "idle":
			t.idle = d
		case "keepalive":
			t.keepAlive = d
		default:
			return t, fmt.Errorf("--http-test-timeouts: unknown deadline %q (header, body, idle, keepalive)", k)
		}
	}
	return t, nil
}

// HTTP defaults (docs/http.md).
const (
	defaultHTTPHost = "127.0.0.1"
	defaultHTTPPort = 3010
)

func (o *httpOptions) register(f *pflag.FlagSet) {
	f.StringVar(&o.transport, "transport", "stdio", "MCP transport: stdio or http (env MCP_TRANSPORT_TYPE)")
	f.StringVar(&o.host, "http-host", defaultHTTPHost, "HTTP listen host (env MCP_HTTP_HOST); a non-loopback host needs authentication")
	f.IntVar(&o.port, "http-port", defaultHTTPPort, "HTTP listen port, 0 for any free one (env MCP_HTTP_PORT)")
	f.StringVar(&o.path, "http-path", httpserve.DefaultPath, "HTTP endpoint path (env MCP_HTTP_PATH)")
	f.StringVar(&o.sessionMode, "session-mode", string(httpserve.Auto), "legacy HTTP sessions: auto (a client that initializes gets a session), stateful or stateless (env MCP_SESSION_MODE)")
	f.StringSliceVar(&o.allowedHosts, "allowed-hosts", nil, "extra Host names accepted besides loopback ones, * for any (env MCP_HTTP_ALLOWED_HOSTS, comma-separated)")
	f.StringSliceVar(&o.allowedOrigins, "allowed-origins", nil, "extra browser Origins accepted besides loopback ones (env MCP_HTTP_ALLOWED_ORIGINS, comma-separated)")
	f.StringVar(&o.authMode, "auth-mode", "none", "HTTP authentication: none, jwt or oauth (env MCP_AUTH_MODE; the other settings are MCP_JWT_* and MCP_OAUTH_*)")
	f.IntVar(&o.maxConns, "http-max-connections", httpserve.DefaultMaxConnections, "HTTP connections open at once; more are answered 503 (env MCP_HTTP_MAX_CONNECTIONS)")
	f.StringVar(&o.testTimeouts, "http-test-timeouts", "", "tests only: shorter HTTP deadlines, e.g. header=200ms,body=300ms,idle=1s,keepalive=100ms")
	_ = f.MarkHidden("http-test-timeouts")
}

// resolve applies the environment to every flag not given, and checks.
func (o *httpOptions) resolve(f *pflag.FlagSet) error {
	env := func(flag, name string, apply func(string) error) error {
		if f.Changed(flag) {
			return nil
		}
		if v, ok := os.LookupEnv(name); ok && strings.TrimSpace(v) != "" {
			if err := apply(strings.TrimSpace(v)); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
		}
		return nil
	}
	list := func(dst *[]string) func(string) error {
		return func(v string) error {
			for _, p := range strings.Split(v, ",") {
				if p = strings.TrimSpace(p); p != "" {
					*dst = append(*dst, p)
				}
			}
			return nil
		}
	}
	str := func(dst *string) func(string) error { return func(v string) error { *dst = v; return nil } }
	for _, e := range []struct {
		flag, name string
		apply      func(string) error
	}{
		{"transport", "MCP_TRANSPORT_TYPE", str(&o.transport)},
		{"http-host", "MCP_HTTP_HOST", str(&o.host)},
		{"http-port", "MCP_HTTP_PORT", func(v string) error {
			n, err := strconv.Atoi(v)
			if err != nil {
				return fmt.Errorf("port %q is not a number", v)
			}
			o.port = n
			return nil
		}},
		{"http-path", "MCP_HTTP_PATH", str(&o.path)},
		{"session-mode", "MCP_SESSION_MODE", str(&o.sessionMode)},
		{"allowed-hosts", "MCP_HTTP_ALLOWED_HOSTS", list(&o.allowedHosts)},
		{"allowed-origins", "MCP_HTTP_ALLOWED_ORIGINS", list(&o.allowedOrigins)},
		{"auth-mode", httpauth.EnvAuthMode, str(&o.authMode)},
		{"http-max-connections", "MCP_HTTP_MAX_CONNECTIONS", func(v string) error {
			n, err := strconv.Atoi(v)
			if err != nil {
				return fmt.Errorf("%q is not a number", v)
			}
			o.maxConns = n
			return nil
		}},
	} {
		if err := env(e.flag, e.name, e.apply); err != nil {
			return err
		}
	}
	o.transport = strings.ToLower(o.transport)
	if o.transport != "stdio" && o.transport != "http" {
		return fmt.Errorf("transport %q is not stdio or http (--transport, MCP_TRANSPORT_TYPE)", o.transport)
	}
	if o.port < 0 || o.port > 65535 {
		return fmt.Errorf("HTTP port %d is out of range 0-65535 (--http-port, MCP_HTTP_PORT)", o.port)
	}
	if _, err := httpserve.ParseMode(o.sessionMode); err != nil {
		return fmt.Errorf("%w (--session-mode, MCP_SESSION_MODE)", err)
	}
	if !strings.HasPrefix(o.path, "/") {
		return fmt.Errorf("HTTP path %q must begin with / (--http-path, MCP_HTTP_PATH)", o.path)
	}
	if o.maxConns < 1 {
		return fmt.Errorf("HTTP connection limit %d must be at least 1 (--http-max-connections, MCP_HTTP_MAX_CONNECTIONS)", o.maxConns)
	}
	t, err := parseTestTimeouts(o.testTimeouts)
	if err != nil {
		return err
	}
	o.timeouts = t
	o.authMode = strings.ToLower(strings.TrimSpace(o.authMode))
	switch httpauth.Mode(o.authMode) {
	case httpauth.ModeNone, httpauth.ModeJWT, httpauth.ModeOAuth:
	default:
		return fmt.Errorf("auth mode %q is not none, jwt or oauth (--auth-mode, MCP_AUTH_MODE)", o.authMode)
	}
	return nil
}

// httpAuth turns the auth mode and the MCP_JWT_* / MCP_OAUTH_* settings
// into the endpoint's middleware (host/httpauth: 401/403 with
// WWW-Authenticate, the protected resource metadata routes) and the lookup
// of the authenticated subject, which becomes the agent id.
func httpAuth(mode string, lg hclog.Logger) (func(http.Handler) http.Handler, func(context.Context) (string, bool), error) {
	if mode == string(httpauth.ModeNone) {
		return nil, nil, nil
	}
	cfg := httpauth.ConfigFromEnv(os.Getenv)
	cfg.Mode = httpauth.Mode(mode)
	cfg.Logger = slog.New(slog.NewTextHandler(lg.Named("auth").StandardWriter(&hclog.StandardLoggerOptions{ForceLevel: hclog.Info}), nil))
	a, err := httpauth.New(cfg)
	if err != nil {
		return nil, nil, err
	}
	return a.Wrap, httpauth.Subject, nil
}

// shutdownGrace bounds how long requests in flight may run after SIGTERM.
const shutdownGrace = 30 * time.Second

// serveHTTP serves srv over Streamable HTTP until ctx ends, then shuts
// down gracefully: in-flight calls finish (and reach the ledger) first.
func serveHTTP(ctx context.Context, srv *mcp.Server, o *httpOptions, lg hclog.Logger) error {
	mw, subject, err := httpAuth(o.authMode, lg)
	if err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	if o.authMode == "none" && !httpserve.IsLoopbackHost(o.host) {
		return &exitError{code: exitUsage, err: fmt.Errorf(
			"refusing to listen on %q without authentication: anyone who reaches it could use your repositories; bind a loopback host (127.0.0.1) or set MCP_AUTH_MODE to jwt or oauth", o.host)}
	}
	allowedHosts := o.allowedHosts
	if !httpserve.IsLoopbackHost(o.host) && len(allowedHosts) == 0 {
		// Reached through other names (a container, a proxy); the token
		// check protects it, not the Host name.
		allowedHosts = []string{"*"}
	}
	h, err := httpserve.New(httpserve.Options{
		Server:         srv,
		Path:           o.path,
		Mode:           httpserve.Mode(o.sessionMode),
		AllowedHosts:   allowedHosts,
		AllowedOrigins: o.allowedOrigins,
		Middleware:     mw,
		Subject:        subject,
		Stats:          envflag.Set("FLUXGIT_HTTP_STATS"),
		BodyTimeout:    o.timeouts.body,
		KeepAlive:      o.timeouts.keepAlive,
		Log:            lg.Named("http"),
	})
	if err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(o.host, strconv.Itoa(o.port)))
	if err != nil {
		return &exitError{code: 1, err: fmt.Errorf("listen: %w", err)}
	}
	// Every loopback client is 127.0.0.1: the cap is on the total.
	ln = httpserve.LimitListener(ln, o.maxConns)
	hs := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: o.timeouts.header,
		IdleTimeout:       o.timeouts.idle,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          log.New(lg.Named("http").StandardWriter(&hclog.StandardLoggerOptions{ForceLevel: hclog.Debug}), "", 0),
	}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	// The one line a supervisor or a test reads to find the endpoint.
	fmt.Fprintf(os.Stderr, "fluxgit: serving MCP over HTTP at http://%s%s (session mode %s)\n", ln.Addr(), o.path, o.sessionMode)
	select {
	case err := <-served:
		return &exitError{code: 1, err: fmt.Errorf("http: %w", err)}
	case <-ctx.Done():
	}
	lg.Info("shutting down: finishing requests in flight")
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	herr := h.Shutdown(sctx)
	if err := hs.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		lg.Warn("http shutdown", "err", err)
	}
	_ = hs.Close()
	if herr != nil {
		lg.Warn("shutdown", "err", herr)
	}
	return nil
}
