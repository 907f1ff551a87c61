// Package browser drives a real headless Debian chromium from Go tests, over
// the W3C WebDriver protocol spoken by chromedriver. It is a small client
// built on net/http and encoding/json only, made for the approval-page
// end-to-end tests: open a page, find elements by CSS selector, type, click,
// wait for text to appear, read attributes and cookies, take screenshots.
//
// Every test calls Start, which launches a fresh chromedriver and chromium
// with an empty profile and ends both (the whole process group) when the test
// ends. Methods of Browser and Element fail the test with the WebDriver error
// code and message; waits poll until their condition holds or a generous
// timeout passes, so tests never depend on how fast this machine is.
//
// Without chromium the tests skip, except under CI (the environment variable
// CI set and non-empty), where a missing browser is a failure: .ci/run
// installs it, so its absence there is a broken setup, not a reason to skip.
package browser

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Default locations of Debian's packages (chromium, chromium-driver) and the
// environment variables that override them.
const (
	DefaultChromium     = "/usr/bin/chromium"
	DefaultChromedriver = "/usr/bin/chromedriver"
	EnvChromium         = "FLUXGIT_CHROMIUM"
	EnvChromedriver     = "FLUXGIT_CHROMEDRIVER"
	// EnvArtifacts names a directory where a failing test's last screenshot,
	// page source and console log are saved, for CI to keep.
	EnvArtifacts = "FLUXGIT_BROWSER_ARTIFACTS"
	// InstallCommand is what puts both binaries in place on Debian.
	InstallCommand = "apt-get install -y chromium chromium-driver"
)

// DefaultWait is the timeout a wait uses when given zero. It is long because
// the machine running the tests may be busy with other work; a wait returns
// as soon as its condition holds, so a long timeout costs nothing when things
// work.
const DefaultWait = 30 * time.Second

// pollInterval is how often a wait re-checks the page.
const pollInterval = 100 * time.Millisecond

// WebDriver key codes for Element.Type (W3C WebDriver, "Keyboard actions").
const (
	KeyEnter     = "\ue007"
	KeyTab       = "\ue004"
	KeyBackspace = "\ue003"
	KeyEscape    = "\ue00c"
)

// chromiumArgs are the flags every session starts chromium with. Besides
// headless operation they switch off everything that would reach the network
// on its own (sync, component updates, QUIC, background fetches) so a test
// only ever talks to the loopback server it started. --disable-dev-shm-usage
// keeps chromium working in containers whose /dev/shm is tiny, and
// --no-proxy-server keeps a proxy in the environment away from loopback pages.
var chromiumArgs = []string{
	"--headless=new",
	"--no-sandbox",
	"--disable-gpu",
	"--disable-quic",
	"--no-first-run",
	"--disable-background-networking",
	"--disable-component-update",
	"--disable-sync",
	"--disable-dev-shm-usage",
	"--no-proxy-server",
	"--window-size=1280,1600",
}

// paths returns the chromium and chromedriver binaries to use.
func paths() (chromium, driver string) {
	chromium, driver = DefaultChromium, DefaultChromedriver
	if v := os.Getenv(EnvChromium); v != "" {
		chromium = v
	}
	if v := os.Getenv(EnvChromedriver); v != "" {
		driver = v
	}
	return chromium, driver
}

