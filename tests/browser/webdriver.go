package browser

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"time"
)

// elementKey is the W3C WebDriver web element identifier: element references
// travel as {elementKey: id} in both directions.
const elementKey = "element-6066-11e4-a52e-4f735466cecf"

// sessionPrefix matches the "/session/<id>" that starts session commands.
var sessionPrefix = regexp.MustCompile(`^/session/[^/]+`)

// commandTimeout bounds one WebDriver round trip. It is far above what any
// command needs on an idle machine, because the test machine is shared and a
// navigation that loads a page under -race can be slow; it only exists so a
// wedged chromedriver ends the test instead of hanging it.
const commandTimeout = 2 * time.Minute

// Error is a failed WebDriver command: the W3C error code (for example
// "no such element", "stale element reference", "invalid selector") and the
// driver's message, with the command that produced them.
type Error struct {
	Command string // e.g. "POST /element"
	Status  int    // HTTP status of the reply
	Code    string // W3C error code
	Message string // driver's message
}

func (e *Error) Error() string {
	return fmt.Sprintf("webdriver %s: %s: %s", e.Command, e.Code, e.Message)
}

// IsCode reports whether err is a WebDriver error with one of the given codes.
func IsCode(err error, codes ...string) bool {
	var we *Error
	if !errors.As(err, &we) {
		return false
	}
	for _, c := range codes {
		if we.Code == c {
			return true
		}
	}
	return false
}

// wire is a connection to one chromedriver: the base URL and a client that
// never goes through a proxy, since chromedriver only listens on loopback.
type wire struct {
	base   string
	client *http.Client
}

func newWire(base string) *wire {
	return &wire{
		base: base,
		client: &http.Client{Transport: &http.Transport{
			Proxy:               nil,
			MaxIdleConnsPerHost: 4,
		}},
	}
}

// do sends one command and returns the "value" member of the reply. body nil
// sends no body for GET/DELETE and {} for POST (chromedriver rejects a POST
// without a JSON object).
func (w *wire) do(ctx context.Context, method, path string, body any) (json.RawMessage, error) {
	// The session id says nothing to a reader of a test failure.
	cmd := method + " " + sessionPrefix.ReplaceAllString(path, "")
	var rd io.Reader
	if method == http.MethodPost {
		if body == nil {
			body = struct{}{}
		}
		b, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("webdriver %s: encode body: %w", cmd, err)
		}
		rd = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(ctx, commandTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, w.base+path, rd)
	if err != nil {
		return nil, fmt.Errorf("webdriver %s: %w", cmd, err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json; charset=utf-8")
	}
	resp, err := w.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("webdriver %s: %w", cmd, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("webdriver %s: read reply: %w", cmd, err)
	}
	var reply struct {
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(raw, &reply); err != nil {
		return nil, fmt.Errorf("webdriver %s: HTTP %d, reply is not JSON: %.200q", cmd, resp.StatusCode, raw)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error   string `json:"error"`
			Message string `json:"message"`
		}
		_ = json.Unmarshal(reply.Value, &e)
		if e.Error == "" {
			e.Error = "unknown error"
		}
		// chromedriver appends its own build details after the first line;
		// the first line is what says what went wrong.
		msg, _, _ := strings.Cut(e.Message, "\n")
		return nil, &Error{Command: cmd, Status: resp.StatusCode, Code: e.Error, Message: msg}
	}
	return reply.Value, nil
}

// decode runs a command and unmarshals its value into out.
func (w *wire) decode(ctx context.Context, method, path string, body, out any) error {
	v, err := w.do(ctx, method, path, body)
	if err != nil {
		return err
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(v, out); err != nil {
		return fmt.Errorf("webdriver %s %s: decode value %.200q: %w", method, path, v, err)
	}
	return nil
}
