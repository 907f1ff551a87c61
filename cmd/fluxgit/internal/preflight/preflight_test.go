package preflight

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseGitVersion(t *testing.T) {
	tests := []struct {
		out     string
		want    [3]int
		wantErr bool
		old     bool
	}{
		{"git version 2.43.0\n", [3]int{2, 43, 0}, false, false},
		{"git version 2.39.3 (Apple Git-146)", [3]int{2, 39, 3}, false, false},
		{"git version 2.45.1.windows.1", [3]int{2, 45, 1}, false, false},
		{"git version 2.38", [3]int{2, 38, 0}, false, false},
		{"git version 2.37.9", [3]int{2, 37, 9}, false, true},
		{"git version 1.99.0", [3]int{1, 99, 0}, false, true},
		{"hub version 2.14", [3]int{}, true, false},
		{"", [3]int{}, true, false},
	}
	for _, tc := range tests {
		t.Run(tc.out, func(t *testing.T) {
			v, err := ParseGitVersion(tc.out)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if err != nil {
				return
			}
			if v != tc.want {
				t.Fatalf("got %v, want %v", v, tc.want)
			}
			if got := older(v, MinGit); got != tc.old {
				t.Fatalf("older(%v) = %v, want %v", v, got, tc.old)
			}
		})
	}
}

func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestEnvironmentChecks(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name   string
		env    map[string]string
		check  func(Options) Result
		status Status
		want   string
	}{
		{"roots unset", nil, checkRoots, Warn, "is unset"},
		{"roots relative", map[string]string{"FLUXGIT_MCP_ALLOWED_ROOTS": "a/b"}, checkRoots, Fail, "absolute"},
		{"roots empty", map[string]string{"FLUXGIT_MCP_ALLOWED_ROOTS": " "}, checkRoots, Fail, "empty"},
		{"roots ok", map[string]string{"FLUXGIT_MCP_ALLOWED_ROOTS": dir}, checkRoots, OK, ""},
		{"gateway unset", nil, checkGateway, OK, "not configured"},
		{"gateway remote", map[string]string{"FLUXGIT_GATEWAY_ADDR": "10.0.0.1:80"}, checkGateway, Fail, "loopback"},
		{"gateway no port", map[string]string{"FLUXGIT_MCP_HANDSHAKE_ADDR": "127.0.0.1"}, checkGateway, Fail, "port"},
		{"gateway ok", map[string]string{"FLUXGIT_GATEWAY_URL": "http://[::1]:5/"}, checkGateway, OK, "[::1]:5"},
		{"key unset", nil, checkSignKey, OK, "unsigned"},
		{"key empty", map[string]string{"FLUXGIT_MCP_AUDIT_SIGN_KEY": ""}, checkSignKey, Fail, "set but empty"},
		{"config missing", nil, func(o Options) Result { o.ConfigPath = dir + "/none.yaml"; return checkConfig(o) }, Fail, "read config"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.check(Options{LookupEnv: env(tc.env)})
			if r.Status != tc.status || !strings.Contains(r.Detail, tc.want) {
				t.Fatalf("got %s %q, want %s containing %q", r.Status, r.Detail, tc.status, tc.want)
			}
			if (r.Status != OK) != (r.Fix != "") {
				t.Fatalf("fix %q for status %s: every problem needs a fix, and only problems", r.Fix, r.Status)
			}
			if strings.Contains(r.Line(), "\n") {
				t.Fatalf("line %q spans lines", r.Line())
			}
		})
	}
}

func TestRunOrderAndFailed(t *testing.T) {
	rs := Run(context.Background(), Options{LookupEnv: env(map[string]string{"FLUXGIT_MCP_AUDIT_SIGN_KEY": ""})})
	var names []string
	for _, r := range rs {
		names = append(names, r.Name)
	}
	want := []string{CheckConfig, CheckRoots, CheckGit, CheckRunDir, CheckState, CheckRosterDB, CheckSignKey, CheckLedger, CheckGateway, CheckResultShape}
	if strings.Join(names, ",") != strings.Join(want, ",") {
		t.Fatalf("order %v, want %v", names, want)
	}
	if !Failed(rs, true) {
		t.Fatal("an empty signing key is fatal")
	}
	if r, _ := Find(rs, CheckLedger); r.Status != Skip {
		t.Fatalf("ledger %s, want skip while the key is unusable", r.Status)
	}
}

func TestRunDirCheck(t *testing.T) {
	base := t.TempDir()
	private := filepath.Join(base, "private")
	open := filepath.Join(base, "open")
	file := filepath.Join(base, "file")
	link := filepath.Join(base, "link")
	for _, d := range []string{private, open} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(private, link); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		dir    string
		status Status
		want   string
	}{
		{private, OK, private},
		{link, OK, private}, // links above the ledger's directory are resolved
		{filepath.Join(base, "missing"), OK, "created on first use"},
		{open, Fail, "writable by group or others"},
		{file, Fail, "not a directory"},
	}
	for _, tc := range tests {
		t.Run(filepath.Base(tc.dir), func(t *testing.T) {
			t.Setenv("FLUXGIT_RUN_DIR", tc.dir)
			r := checkRunDir()
			if r.Status != tc.status || !strings.Contains(r.Detail, tc.want) {
				t.Fatalf("got %s %q, want %s containing %q", r.Status, r.Detail, tc.status, tc.want)
			}
			entries, _ := os.ReadDir(private)
			if len(entries) != 0 {
				t.Fatalf("the check wrote into %s: %v", private, entries)
			}
		})
	}
}

func TestResultShapeCheck(t *testing.T) {
	for _, tc := range []struct {
		value  string
		set    bool
		status Status
		detail string
	}{
		{status: OK, detail: "lean (the default"},
		{value: "", set: true, status: OK, detail: "lean (the default"},
		{value: "lean", set: true, status: OK, detail: "lean (the default"},
		{value: "reference", set: true, status: OK, detail: "reference ("},
		{value: "refrence", set: true, status: Warn, detail: `FLUXGIT_MCP_RESULT_SHAPE="refrence" is not one of lean, reference; results take the lean shape`},
	} {
		vars := map[string]string{}
		if tc.set {
			vars["FLUXGIT_MCP_RESULT_SHAPE"] = tc.value
		}
		r := checkResultShape(Options{LookupEnv: env(vars)})
		if r.Status != tc.status || !strings.Contains(r.Detail, tc.detail) {
			t.Errorf("%q: %s %q, want %s containing %q", tc.value, r.Status, r.Detail, tc.status, tc.detail)
		}
		if r.Status == Warn && !strings.Contains(r.Fix, "FLUXGIT_MCP_RESULT_SHAPE to reference") {
			t.Errorf("%q: fix %q does not say what to set", tc.value, r.Fix)
		}
	}
}