// Available reports what, if anything, keeps a browser from starting: an
// unsupported system or a missing or non-executable chromium or chromedriver,
// with the command that installs them.
func Available() error {
	if err := supported(); err != nil {
		return err
	}
	chromium, driver := paths()
	var missing []string
	for _, p := range []struct{ path, env string }{{chromium, EnvChromium}, {driver, EnvChromedriver}} {
		fi, err := os.Stat(p.path)
		switch {
		case err != nil:
			missing = append(missing, fmt.Sprintf("%s not found (set %s to another path)", p.path, p.env))
		case fi.IsDir() || fi.Mode()&0o111 == 0:
			missing = append(missing, fmt.Sprintf("%s is not an executable file", p.path))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("headless browser unavailable: %s; install with: %s",
			strings.Join(missing, "; "), InstallCommand)
	}
	return nil
}

// inCI reports whether the tests run under CI, where a missing browser fails
// the test instead of skipping it.
func inCI() bool { return os.Getenv("CI") != "" }

// require skips or fails t when no browser can start.
func require(t testing.TB) {
	t.Helper()
	err := Available()
	if err == nil {
		return
	}
	if inCI() {
		t.Fatalf("%v (CI is set, so a missing browser is a failure: run %s as root, as .ci/run does)", err, InstallCommand)
	}
	t.Skipf("%v (skipped because CI is unset)", err)
}

// Browser is one chromedriver process with one chromium session. A session
// runs one command at a time: drive it from one goroutine.
type Browser struct {
	t       testing.TB
	w       *wire
	session string // "/session/<id>"
	dir     string // per-browser temporary directory (profile, logs)
	cmd     *exec.Cmd
	pgid    int
	done    chan struct{} // closed when chromedriver has exited
	once    *sync.Once    // shared by the copies For makes, so the browser closes once
	// Startup is how long Start took from launching chromedriver to a
	// usable session.
	Startup time.Duration
}

// Start launches chromedriver and a headless chromium session with a fresh
// profile, and registers a cleanup that ends the session and kills both
// processes (the whole group) when the test ends. If the test fails, the
// cleanup first logs the page address, its text and the console log, and
// saves a screenshot and the page source under $FLUXGIT_BROWSER_ARTIFACTS
// when that is set. Without a browser, Start skips the test, or fails it
// when CI is set.
func Start(t testing.TB) *Browser {
	t.Helper()
	require(t)
	// The directory is made before the cleanup below is registered, so the
	// processes writing into it are gone before the testing package
	// removes it.
	dir := t.TempDir()
	b, err := launch(dir)
	if err != nil {
		t.Fatalf("start browser: %v", err)
	}
	b.t = t
	t.Cleanup(func() {
		if t.Failed() {
			b.report()
		}
		if left := b.close(); len(left) > 0 {
			t.Errorf("browser processes still alive after kill: %v", left)
		}
	})
	return b
}

// launch starts chromedriver (retrying when the port it was given was taken
// meanwhile) and creates the session.
func launch(dir string) (*Browser, error) {
	began := time.Now()
	chromium, driver := paths()
	var b *Browser
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		b, err = startDriver(driver, dir, attempt)
		if err == nil {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	if err := b.newSession(chromium); err != nil {
		b.close()
		return nil, err
	}
	b.Startup = time.Since(began)
	return b, nil
}

// freePort returns a loopback port nothing listens on right now.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free loopback port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// startDriver runs chromedriver on a free loopback port and waits until its
// /status says it is ready.
func startDriver(driver, dir string, attempt int) (*Browser, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	logPath := filepath.Join(dir, fmt.Sprintf("chromedriver-%d.log", attempt))
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("create chromedriver log: %w", err)
	}
	defer logFile.Close()
	cmd := exec.Command(driver, "--port="+strconv.Itoa(port), "--allowed-ips=127.0.0.1")
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.Dir = dir
	// chromium writes its crash-report database under the user's config
	// directory even with --user-data-dir; pointing that at the temporary
	// directory keeps the user's home untouched and lets cleanup find the
	// crash handler by its command line.
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+filepath.Join(dir, "config"))
	setProcessGroup(cmd)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", driver, err)
	}
	b := &Browser{
		w:    newWire("http://127.0.0.1:" + strconv.Itoa(port)),
		dir:  dir,
		cmd:  cmd,
		pgid: cmd.Process.Pid,
		done: make(chan struct{}),
		once: new(sync.Once),
	}
	go func() { _ = cmd.Wait(); close(b.done) }()

	deadline := time.Now().Add(60 * time.Second)
	for {
		var st struct {
			Ready   bool   `json:"ready"`
			Message string `json:"message"`
		}
		err := b.w.decode(context.Background(), http.MethodGet, "/status", nil, &st)
		if err == nil && st.Ready {
			return b, nil
		}
		select {
		case <-b.done:
			b.close()
			return nil, fmt.Errorf("chromedriver exited before it was ready on port %d: %s", port, tail(logPath))
		case <-time.After(pollInterval):
		}
		if time.Now().After(deadline) {
			b.close()
			return nil, fmt.Errorf("chromedriver on port %d not ready after 60s (last error: %v): %s", port, err, tail(logPath))
		}
	}
}

