package credpaths

import (
	"os"
	"path/filepath"
	"testing"
)

func TestProtectedFromEnvironment(t *testing.T) {
	base, _ := filepath.EvalSymlinks(t.TempDir())
	run := filepath.Join(base, "run")
	host := []Path{{Label: "host configuration", Path: filepath.Join(base, "cfg.yaml")}}
	env := map[string]string{
		EnvRunDir:      run,
		EnvAgentPolicy: filepath.Join(base, "policy.json"),
		EnvList:        Export(host),
		EnvSecretDir:   filepath.Join(base, "secret"),
	}
	list := protected(func(k string) string { return env[k] })
	for _, tc := range []struct {
		path, label string
	}{
		{filepath.Join(run, "gateway", "session.json"), "gateway session and journal"},
		{filepath.Join(run, "gateway", "journal.db"), "gateway session and journal"},
		{filepath.Join(base, "secret", "session.json"), "gateway session secret"},
		{filepath.Join(base, "policy.json"), "agent policy"},
		{filepath.Join(base, "cfg.yaml"), "host configuration"},
		{filepath.Join(base, "RUN", "Gateway", "session.json"), "gateway session and journal"},
		{filepath.Join(run, "audit", "mcp.jsonl"), ""},
		{filepath.Join(run, "presence", "mcp", "1.json"), ""},
		{filepath.Join(base, "policy.json.bak"), ""},
	} {
		e, ok := Lookup(list, tc.path)
		if got := map[bool]string{true: e.Label}[ok]; got != tc.label {
			t.Errorf("Lookup(%s) = %q, want %q", tc.path, got, tc.label)
		}
	}
}

func TestDecodeListIgnoresJunk(t *testing.T) {
	for _, v := range []string{"", "not json", `[{"label":"x","path":"relative"}]`} {
		if got := decodeList(v); len(got) != 0 {
			t.Errorf("decodeList(%q) = %v, want nothing", v, got)
		}
	}
}

// Opened recognises a protected file by identity: a hard link elsewhere
// is the secret, a copy is not.
func TestOpenedByIdentity(t *testing.T) {
	base, _ := filepath.EvalSymlinks(t.TempDir())
	dir := filepath.Join(base, "secret")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(dir, "session.json")
	if err := os.WriteFile(secret, []byte("s"), 0o600); err != nil {
		t.Fatal(err)
	}
	link, cp := filepath.Join(base, "link"), filepath.Join(base, "copy")
	if err := os.Link(secret, link); err != nil {
		t.Skip("no hard links here:", err)
	}
	if err := os.WriteFile(cp, []byte("s"), 0o600); err != nil {
		t.Fatal(err)
	}
	list := []Path{{Label: "gateway session secret", Path: dir, Dir: true}}
	for _, tc := range []struct {
		path string
		want bool
	}{{link, true}, {secret, true}, {cp, false}} {
		fi, err := os.Stat(tc.path)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := Opened(list, fi); ok != tc.want {
			t.Errorf("Opened(%s) = %v, want %v", tc.path, ok, tc.want)
		}
	}
}
