package shiftroster

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/fluxgit/fluxgit/internal/roster"
)

func TestNewReadsEnvironment(t *testing.T) {
	state := realTempDir(t)
	t.Setenv(roster.EnvStateDir, state)
	t.Setenv(roster.EnvWorkspace, "from-env")
	p := New()
	defer p.Close()
	if p.DefaultWorkspace() != "from-env" || p.cfg.StateDir != state {
		t.Fatalf("config %+v", p.cfg)
	}
	t.Setenv(roster.EnvStateDir, "")
	t.Setenv("HOME", "/home/someone")
	dir, err := roster.StateDirFromEnv(os.Getenv)
	if err != nil || dir != "/home/someone/.local/state/shift-mcp-server" {
		t.Fatalf("default state dir %q %v", dir, err)
	}
	t.Setenv(roster.EnvStateDir, "relative/dir")
	dir, err = roster.StateDirFromEnv(os.Getenv)
	if err != nil || !filepath.IsAbs(dir) || !strings.HasSuffix(dir, "relative/dir") {
		t.Fatalf("relative SHIFT_STATE_DIR: %q %v", dir, err)
	}
}

func TestStatusURIs(t *testing.T) {
	for _, tc := range []struct {
		ws, uri string
	}{
		{"webshop", "shift://status?workspace=webshop"},
		{"/home/me/src", "shift://status?workspace=%2Fhome%2Fme%2Fsrc"},
		{"a b", "shift://status?workspace=a%20b"},
		{"a+b&c=d#e", "shift://status?workspace=a%2Bb%26c%3Dd%23e"},
		{"Ünï-._~", "shift://status?workspace=%C3%9Cn%C3%AF-._~"},
		{"100%", "shift://status?workspace=100%25"},
	} {
		if got := QualifiedStatusURI(tc.ws); got != tc.uri {
			t.Errorf("QualifiedStatusURI(%q) = %q, want %q", tc.ws, got, tc.uri)
		}
		ws, def, ok := ParseStatusURI(tc.uri)
		if !ok || def || ws != tc.ws {
			t.Errorf("ParseStatusURI(%q) = %q %v %v", tc.uri, ws, def, ok)
		}
	}
	for _, tc := range []struct {
		uri     string
		ws      string
		def, ok bool
	}{
		{"shift://status", "", true, true},
		{"shift://status?workspace=", "", true, true},
		{"shift://status?workspace=%2fa", "/a", false, true},
		{"shift://status?workspace=a+b", "a b", false, true},
		{"shift://status?workspace=a=b", "a=b", false, true},
		{"shift://status?workspace=a&b=c", "", false, false},
		{"shift://status?workspace=a#x", "", false, false},
		{"shift://status?workspace=%", "", false, false},
		{"shift://status?workspace=%4", "", false, false},
		{"shift://status?workspace=%g1", "", false, false},
		{"shift://status?workspace=%C3", "", false, false},
		{"shift://status?workspace=ü", "", false, false},
		{"shift://status?Workspace=a", "", false, false},
		{"shift://status?", "", false, false},
		{"SHIFT://status", "", false, false},
		{"shift://status?workspace=" + strings.Repeat("x", roster.MaxWorkspaceLen+1), "", false, false},
	} {
		ws, def, ok := ParseStatusURI(tc.uri)
		if ws != tc.ws || def != tc.def || ok != tc.ok {
			t.Errorf("ParseStatusURI(%q) = %q %v %v, want %q %v %v", tc.uri, ws, def, ok, tc.ws, tc.def, tc.ok)
		}
	}
}

func FuzzStatusURIRoundTrip(f *testing.F) {
	for _, s := range []string{"a", "/home/me", "a b+c", "%41", "日本", "\x00", "a&b#c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, ws string) {
		if ws == "" || !utf8.ValidString(ws) || utf8.RuneCountInString(ws) > roster.MaxWorkspaceLen {
			return
		}
		uri := QualifiedStatusURI(ws)
		got, def, ok := ParseStatusURI(uri)
		if !ok || def || got != ws {
			t.Fatalf("round trip of %q via %q: %q %v %v", ws, uri, got, def, ok)
		}
	})
}