// tail returns the end of a log file, for error messages.
func tail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	s := strings.TrimSpace(string(b))
	if len(s) > 2000 {
		s = "…" + s[len(s)-2000:]
	}
	if s == "" {
		return "(empty log)"
	}
	return s
}

// newSession creates the WebDriver session. Creation is tried twice: on a
// loaded machine chromium occasionally misses chromedriver's start-up
// deadline once and then starts fine.
func (b *Browser) newSession(chromium string) error {
	profile := filepath.Join(b.dir, "profile")
	args := append(append([]string(nil), chromiumArgs...), "--user-data-dir="+profile)
	caps := map[string]any{
		"capabilities": map[string]any{
			"alwaysMatch": map[string]any{
				"browserName":             "chrome",
				"pageLoadStrategy":        "normal",
				"unhandledPromptBehavior": "dismiss and notify",
				"timeouts":                map[string]any{"implicit": 0, "pageLoad": 120_000, "script": 60_000},
				"goog:chromeOptions": map[string]any{
					"binary": chromium,
					"args":   args,
				},
				"goog:loggingPrefs": map[string]any{"browser": "ALL"},
			},
		},
	}
	var lastErr error
	for attempt := 0; attempt < 2; attempt++ {
		var reply struct {
			SessionID string `json:"sessionId"`
		}
		lastErr = b.w.decode(context.Background(), http.MethodPost, "/session", caps, &reply)
		if lastErr == nil {
			if reply.SessionID == "" {
				return errors.New("chromedriver created a session without an id")
			}
			b.session = "/session/" + url.PathEscape(reply.SessionID)
			return nil
		}
		if !IsCode(lastErr, "session not created", "unknown error") {
			break
		}
	}
	return fmt.Errorf("create chromium session (%s): %w", chromium, lastErr)
}

// close ends the session and kills chromedriver's process group and any
// stray chromium process. It returns the pids that survived.
func (b *Browser) close() (left []int) {
	b.once.Do(func() { left = b.shutdown() })
	return left
}

func (b *Browser) shutdown() []int {
	if b.session != "" {
		// A polite quit lets chromium flush and exit by itself; the kill
		// below covers it hanging or having crashed.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, _ = b.w.do(ctx, http.MethodDelete, b.session, nil)
		cancel()
	}
	left := reap(b.pgid, b.dir, time.Now().Add(15*time.Second))
	select {
	case <-b.done:
	case <-time.After(15 * time.Second):
		left = append(left, b.pgid)
	}
	b.w.client.CloseIdleConnections()
	return left
}

