package fluxbridge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// HTTP client limits (the gateway contract in README.md): a local process
// answers at once or not at all, so the timeouts are short, and a reply
// larger than MaxBodyBytes is a fault, not data.
const (
	ConnectTimeout  = 2 * time.Second
	RequestTimeout  = 5 * time.Second
	SemanticTimeout = 10 * time.Second
	MaxBodyBytes    = 2_796_202
)

// ErrBodyTooLarge is returned for a reply over MaxBodyBytes.
var ErrBodyTooLarge = fmt.Errorf("gateway reply exceeds %d bytes", MaxBodyBytes)

// ErrRedirect is returned for a 3xx reply: redirects are never followed,
// so a gateway cannot send a call anywhere else.
var ErrRedirect = errors.New("gateway replied with a redirect, which is never followed")

// Client talks to one gateway address. It ignores proxy variables, never
// follows redirects and keeps no idle connections, so every call is a
// fresh loopback connection to exactly the configured address.
type Client struct {
	addr Address
	http *http.Client
	// Header holds extra request headers sent with every request (the
	// handshake provider's operation.ProposerHeader).
	Header http.Header
}

// NewClient builds a client for addr.
func NewClient(addr Address) *Client {
	dialer := &net.Dialer{Timeout: ConnectTimeout}
	transport := &http.Transport{
		Proxy:             nil, // never a proxy, whatever HTTP_PROXY says
		DialContext:       dialer.DialContext,
		DisableKeepAlives: true,
		MaxIdleConns:      -1,
		ForceAttemptHTTP2: false,
	}
	return &Client{addr: addr, http: &http.Client{
		Transport: transport,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}}
}

// Response is a gateway reply.
type Response struct {
	Status int
	Body   []byte
}

// JSONError returns the reply's top-level "error" member when the body is
// a JSON object that has one: the gateway's way to refuse.
func (r *Response) JSONError() (json.RawMessage, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(r.Body, &m) != nil || m == nil {
		return nil, false
	}
	e, ok := m["error"]
	return e, ok
}

// Do sends one request: body (nil for none) as JSON, path relative to
// the gateway root ("/v1/mcp/operation/status/ID"). A transport failure,
// a redirect, a timeout or an oversize reply is an error; any other HTTP
// status is a Response for the caller to judge.
func (c *Client) Do(ctx context.Context, method, path string, body any, timeout time.Duration) (*Response, error) {
	if timeout <= 0 {
		timeout = RequestTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("encode gateway request: %w", err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.addr.BaseURL()+path, rd)
	if err != nil {
		return nil, fmt.Errorf("build gateway request: %w", err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	for k, vs := range c.Header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("gateway %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		return nil, fmt.Errorf("gateway %s %s: HTTP %d: %w", method, path, resp.StatusCode, ErrRedirect)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, MaxBodyBytes+1))
	if err != nil {
		return nil, fmt.Errorf("gateway %s %s: read reply: %w", method, path, err)
	}
	if len(b) > MaxBodyBytes {
		return nil, fmt.Errorf("gateway %s %s: %w", method, path, ErrBodyTooLarge)
	}
	return &Response{Status: resp.StatusCode, Body: b}, nil
}
