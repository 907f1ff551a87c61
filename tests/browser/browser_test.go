package browser

import (
	"bytes"
	"fmt"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// pages are the loopback pages the tests drive. The background colour is
// checked in screenshots, so they prove the page itself was captured.
var pages = map[string]string{
	"/form": `<!doctype html><title>form</title>
<style>body{background:#123456;color:#fff;margin:0}</style>
<form id="f" onsubmit="return false">
  <input name="who" id="who" data-kind="name">
  <label><input type="checkbox" name="ack" id="ack"> acknowledge</label>
  <button id="go" type="button" disabled>Greet</button>
</form>
<p id="out" data-state="waiting">waiting</p>
<ul id="list"><li class="item">one</li><li class="item">two</li><li class="item">three</li></ul>
<div id="late-host"></div>
<p id="going">this goes away</p>
<script>
  const who = document.getElementById('who');
  const go = document.getElementById('go');
  who.addEventListener('input', () => { go.disabled = who.value === ''; });
  go.addEventListener('click', () => {
    // The answer arrives later than the click returns, as a live page's
    // update would, so the test has to wait for it.
    setTimeout(() => {
      const out = document.getElementById('out');
      out.textContent = 'Hello, ' + who.value + '!';
      out.dataset.state = 'done';
    }, 300);
  });
  setTimeout(() => {
    const b = document.createElement('button');
    b.id = 'late'; b.textContent = 'late';
    b.addEventListener('click', () => { b.textContent = 'clicked'; });
    document.getElementById('late-host').appendChild(b);
  }, 400);
  setTimeout(() => { document.getElementById('going').remove(); }, 400);
</script>`,
	"/console": `<!doctype html><title>console</title><script>console.error('console-marker-7f3a');</script>`,
}

// serve starts a loopback server with pages and /cookie, which sets an
// HttpOnly SameSite=Strict cookie the way the approval page's session
// cookie is set.
func serve(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	for p, body := range pages {
		mux.HandleFunc("GET "+p, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, body)
		})
	}
	mux.HandleFunc("GET /cookie", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "fluxgit_test", Value: "v-123", Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
		http.SetCookie(w, &http.Cookie{Name: "visible", Value: "yes", Path: "/"})
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!doctype html><title>cookie</title><p id="c">cookie set</p>`)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// fakeTB records whether require skipped or failed; both stop the goroutine
// as the real ones do.
type fakeTB struct {
	testing.TB
	skipped, failed bool
	msg             string
}

func (f *fakeTB) Helper() {}
func (f *fakeTB) Skipf(format string, a ...any) {
	f.skipped, f.msg = true, fmt.Sprintf(format, a...)
	runtime.Goexit()
}
func (f *fakeTB) Fatal(a ...any) {
	f.failed, f.msg = true, fmt.Sprint(a...)
	runtime.Goexit()
}
func (f *fakeTB) Fatalf(format string, a ...any) {
	f.failed, f.msg = true, fmt.Sprintf(format, a...)
	runtime.Goexit()
}

func TestAvailableSaysWhatIsMissing(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "exe")
	plain := filepath.Join(dir, "plain")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(plain, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing")
	tests := []struct {
		name             string
		chromium, driver string
		want             []string // substrings of the error; nil: no error
	}{
		{"both present", exe, exe, nil},
		{"chromium missing", missing, exe, []string{missing + " not found", EnvChromium, InstallCommand}},
		{"driver missing", exe, missing, []string{missing + " not found", EnvChromedriver, InstallCommand}},
		{"not executable", plain, exe, []string{plain + " is not an executable file", InstallCommand}},
		{"a directory", exe, dir, []string{dir + " is not an executable file"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(EnvChromium, tc.chromium)
			t.Setenv(EnvChromedriver, tc.driver)
			err := Available()
			if tc.want == nil {
				if err != nil {
					t.Fatalf("Available() = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatal("Available() = nil, want an error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Available() = %q, want it to mention %q", err, w)
				}
			}
		})
	}
}

func TestStartWithoutBrowserSkipsUnlessCI(t *testing.T) {
	tests := []struct {
		name        string
		ci          string
		wantSkipped bool
		wantFailed  bool
	}{
		{"CI unset", "", true, false},
		{"CI set", "true", false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(EnvChromium, filepath.Join(t.TempDir(), "no-chromium"))
			t.Setenv("CI", tc.ci)
			f := &fakeTB{}
			done := make(chan struct{})
			go func() { defer close(done); Start(f) }()
			<-done
			if f.skipped != tc.wantSkipped || f.failed != tc.wantFailed {
				t.Fatalf("skipped=%v failed=%v (%q), want skipped=%v failed=%v", f.skipped, f.failed, f.msg, tc.wantSkipped, tc.wantFailed)
			}
			if !strings.Contains(f.msg, "no-chromium") || !strings.Contains(f.msg, InstallCommand) {
				t.Errorf("message %q should name the missing binary and %q", f.msg, InstallCommand)
			}
		})
	}
}

// TestBrowser drives one browser session through every operation the
// approval-page tests use.
func TestBrowser(t *testing.T) {
	srv := serve(t)
	b := Start(t)
	t.Logf("browser session ready in %v", b.Startup)

	t.Run("type, click, wait for text", func(t *testing.T) {
		b := b.For(t)
		tests := []struct{ typed, want string }{
			{"Ada", "Hello, Ada!"},
			{"名前 ünïcödé", "Hello, 名前 ünïcödé!"},
			{"<b>tag</b>", "Hello, <b>tag</b>!"}, // set as text, so the tag shows literally
		}
		for _, tc := range tests {
			b.Navigate(srv.URL + "/form")
			if got := b.Find("#out").Attr("data-state"); got != "waiting" {
				t.Fatalf("data-state before click = %q, want waiting", got)
			}
			if b.Find("#go").Enabled() {
				t.Fatal("button enabled before anything was typed")
			}
			in := b.Find("#who")
			in.Type(tc.typed)
			if got := in.Property("value"); got != tc.typed {
				t.Errorf("input value = %q, want %q", got, tc.typed)
			}
			b.Find("#go").Click()
			out := b.WaitText("#out", tc.want, 0)
			if got := out.Text(); got != tc.want {
				t.Errorf("text = %q, want %q", got, tc.want)
			}
			if got := out.Attr("data-state"); got != "done" {
				t.Errorf("data-state after click = %q, want done", got)
			}
		}
	})

	t.Run("clear and special keys", func(t *testing.T) {
		b := b.For(t)
		b.Navigate(srv.URL + "/form")
		in := b.Find("#who")
		in.Type("abc" + KeyBackspace)
		if got := in.Property("value"); got != "ab" {
			t.Errorf("after backspace value = %q, want ab", got)
		}
		in.Clear()
		if got := in.Property("value"); got != "" {
			t.Errorf("after Clear value = %q, want empty", got)
		}
	})

	t.Run("attributes", func(t *testing.T) {
		b := b.For(t)
		b.Navigate(srv.URL + "/form")
		tests := []struct{ css, name, want string }{
			{"#who", "name", "who"},
			{"#who", "data-kind", "name"},
			{"#who", "placeholder", ""}, // absent
			{"#go", "type", "button"},
			{"#go", "disabled", "true"},
			{"#ack", "checked", ""},
		}
		for _, tc := range tests {
			if got := b.Find(tc.css).Attr(tc.name); got != tc.want {
				t.Errorf("%s[%s] = %q, want %q", tc.css, tc.name, got, tc.want)
			}
		}
	})

	t.Run("checkbox", func(t *testing.T) {
		b := b.For(t)
		b.Navigate(srv.URL + "/form")
		box := b.Find("#ack")
		if box.Selected() {
			t.Fatal("checkbox selected before click")
		}
		box.Click()
		if !box.Selected() {
			t.Error("checkbox not selected after click")
		}
	})

	t.Run("find within and find all", func(t *testing.T) {
		b := b.For(t)
		b.Navigate(srv.URL + "/form")
		items := b.Find("#list").FindAll("li.item")
		var texts []string
		for _, it := range items {
			texts = append(texts, it.Text())
		}
		if got := strings.Join(texts, ","); got != "one,two,three" {
			t.Errorf("items = %q, want one,two,three", got)
		}
		if got := b.Find("#f").Find("button").Attr("id"); got != "go" {
			t.Errorf("button in form has id %q, want go", got)
		}
		if n := len(b.FindAll(".no-such-class")); n != 0 {
			t.Errorf("FindAll of an absent selector returned %d elements", n)
		}
	})

	t.Run("waits for late and vanishing elements", func(t *testing.T) {
		b := b.For(t)
		b.Navigate(srv.URL + "/form")
		b.WaitClick("#late", 0)
		b.WaitText("#late", "clicked", 0)
		b.WaitGone("#going", 0)
		if n := len(b.FindAll("#going")); n != 0 {
			t.Errorf("#going still present after WaitGone (%d)", n)
		}
	})

	t.Run("script", func(t *testing.T) {
		b := b.For(t)
		b.Navigate(srv.URL + "/form")
		if got := b.Script("return arguments[0] + arguments[1]", 40, 2); got != float64(42) {
			t.Errorf("script sum = %v (%T), want 42", got, got)
		}
		el, ok := b.Script("return document.getElementById('go')").(Element)
		if !ok {
			t.Fatal("a DOM element returned by a script did not come back as an Element")
		}
		if got := b.Script("return arguments[0].id", el); got != "go" {
			t.Errorf("element passed to a script has id %v, want go", got)
		}
		if got := b.Title(); got != "form" {
			t.Errorf("title = %q, want form", got)
		}
		if got := b.URL(); got != srv.URL+"/form" {
			t.Errorf("url = %q, want %q", got, srv.URL+"/form")
		}
		if !strings.Contains(b.Source(), `id="late-host"`) {
			t.Error("page source lacks #late-host")
		}
	})

	t.Run("cookies", func(t *testing.T) {
		b := b.For(t)
		b.Navigate(srv.URL + "/cookie")
		c, ok := b.Cookie("fluxgit_test")
		if !ok {
			t.Fatal("cookie fluxgit_test not found")
		}
		want := Cookie{Name: "fluxgit_test", Value: "v-123", Path: "/", HTTPOnly: true, SameSite: "Strict"}
		if c.Name != want.Name || c.Value != want.Value || c.Path != want.Path || c.HTTPOnly != want.HTTPOnly || c.SameSite != want.SameSite {
			t.Errorf("cookie = %+v, want %+v", c, want)
		}
		if _, ok := b.Cookie("never-set"); ok {
			t.Error("Cookie reported a cookie that was never set")
		}
		// The page's own script must not see the HttpOnly one.
		if js := b.Script("return document.cookie").(string); strings.Contains(js, "fluxgit_test") || !strings.Contains(js, "visible=yes") {
			t.Errorf("document.cookie = %q, want visible=yes without fluxgit_test", js)
		}
		if n := len(b.Cookies()); n != 2 {
			t.Errorf("Cookies() returned %d cookies, want 2", n)
		}
	})

	t.Run("screenshot", func(t *testing.T) {
		b := b.For(t)
		b.Navigate(srv.URL + "/form")
		shots := []struct {
			name string
			png  func() []byte
		}{
			{"page", b.Screenshot},
			{"element", b.Find("#out").Screenshot},
			{"saved", func() []byte {
				p := filepath.Join(t.TempDir(), "sub", "shot.png")
				b.SaveScreenshot(p)
				data, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				return data
			}},
		}
		for _, s := range shots {
			img, err := png.Decode(bytes.NewReader(s.png()))
			if err != nil {
				t.Fatalf("%s screenshot is not a PNG: %v", s.name, err)
			}
			r := img.Bounds()
			if r.Dx() <= 0 || r.Dy() <= 0 {
				t.Fatalf("%s screenshot is %dx%d", s.name, r.Dx(), r.Dy())
			}
			t.Logf("%s screenshot %dx%d", s.name, r.Dx(), r.Dy())
			if s.name == "element" {
				continue
			}
			// Bottom centre: below the content, so the page background.
			cr, cg, cb, _ := img.At(r.Min.X+r.Dx()/2, r.Max.Y-10).RGBA()
			if !near(cr>>8, 0x12) || !near(cg>>8, 0x34) || !near(cb>>8, 0x56) {
				t.Errorf("%s screenshot pixel = #%02x%02x%02x, want the page background #123456", s.name, cr>>8, cg>>8, cb>>8)
			}
		}
	})

	t.Run("console log", func(t *testing.T) {
		b := b.For(t)
		b.Logs() // drop what earlier pages logged
		b.Navigate(srv.URL + "/console")
		// Entries reach chromedriver asynchronously, so poll.
		var seen []LogEntry
		deadline := time.Now().Add(DefaultWait)
		for {
			seen = append(seen, b.Logs()...)
			i := slices.IndexFunc(seen, func(e LogEntry) bool { return strings.Contains(e.Message, "console-marker-7f3a") })
			if i >= 0 {
				if seen[i].Level != "SEVERE" {
					t.Errorf("console.error logged at level %q, want SEVERE", seen[i].Level)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("console.error message not in Logs() after %v; got %+v", DefaultWait, seen)
			}
			time.Sleep(pollInterval)
		}
	})

	t.Run("failures go to the test given to For", func(t *testing.T) {
		b := b.For(t)
		b.Navigate(srv.URL + "/form")
		tests := []struct {
			name string
			act  func(*Browser)
			want []string
		}{
			{"find", func(b *Browser) { b.Find("#absent") }, []string{`find "#absent"`, "no such element"}},
			{"wait", func(b *Browser) { b.WaitFor("#absent", 300*time.Millisecond) }, []string{`element "#absent"`, "not reached within 300ms", "no such element"}},
			{"wait text", func(b *Browser) { b.WaitText("#out", "never", 300*time.Millisecond) }, []string{`text "never"`, `last seen: ["waiting"]`}},
			{"bad selector", func(b *Browser) { b.WaitFor("[[[", 0) }, []string{"invalid selector"}},
		}
		for _, tc := range tests {
			f := &fakeTB{}
			done := make(chan struct{})
			go func() { defer close(done); tc.act(b.For(f)) }()
			<-done
			if !f.failed {
				t.Errorf("%s: the test given to For was not failed", tc.name)
				continue
			}
			for _, w := range tc.want {
				if !strings.Contains(f.msg, w) {
					t.Errorf("%s: failure %q should contain %q", tc.name, f.msg, w)
				}
			}
		}
	})

	t.Run("errors carry the webdriver code and message", func(t *testing.T) {
		b := b.For(t)
		b.Navigate(srv.URL + "/form")
		tests := []struct {
			css, code string
		}{
			{"#does-not-exist", "no such element"},
			{"[[[", "invalid selector"},
		}
		for _, tc := range tests {
			_, err := b.find("", tc.css)
			if !IsCode(err, tc.code) {
				t.Fatalf("find %q: err = %v, want code %q", tc.css, err, tc.code)
			}
			msg := err.Error()
			if !strings.Contains(msg, tc.code+": ") || !strings.Contains(msg, "POST /element") || strings.Contains(msg, "/session/") {
				t.Errorf("error %q should read 'POST /element: %s: <driver message>'", msg, tc.code)
			}
		}
	})
}

func near(got uint32, want uint32) bool {
	d := int(got) - int(want)
	return d >= -3 && d <= 3
}

// TestCleanupEndsEveryProcess starts browsers in subtests and checks that
// once each subtest is over, nothing of chromedriver or chromium is left:
// not in its process group, and nothing that names its temporary directory.
// It also reports how long starting a session takes on this machine.
func TestCleanupEndsEveryProcess(t *testing.T) {
	srv := serve(t)
	for i := range 2 {
		var pgid int
		var dir string
		var took time.Duration
		t.Run(fmt.Sprint("session ", i), func(t *testing.T) {
			b := Start(t)
			pgid, dir, took = b.pgid, b.dir, b.Startup
			b.Navigate(srv.URL + "/form")
			b.WaitFor("#who", 0)
			if len(survivors(pgid, dir)) < 2 {
				t.Fatalf("expected chromedriver and chromium processes while the session is open, found %v", survivors(pgid, dir))
			}
		})
		if t.Failed() {
			return
		}
		if left := survivors(pgid, dir); len(left) > 0 {
			t.Errorf("session %d: processes alive after cleanup: %v", i, left)
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("session %d: temporary directory %s not removed (%v)", i, dir, err)
		}
		t.Logf("session %d: Start took %v", i, took)
	}
}