// report logs what the page looked like when a test failed and saves the
// screenshot, source and console log under $FLUXGIT_BROWSER_ARTIFACTS.
func (b *Browser) report() {
	ctx := context.Background()
	var u string
	_ = b.w.decode(ctx, http.MethodGet, b.session+"/url", nil, &u)
	var text string
	_ = b.w.decode(ctx, http.MethodPost, b.session+"/execute/sync",
		map[string]any{"script": "return document.body ? document.body.innerText : ''", "args": []any{}}, &text)
	if len(text) > 4000 {
		text = text[:4000] + "…"
	}
	logs, _ := b.logs()
	var lines []string
	for _, l := range logs {
		lines = append(lines, l.Level+" "+l.Message)
	}
	b.t.Logf("browser at failure: url %s\n--- page text ---\n%s\n--- console ---\n%s", u, text, strings.Join(lines, "\n"))
	dir := os.Getenv(EnvArtifacts)
	if dir == "" {
		return
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.t.Logf("browser artifacts: %v", err)
		return
	}
	base := filepath.Join(dir, regexp.MustCompile(`[^A-Za-z0-9._-]+`).ReplaceAllString(b.t.Name(), "_"))
	if png, err := b.screenshot(ctx, b.session+"/screenshot"); err == nil {
		_ = os.WriteFile(base+".png", png, 0o644)
	}
	var src string
	if b.w.decode(ctx, http.MethodGet, b.session+"/source", nil, &src) == nil {
		_ = os.WriteFile(base+".html", []byte(src), 0o644)
	}
	_ = os.WriteFile(base+".console.txt", []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	b.t.Logf("browser artifacts saved as %s.{png,html,console.txt}", base)
}

// For returns the same browser reporting its failures to t. A subtest uses
// it: failing the parent test from a subtest's goroutine is not allowed.
//
//	t.Run("approve", func(t *testing.T) {
//		b := b.For(t)
//		b.WaitClick(`button[data-action="approve"]`, 0)
//	})
func (b *Browser) For(t testing.TB) *Browser {
	c := *b
	c.t = t
	return &c
}

// fatal fails the test with err.
func (b *Browser) fatal(err error) {
	b.t.Helper()
	b.t.Fatal(err)
}

// run runs a session command and decodes its value into out.
func (b *Browser) run(method, path string, body, out any) error {
	return b.w.decode(context.Background(), method, b.session+path, body, out)
}

// Navigate loads url and waits for the page to finish loading.
func (b *Browser) Navigate(url string) {
	b.t.Helper()
	if err := b.run(http.MethodPost, "/url", map[string]any{"url": url}, nil); err != nil {
		b.fatal(fmt.Errorf("navigate to %s: %w", url, err))
	}
}

// URL returns the address of the current page.
func (b *Browser) URL() string {
	b.t.Helper()
	var u string
	if err := b.run(http.MethodGet, "/url", nil, &u); err != nil {
		b.fatal(err)
	}
	return u
}

// Title returns the current page's title.
func (b *Browser) Title() string {
	b.t.Helper()
	var s string
	if err := b.run(http.MethodGet, "/title", nil, &s); err != nil {
		b.fatal(err)
	}
	return s
}

// Source returns the current DOM serialised as HTML.
func (b *Browser) Source() string {
	b.t.Helper()
	var s string
	if err := b.run(http.MethodGet, "/source", nil, &s); err != nil {
		b.fatal(err)
	}
	return s
}

// find looks up the first element matching css under scope ("" for the
// document, else "/element/<id>").
func (b *Browser) find(scope, css string) (Element, error) {
	var ref map[string]string
	if err := b.run(http.MethodPost, scope+"/element", map[string]any{"using": "css selector", "value": css}, &ref); err != nil {
		return Element{}, fmt.Errorf("find %q: %w", css, err)
	}
	return Element{b: b, id: ref[elementKey], css: css}, nil
}

// findAll looks up every element matching css under scope.
func (b *Browser) findAll(scope, css string) ([]Element, error) {
	var refs []map[string]string
	if err := b.run(http.MethodPost, scope+"/elements", map[string]any{"using": "css selector", "value": css}, &refs); err != nil {
		return nil, fmt.Errorf("find all %q: %w", css, err)
	}
	out := make([]Element, 0, len(refs))
	for _, r := range refs {
		out = append(out, Element{b: b, id: r[elementKey], css: css})
	}
	return out, nil
}

// Find returns the first element matching the CSS selector, failing the test
// when there is none. Use WaitFor for elements that appear later, and
// FindAll to check that something is absent.
func (b *Browser) Find(css string) Element {
	b.t.Helper()
	e, err := b.find("", css)
	if err != nil {
		b.fatal(err)
	}
	return e
}

// FindAll returns every element matching the CSS selector, in document
// order; none is an empty slice, not a failure.
func (b *Browser) FindAll(css string) []Element {
	b.t.Helper()
	es, err := b.findAll("", css)
	if err != nil {
		b.fatal(err)
	}
	return es
}

// retriable reports whether a failed lookup may succeed later: the element is
// not there yet, or the page re-rendered it between lookup and use.
func retriable(err error) bool {
	return IsCode(err, "no such element", "stale element reference", "element not interactable",
		"element click intercepted")
}

// poll calls try until it reports done or timeout passes (zero: DefaultWait),
// then fails the test with what() (called then, so it can describe the last
// state seen), the timeout and try's last error.
func (b *Browser) poll(timeout time.Duration, what func() string, try func() (bool, error)) {
	b.t.Helper()
	if timeout <= 0 {
		timeout = DefaultWait
	}
	deadline := time.Now().Add(timeout)
	for {
		ok, err := try()
		if ok {
			return
		}
		if err != nil && !retriable(err) {
			b.fatal(fmt.Errorf("wait for %s: %w", what(), err))
		}
		if time.Now().After(deadline) {
			if err != nil {
				b.fatal(fmt.Errorf("wait for %s: not reached within %v (last error: %w)", what(), timeout, err))
			}
			b.fatal(fmt.Errorf("wait for %s: not reached within %v", what(), timeout))
		}
		time.Sleep(pollInterval)
	}
}

// WaitFor waits until an element matches the CSS selector (present in the
// DOM; it may be hidden) and returns it. Zero timeout means DefaultWait.
func (b *Browser) WaitFor(css string, timeout time.Duration) Element {
	b.t.Helper()
	var e Element
	b.poll(timeout, func() string { return fmt.Sprintf("element %q", css) }, func() (bool, error) {
		var err error
		e, err = b.find("", css)
		return err == nil, err
	})
	return e
}

// WaitText waits until an element matching the CSS selector has rendered
// text containing substr, and returns that element. The failure message
// lists the texts last seen.
func (b *Browser) WaitText(css, substr string, timeout time.Duration) Element {
	b.t.Helper()
	var found Element
	var seen []string
	b.poll(timeout, func() string {
		return fmt.Sprintf("text %q in %q (last seen: %q)", substr, css, seen)
	}, func() (bool, error) {
		es, err := b.findAll("", css)
		if err != nil {
			return false, err
		}
		seen = seen[:0]
		for _, e := range es {
			txt, err := e.text()
			if err != nil {
				return false, err
			}
			if strings.Contains(txt, substr) {
				found = e
				return true, nil
			}
			seen = append(seen, txt)
		}
		return false, nil
	})
	return found
}

// WaitGone waits until no element matches the CSS selector.
func (b *Browser) WaitGone(css string, timeout time.Duration) {
	b.t.Helper()
	b.poll(timeout, func() string { return fmt.Sprintf("no element %q", css) }, func() (bool, error) {
		es, err := b.findAll("", css)
		return err == nil && len(es) == 0, err
	})
}

// WaitClick waits until an element matching the CSS selector exists and a
// click on it goes through, retrying when a live page re-renders the element
// between lookup and click.
func (b *Browser) WaitClick(css string, timeout time.Duration) {
	b.t.Helper()
	b.poll(timeout, func() string { return fmt.Sprintf("click on %q", css) }, func() (bool, error) {
		e, err := b.find("", css)
		if err == nil {
			err = e.click()
		}
		return err == nil, err
	})
}

// Script runs js as the body of a function (W3C "Execute Script") with args
// available as arguments[i], and returns its JSON-decoded result. Element
// arguments are passed as DOM elements, and DOM elements returned come back
// as Element values.
func (b *Browser) Script(js string, args ...any) any {
	b.t.Helper()
	wireArgs := make([]any, len(args))
	for i, a := range args {
		if e, ok := a.(Element); ok {
			wireArgs[i] = map[string]string{elementKey: e.id}
		} else {
			wireArgs[i] = a
		}
	}
	var v any
	if err := b.run(http.MethodPost, "/execute/sync", map[string]any{"script": js, "args": wireArgs}, &v); err != nil {
		b.fatal(fmt.Errorf("script: %w", err))
	}
	return b.elements(v)
}

// elements replaces element references in a decoded script result by
// Element values.
func (b *Browser) elements(v any) any {
	switch x := v.(type) {
	case map[string]any:
		if id, ok := x[elementKey].(string); ok && len(x) == 1 {
			return Element{b: b, id: id, css: "(script result)"}
		}
		for k, y := range x {
			x[k] = b.elements(y)
		}
	case []any:
		for i, y := range x {
			x[i] = b.elements(y)
		}
	}
	return v
}

// screenshot fetches a base64 PNG from path and decodes it.
func (b *Browser) screenshot(ctx context.Context, path string) ([]byte, error) {
	var s string
	if err := b.w.decode(ctx, http.MethodGet, path, nil, &s); err != nil {
		return nil, err
	}
	png, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("screenshot: decode base64: %w", err)
	}
	return png, nil
}

