package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/fluxgit/fluxgit/internal/credpaths"
)

// Client talks to a running gateway's CLI API on a person's behalf.
type Client struct {
	// Addr is the gateway's ip:port; Secret its bearer secret.
	Addr, Secret string
	HTTP         *http.Client
}

// APIError is a refusal from the gateway: its HTTP status and the {error}
// text.
type APIError struct {
	Status int
	Msg    string
}

func (e *APIError) Error() string { return e.Msg }

// ReadSession reads the session file of the gateway running on runDir,
// looking in each of credpaths.SecretDirs in turn (the gateway wrote it in
// the first one no read tool reaches, which may depend on roots the CLI's
// environment does not name).
func ReadSession(runDir string) (Session, error) {
	dirs := credpaths.SecretDirs()
	var (
		b   []byte
		p   string
		err error = fs.ErrNotExist
	)
	for _, d := range dirs {
		p = SessionPath(d, runDir)
		if b, err = os.ReadFile(p); !errors.Is(err, fs.ErrNotExist) {
			break
		}
	}
	if errors.Is(err, fs.ErrNotExist) {
		return Session{}, fmt.Errorf("no fluxgit gateway is running on run directory %s (no session file %s in %s); start one with `fluxgit gateway`, or pass the --run-dir it uses and run this with the same %s and XDG_RUNTIME_DIR",
			runDir, credpaths.SessionFileName(runDir), strings.Join(dirs, ", "), credpaths.EnvSecretDir)
	}
	if err != nil {
		return Session{}, fmt.Errorf("read gateway session: %w", err)
	}
	var s Session
	if err := json.Unmarshal(b, &s); err != nil || s.Addr == "" || s.Secret == "" {
		return Session{}, fmt.Errorf("gateway session file %s is damaged; restart `fluxgit gateway`", p)
	}
	if err := CheckLoopback(s.Addr); err != nil {
		return Session{}, fmt.Errorf("gateway session file %s: %w", p, err)
	}
	return s, nil
}

// NewClient returns a client for the gateway running on runDir.
func NewClient(runDir string) (*Client, error) {
	s, err := ReadSession(runDir)
	if err != nil {
		return nil, err
	}
	return &Client{Addr: s.Addr, Secret: s.Secret}, nil
}

func (c *Client) http() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	// No proxy: the gateway is on loopback and the secret must not travel
	// anywhere else.
	return &http.Client{
		Timeout:   30 * time.Second,
		Transport: &http.Transport{Proxy: nil},
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("encode request: %w", err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://"+c.Addr+path, body)
	if err != nil {
		return fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+c.Secret)
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http().Do(req)
	if err != nil {
		return fmt.Errorf("reach the gateway at %s (is `fluxgit gateway` still running?): %w", c.Addr, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxReply+1))
	if err != nil {
		return fmt.Errorf("read the gateway's reply: %w", err)
	}
	if len(b) > maxReply {
		// Decoding a reply cut at the cap fails inside whatever it was cut
		// in (the old list, cut in a \u escape of a large patch, said
		// "invalid character ' ' in \u hexadecimal character escape").
		// Say what happened instead.
		return fmt.Errorf("the gateway's reply to %s %s is larger than %d MiB, more than this client reads; list with a smaller --limit, or read the proposal on the approval page", method, path, maxReply>>20)
	}
	if resp.StatusCode/100 != 2 {
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(b, &e) != nil || e.Error == "" {
			e.Error = fmt.Sprintf("the gateway answered %s", resp.Status)
		}
		return &APIError{Status: resp.StatusCode, Msg: e.Error}
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			return fmt.Errorf("decode the gateway's reply: %w", err)
		}
	}
	return nil
}

// maxReply bounds a reply the client reads. The largest honest reply is
// one proposal's view (`show`) with a body of at most MaxPreviewBody; a
// list carries no bodies.
const maxReply = 64 << 20

// ListOptions selects a page of proposals: only Statuses when given,
// Offset rows skipped, at most Limit (0: the gateway's default, 200; at
// most 1,000).
type ListOptions struct {
	Statuses      []string
	Limit, Offset int
}

// ListPage returns one page of proposals, newest first, without bodies,
// and the total the statuses select.
func (c *Client) ListPage(ctx context.Context, o ListOptions) (ListPage, error) {
	q := url.Values{}
	if len(o.Statuses) > 0 {
		q.Set("status", strings.Join(o.Statuses, ","))
	}
	if o.Limit > 0 {
		q.Set("limit", strconv.Itoa(o.Limit))
	}
	if o.Offset > 0 {
		q.Set("offset", strconv.Itoa(o.Offset))
	}
	p := cliPrefix + "proposals"
	if len(q) > 0 {
		p += "?" + q.Encode()
	}
	var out ListPage
	err := c.do(ctx, http.MethodGet, p, nil, &out)
	return out, err
}

// List returns every proposal, newest first, without bodies, page by
// page; statuses filter when given.
func (c *Client) List(ctx context.Context, statuses ...string) ([]View, error) {
	var all []View
	for {
		page, err := c.ListPage(ctx, ListOptions{Statuses: statuses, Limit: maxListLimit, Offset: len(all)})
		if err != nil {
			return all, err
		}
		all = append(all, page.Proposals...)
		// Rows can come and go between pages; stop at an empty page.
		if len(page.Proposals) == 0 || len(all) >= page.Total {
			return all, nil
		}
	}
}

// Show returns one proposal.
func (c *Client) Show(ctx context.Context, id string) (View, error) {
	var v View
	err := c.do(ctx, http.MethodGet, cliPrefix+"proposals/"+url.PathEscape(id), nil, &v)
	return v, err
}

// Approve approves a pending proposal with the confirmations it needs.
func (c *Client) Approve(ctx context.Context, id string, req ApproveRequest) (View, error) {
	var v View
	err := c.do(ctx, http.MethodPost, cliPrefix+"proposals/"+url.PathEscape(id)+"/approve", req, &v)
	return v, err
}

// Reject rejects a pending proposal; the agent reads reason.
func (c *Client) Reject(ctx context.Context, id, reason string) (View, error) {
	var v View
	err := c.do(ctx, http.MethodPost, cliPrefix+"proposals/"+url.PathEscape(id)+"/reject", RejectRequest{Reason: reason}, &v)
	return v, err
}

// Reconcile settles an interrupted execution as completed or failed.
func (c *Client) Reconcile(ctx context.Context, id, as, note string) (View, error) {
	var v View
	err := c.do(ctx, http.MethodPost, cliPrefix+"proposals/"+url.PathEscape(id)+"/reconcile", ReconcileRequest{As: as, Note: note}, &v)
	return v, err
}

// Redo redoes the restore point of a repository undone last.
func (c *Client) Redo(ctx context.Context, repoPath string) (UndoView, error) {
	var v UndoView
	err := c.do(ctx, http.MethodPost, cliPrefix+"redo", UndoRequest{RepoPath: repoPath}, &v)
	return v, err
}

// Undo undoes the newest restore point of a repository not undone yet.
func (c *Client) Undo(ctx context.Context, repoPath string) (UndoView, error) {
	var v UndoView
	err := c.do(ctx, http.MethodPost, cliPrefix+"undo", UndoRequest{RepoPath: repoPath}, &v)
	return v, err
}
