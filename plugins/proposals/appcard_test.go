package proposals

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/fluxgit/fluxgit/internal/fluxbridge"
	"github.com/fluxgit/fluxgit/internal/operation"
	"github.com/fluxgit/fluxgit/plugins/sdk"
)

// TestCardView: the ui:// resource is one self-contained HTML document of
// the MCP Apps MIME type that loads nothing, calls no tool and has no
// control: it only reads the card data and links to the gateway.
func TestCardView(t *testing.T) {
	res, err := New().ReadResource(context.Background(), CardUIURI, sdk.Meta{})
	if err != nil {
		t.Fatal(err)
	}
	if res.URI != CardUIURI || res.MimeType != "text/html;profile=mcp-app" || !strings.HasPrefix(res.Text, "<!DOCTYPE html>") {
		t.Fatalf("view %s %s %.40q", res.URI, res.MimeType, res.Text)
	}
	for _, bad := range []string{`(?i)<(button|form|input|select|textarea|link|iframe|img)\b`, `(?i)\s(src|href)\s*=\s*["']`, `https?://`, `tools/call`, `(?i)innerHTML|eval\(|new Function`} {
		if m := regexp.MustCompile(bad).FindString(res.Text); m != "" {
			t.Errorf("the view contains %q (rule %s): it must stay read-only and self-contained", m, bad)
		}
	}
	for _, must := range []string{`"ui/initialize"`, `"ui/notifications/initialized"`, `"ui/notifications/tool-result"`, `"resources/read"`, `"fluxgit://proposals/"`, `"/card"`} {
		if !strings.Contains(res.Text, must) {
			t.Errorf("the view never names %s", must)
		}
	}
}

// cardGateway is a loopback gateway that answers only the card read, with
// the given status and body, and fails the test on any other request.
func cardGateway(t *testing.T, status int, body string) func() (fluxbridge.Address, bool) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || !strings.HasPrefix(r.URL.EscapedPath(), operation.CardViewPath) {
			t.Errorf("card read made %s %s", r.Method, r.URL.Path)
		}
		if b, _ := io.ReadAll(r.Body); len(b) > 0 {
			t.Errorf("card read sent a body: %s", b)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	ap, err := fluxbridge.Normalize(srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	return func() (fluxbridge.Address, bool) { return fluxbridge.Address{AddrPort: ap, Variable: "test"}, true }
}

func TestCardData(t *testing.T) {
	view := `{"previewId":"p-1","operationType":"merge","status":"pending","risk":"medium","refs":[{"ref":"main","commit":"abc"}]}`
	addr := cardGateway(t, http.StatusOK, view)
	p := &Provider{Address: addr}
	res, err := p.ReadResource(context.Background(), CardDataURI("p-1"), sdk.Meta{})
	if err != nil {
		t.Fatal(err)
	}
	if res.URI != "fluxgit://proposals/p-1/card" || res.MimeType != "application/json" {
		t.Fatalf("card data %s %s", res.URI, res.MimeType)
	}
	var got CardData
	if err := json.Unmarshal([]byte(res.Text), &got); err != nil {
		t.Fatal(err)
	}
	a, _ := addr()
	if string(got.Card) != view || got.Decide.URL != "http://"+a.String()+"/ui/p/p-1" || got.Decide.CLI != "fluxgit gateway show p-1" {
		t.Errorf("card data %s", res.Text)
	}
	if strings.Contains(res.Text, "?s=") {
		t.Errorf("the card data carries a secret link: %s", res.Text)
	}
}

func TestCardDataRefusals(t *testing.T) {
	none := func() (fluxbridge.Address, bool) { return fluxbridge.Address{}, false }
	for _, tc := range []struct {
		name string
		uri  string
		addr func() (fluxbridge.Address, bool)
		kind sdk.ErrorKind // "" with notFound: sdk.ErrResourceNotFound
		want string
	}{
		{"another scheme", "fluxgit://other/p-1", none, "", ""},
		{"no id", "fluxgit://proposals//card", none, "", ""},
		{"unsafe id", "fluxgit://proposals/a%2Fb/card", none, sdk.KindNotFound, "1-128 ASCII letters"},
		{"no gateway", CardDataURI("p-1"), none, sdk.KindUnavailable, "no valid gateway address"},
		{"unknown proposal", CardDataURI("p-1"), cardGateway(t, http.StatusNotFound, `{"error":"no proposal"}`), sdk.KindNotFound, "has no proposal p-1"},
		{"gateway failure", CardDataURI("p-1"), cardGateway(t, http.StatusInternalServerError, `{"error":"disk"}`), sdk.KindInternal, "HTTP 500"},
		{"not an object", CardDataURI("p-1"), cardGateway(t, http.StatusOK, `[1]`), sdk.KindInternal, "not a JSON object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := (&Provider{Address: tc.addr}).ReadResource(context.Background(), tc.uri, sdk.Meta{})
			if tc.kind == "" {
				if !errors.Is(err, sdk.ErrResourceNotFound) {
					t.Fatalf("err %v, want ErrResourceNotFound", err)
				}
				return
			}
			var se *sdk.Error
			kind := sdk.KindInternal
			if errors.As(err, &se) {
				kind = se.Kind
			}
			if err == nil || kind != tc.kind || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v (kind %s), want kind %s with %q", err, kind, tc.kind, tc.want)
			}
		})
	}
}

func TestDescribeListsTheCardResources(t *testing.T) {
	d := New().Describe()
	if strings.Join(d.Resources, " ") != CardUIURI+" "+CardDataTemplate {
		t.Errorf("Describe resources %v", d.Resources)
	}
}