// Screenshot returns a PNG of the visible part of the page: the viewport of
// the 1280×1600 window, 1280 pixels wide and somewhat less than 1600 high.
func (b *Browser) Screenshot() []byte {
	b.t.Helper()
	png, err := b.screenshot(context.Background(), b.session+"/screenshot")
	if err != nil {
		b.fatal(err)
	}
	return png
}

// SaveScreenshot writes a PNG of the visible page to path, creating its
// directory.
func (b *Browser) SaveScreenshot(path string) {
	b.t.Helper()
	png := b.Screenshot()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		b.fatal(fmt.Errorf("save screenshot: %w", err))
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		b.fatal(fmt.Errorf("save screenshot: %w", err))
	}
}

// SaveScreenshot writes a PNG of the element alone (WebDriver's element
// screenshot, scrolled into view) to path, creating its directory: a
// picture of one approval card is a fraction of the whole window's.
func (e Element) SaveScreenshot(path string) {
	e.b.t.Helper()
	png, err := e.b.screenshot(context.Background(), e.b.session+e.path("/screenshot"))
	if err == nil {
		err = os.MkdirAll(filepath.Dir(path), 0o755)
	}
	if err == nil {
		err = os.WriteFile(path, png, 0o644)
	}
	if err != nil {
		e.b.fatal(fmt.Errorf("save element screenshot: %w", err))
	}
}

