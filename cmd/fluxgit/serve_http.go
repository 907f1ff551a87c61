package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/spf13/pflag"

	"github.com/fluxgit/fluxgit/host/httpserve"
	"github.com/fluxgit/fluxgit/host/mcp"
)

// httpOptions are serve's transport flags; each falls back to its
// environment variable (README.md, HTTP), and a flag given wins.
type httpOptions struct {
	transport      string
	host           string
	port           int
	path           string
	sessionMode    string
	allowedHosts   []string
	allowedOrigins []string
	authMode       string
}

// HTTP defaults (README.md, HTTP).
const (
	defaultHTTPHost = "127.0.0.1"
	defaultHTTPPort = 3010
)

func (o *httpOptions) register(f *pflag.FlagSet) {
	f.StringVar(&o.transport, "transport", "stdio", "MCP transport: stdio or http (env MCP_TRANSPORT_TYPE)")
	f.StringVar(&o.host, "http-host", defaultHTTPHost, "HTTP listen host (env MCP_HTTP_HOST); a non-loopback host needs authentication")
	f.IntVar(&o.port, "http-port", defaultHTTPPort, "HTTP listen port, 0 for any free one (env MCP_HTTP_PORT)")
	f.StringVar(&o.path, "http-path", httpserve.DefaultPath, "HTTP endpoint path (env MCP_HTTP_PATH)")
	f.StringVar(&o.sessionMode, "session-mode", string(httpserve.Stateless), "legacy HTTP sessions: auto, stateful or stateless (env MCP_SESSION_MODE)")
	f.StringSliceVar(&o.allowedHosts, "allowed-hosts", nil, "extra Host names accepted besides loopback ones, * for any (env MCP_HTTP_ALLOWED_HOSTS, comma-separated)")
	f.StringSliceVar(&o.allowedOrigins, "allowed-origins", nil, "extra browser Origins accepted besides loopback ones (env MCP_HTTP_ALLOWED_ORIGINS, comma-separated)")
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
	o.authMode = strings.ToLower(strings.TrimSpace(os.Getenv("MCP_AUTH_MODE")))
	if o.authMode == "" {
		o.authMode = "none"
	}
	return nil
}

// httpAuth is the authentication seam: it turns an auth mode into the
// endpoint's middleware (401/403 with WWW-Authenticate, metadata routes)
// and the lookup of the authenticated subject, which becomes the agent id.
// host/httpauth plugs in here; this build knows only "none".
var httpAuth = func(mode string, _ hclog.Logger) (func(http.Handler) http.Handler, func(context.Context) (string, bool), error) {
	if mode == "none" {
		return nil, nil, nil
	}
	return nil, nil, fmt.Errorf("MCP_AUTH_MODE %q is not available in this build (none is)", mode)
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
		Stats:          os.Getenv("FLUXGIT_HTTP_STATS") == "1",
		Log:            lg.Named("http"),
	})
	if err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(o.host, strconv.Itoa(o.port)))
	if err != nil {
		return &exitError{code: 1, err: fmt.Errorf("listen: %w", err)}
	}
	hs := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
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