// Cookie is a cookie as WebDriver reports it for the current page's domain.
type Cookie struct {
	Name     string `json:"name"`
	Value    string `json:"value"`
	Path     string `json:"path"`
	Domain   string `json:"domain"`
	Secure   bool   `json:"secure"`
	HTTPOnly bool   `json:"httpOnly"`
	SameSite string `json:"sameSite"` // "Strict", "Lax" or "None"
	Expiry   int64  `json:"expiry"`   // Unix seconds; 0 for a session cookie
}

// Cookie returns the named cookie visible to the current page, HttpOnly ones
// included; ok is false when there is none.
func (b *Browser) Cookie(name string) (c Cookie, ok bool) {
	b.t.Helper()
	err := b.run(http.MethodGet, "/cookie/"+url.PathEscape(name), nil, &c)
	if IsCode(err, "no such cookie") {
		return Cookie{}, false
	}
	if err != nil {
		b.fatal(fmt.Errorf("cookie %q: %w", name, err))
	}
	return c, true
}

// Cookies returns every cookie visible to the current page.
func (b *Browser) Cookies() []Cookie {
	b.t.Helper()
	var cs []Cookie
	if err := b.run(http.MethodGet, "/cookie", nil, &cs); err != nil {
		b.fatal(fmt.Errorf("cookies: %w", err))
	}
	return cs
}

// LogEntry is one browser console message (console.log and friends, uncaught
// errors, and resources the page failed to load or was refused by its
// Content-Security-Policy).
type LogEntry struct {
	Level     string `json:"level"` // "SEVERE", "WARNING", "INFO", "DEBUG"
	Message   string `json:"message"`
	Source    string `json:"source"`
	Timestamp int64  `json:"timestamp"` // Unix milliseconds
}

// logs drains the console entries gathered since the last call.
func (b *Browser) logs() ([]LogEntry, error) {
	var es []LogEntry
	// chromedriver keeps the pre-W3C log command under its vendor prefix.
	if err := b.run(http.MethodPost, "/se/log", map[string]any{"type": "browser"}, &es); err != nil {
		return nil, fmt.Errorf("browser console log: %w", err)
	}
	return es, nil
}

// Logs returns the browser console entries gathered since the previous call
// (each entry is returned once). Entries arrive asynchronously: a message the
// page logged a moment ago may only show up in a later call, so poll for an
// expected entry rather than checking once.
func (b *Browser) Logs() []LogEntry {
	b.t.Helper()
	es, err := b.logs()
	if err != nil {
		b.fatal(err)
	}
	return es
}

// Element is a reference to a DOM element found on the current page. It goes
// stale when the page replaces the element; re-find it (or use the waits,
// which re-find on every poll) after the page re-renders.
type Element struct {
	b   *Browser
	id  string
	css string // the selector it was found with, for error messages
}

func (e Element) path(suffix string) string { return "/element/" + url.PathEscape(e.id) + suffix }

// fail fails the test with err, naming the element's selector.
func (e Element) fail(action string, err error) {
	e.b.t.Helper()
	e.b.fatal(fmt.Errorf("%s %q: %w", action, e.css, err))
}

func (e Element) click() error { return e.b.run(http.MethodPost, e.path("/click"), nil, nil) }

// Click clicks the element's centre, scrolling it into view first.
func (e Element) Click() {
	e.b.t.Helper()
	if err := e.click(); err != nil {
		e.fail("click", err)
	}
}

// Type sends text as key presses to the element (focusing it first),
// appending to what it holds; the Key constants send special keys.
func (e Element) Type(text string) {
	e.b.t.Helper()
	if err := e.b.run(http.MethodPost, e.path("/value"), map[string]any{"text": text}, nil); err != nil {
		e.fail("type into", err)
	}
}

// Clear empties an input or textarea.
func (e Element) Clear() {
	e.b.t.Helper()
	if err := e.b.run(http.MethodPost, e.path("/clear"), nil, nil); err != nil {
		e.fail("clear", err)
	}
}

func (e Element) text() (string, error) {
	var s string
	err := e.b.run(http.MethodGet, e.path("/text"), nil, &s)
	return s, err
}

// Text returns the element's rendered text (what a person sees; hidden
// descendants excluded).
func (e Element) Text() string {
	e.b.t.Helper()
	s, err := e.text()
	if err != nil {
		e.fail("text of", err)
	}
	return s
}

// Attr returns the named attribute, or "" when the element has none. For
// boolean attributes (checked, disabled) WebDriver answers "true" when set.
func (e Element) Attr(name string) string {
	e.b.t.Helper()
	var s *string
	if err := e.b.run(http.MethodGet, e.path("/attribute/"+url.PathEscape(name)), nil, &s); err != nil {
		e.fail("attribute "+name+" of", err)
	}
	if s == nil {
		return ""
	}
	return *s
}

// Property returns the named DOM property (for example "value" of an input,
// which follows what was typed, unlike the attribute).
func (e Element) Property(name string) any {
	e.b.t.Helper()
	var v any
	if err := e.b.run(http.MethodGet, e.path("/property/"+url.PathEscape(name)), nil, &v); err != nil {
		e.fail("property "+name+" of", err)
	}
	return v
}

// Selected reports whether a checkbox, radio button or option is selected.
func (e Element) Selected() bool {
	e.b.t.Helper()
	var v bool
	if err := e.b.run(http.MethodGet, e.path("/selected"), nil, &v); err != nil {
		e.fail("selected state of", err)
	}
	return v
}

// Enabled reports whether a form control is enabled.
func (e Element) Enabled() bool {
	e.b.t.Helper()
	var v bool
	if err := e.b.run(http.MethodGet, e.path("/enabled"), nil, &v); err != nil {
		e.fail("enabled state of", err)
	}
	return v
}

// Find returns the first descendant matching the CSS selector, failing the
// test when there is none.
func (e Element) Find(css string) Element {
	e.b.t.Helper()
	f, err := e.b.find(e.path(""), css)
	if err != nil {
		e.fail("inside", err)
	}
	return f
}

// FindAll returns every descendant matching the CSS selector.
func (e Element) FindAll(css string) []Element {
	e.b.t.Helper()
	fs, err := e.b.findAll(e.path(""), css)
	if err != nil {
		e.fail("inside", err)
	}
	return fs
}

// Screenshot returns a PNG of just this element.
func (e Element) Screenshot() []byte {
	e.b.t.Helper()
	png, err := e.b.screenshot(context.Background(), e.b.session+e.path("/screenshot"))
	if err != nil {
		e.fail("screenshot of", err)
	}
	return png
}

// SetPermission sets the state ("granted", "denied" or "prompt") of the
// named permission (a Permissions API name such as "notifications") for
// the current page's origin, through the WebDriver extension of the
// Permissions specification ("Set Permission"), which chromedriver
// implements. A headless browser never shows a permission prompt, so a
// test grants what the person would have allowed; the page still asks
// through its own API (Notification.requestPermission), which then
// resolves to the state set here.
func (b *Browser) SetPermission(name, state string) {
	b.t.Helper()
	body := map[string]any{"descriptor": map[string]any{"name": name}, "state": state}
	if err := b.run(http.MethodPost, "/permissions", body, nil); err != nil {
		b.fatal(fmt.Errorf("set permission %s to %s: %w", name, state, err))
	}
}
