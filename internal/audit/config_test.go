package audit

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// clearEnv unsets every audit variable for the test.
func clearEnv(t *testing.T) {
	for _, k := range []string{EnvLog, EnvDisabled, EnvSignKey, EnvRunDir, EnvMinAge, EnvMaxBytes, EnvRetainBytes, EnvRetainAge, EnvSegmentBytes} {
		t.Setenv(k, "") // registers restoration
		os.Unsetenv(k)
	}
}

func writeKey(t *testing.T, data []byte, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "key.pem")
	if err := os.WriteFile(p, data, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestFromEnvPaths(t *testing.T) {
	clearEnv(t)
	run := t.TempDir()
	t.Setenv(EnvRunDir, run)
	l, err := FromEnv(nil)
	if err != nil || l == nil {
		t.Fatalf("default: %v %v", l, err)
	}
	if want := filepath.Join(resolveExisting(run), "audit", "mcp.jsonl"); l.Path() != want {
		t.Fatalf("path %s, want %s", l.Path(), want)
	}
	if l.Signed() {
		t.Fatal("signed without a key")
	}

	custom := filepath.Join(t.TempDir(), "logs", "a.jsonl")
	t.Setenv(EnvLog, custom)
	if l, err = FromEnv(nil); err != nil || l.Path() != filepath.Join(resolveExisting(filepath.Dir(filepath.Dir(custom))), "logs", "a.jsonl") {
		t.Fatalf("custom: %v %v", l, err)
	}

	t.Setenv(EnvLog, " ")
	var ce *ConfigError
	if _, err = FromEnv(nil); !errors.As(err, &ce) || !strings.Contains(err.Error(), EnvLog+" is set but empty") {
		t.Fatalf("empty log path: %v", err)
	}
	t.Setenv(EnvLog, t.TempDir())
	if _, err = FromEnv(nil); !errors.As(err, &ce) {
		t.Fatalf("directory as log path: %v", err)
	}

	// Existing files that appends would refuse stop start-up.
	shared := filepath.Join(t.TempDir(), "shared")
	os.Mkdir(shared, 0o755)
	os.Chmod(shared, 0o755)
	t.Setenv(EnvLog, filepath.Join(shared, "mcp.jsonl"))
	if _, err = FromEnv(nil); !errors.As(err, &ce) || !strings.Contains(err.Error(), "group/world accessible") {
		t.Fatalf("shared directory: %v", err)
	}
	private := filepath.Join(t.TempDir(), "private")
	os.Mkdir(private, 0o700)
	os.Symlink(filepath.Join(t.TempDir(), "target"), filepath.Join(private, "mcp.jsonl"))
	t.Setenv(EnvLog, filepath.Join(private, "mcp.jsonl"))
	if _, err = FromEnv(nil); !errors.As(err, &ce) || !strings.Contains(err.Error(), "symbolic link") {
		t.Fatalf("symlinked ledger: %v", err)
	}
	os.WriteFile(filepath.Join(private, "other.jsonl"), nil, 0o644)
	t.Setenv(EnvLog, filepath.Join(private, "other.jsonl"))
	if _, err = FromEnv(nil); !errors.As(err, &ce) || !strings.Contains(err.Error(), "0600") {
		t.Fatalf("readable ledger: %v", err)
	}

	t.Setenv(EnvDisabled, "") // any value, even empty, disables
	if l, err = FromEnv(nil); l != nil || err != nil {
		t.Fatalf("disabled: %v %v", l, err)
	}
}

func TestFromEnvSignKey(t *testing.T) {
	s := testSigner(9)
	good := MarshalPrivateKey(s.key)
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ecDER, _ := x509.MarshalPKCS8PrivateKey(ec)
	ecPEM := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: ecDER})

	for _, tc := range []struct {
		name string
		path func(t *testing.T) string
		want string // "" = accepted
	}{
		{"valid key", func(t *testing.T) string { return writeKey(t, good, 0o600) }, ""},
		{"valid key, owner read-only", func(t *testing.T) string { return writeKey(t, good, 0o400) }, ""},
		{"empty variable", func(t *testing.T) string { return "" }, "set but empty"},
		{"missing file", func(t *testing.T) string { return filepath.Join(t.TempDir(), "none.pem") }, "no such file"},
		{"group readable", func(t *testing.T) string { return writeKey(t, good, 0o640) }, "group/world accessible"},
		{"world readable", func(t *testing.T) string { return writeKey(t, good, 0o604) }, "group/world accessible"},
		{"empty file", func(t *testing.T) string { return writeKey(t, nil, 0o600) }, "is empty"},
		{"oversized", func(t *testing.T) string {
			return writeKey(t, append(good, make([]byte, MaxKeyFileBytes)...), 0o600)
		}, "larger than"},
		{"directory", func(t *testing.T) string { d := t.TempDir(); os.Chmod(d, 0o700); return d }, "not a regular file"},
		{"not PEM", func(t *testing.T) string { return writeKey(t, []byte("hello"), 0o600) }, "no PEM block"},
		{"not UTF-8", func(t *testing.T) string { return writeKey(t, []byte{0xff, 0xfe, 0x00}, 0o600) }, "not UTF-8"},
		{"public key instead", func(t *testing.T) string { return writeKey(t, MarshalPublicKey(s.Public()), 0o600) }, `"PUBLIC KEY"`},
		{"garbage DER", func(t *testing.T) string {
			return writeKey(t, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: []byte{1, 2, 3}}), 0o600)
		}, "not a valid PKCS#8"},
		{"ECDSA key", func(t *testing.T) string { return writeKey(t, ecPEM, 0o600) }, "not an Ed25519 key"},
		{"two PEM blocks", func(t *testing.T) string { return writeKey(t, append(append([]byte{}, good...), good...), 0o600) }, "more than one"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, disabled := range []bool{false, true} { // checked even when auditing is off
				clearEnv(t)
				t.Setenv(EnvRunDir, t.TempDir())
				t.Setenv(EnvSignKey, tc.path(t))
				if disabled {
					t.Setenv(EnvDisabled, "1")
				}
				l, err := FromEnv(nil)
				if tc.want == "" {
					if err != nil {
						t.Fatalf("rejected: %v", err)
					}
					if !disabled && (!l.Signed() || l.signer.KeyID() != s.KeyID()) {
						t.Fatal("ledger not signing with the key")
					}
					continue
				}
				var ce *ConfigError
				if !errors.As(err, &ce) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), EnvSignKey) {
					t.Fatalf("disabled=%v: err %v, want a ConfigError mentioning %q", disabled, err, tc.want)
				}
				if strings.Contains(err.Error(), "BEGIN") {
					t.Fatal("error message contains key material")
				}
			}
		})
	}
	if os.Geteuid() != 0 { // root reads anything
		t.Run("unreadable", func(t *testing.T) {
			clearEnv(t)
			t.Setenv(EnvSignKey, writeKey(t, good, 0o000))
			if _, err := FromEnv(nil); err == nil || !strings.Contains(err.Error(), "cannot be opened") {
				t.Fatalf("%v", err)
			}
		})
	}
}

func TestLoadPublicKey(t *testing.T) {
	s := testSigner(10)
	p := writeKey(t, MarshalPublicKey(s.Public()), 0o644) // public keys need not be private
	k, err := LoadPublicKey(p)
	if err != nil || KeyID(k) != s.KeyID() {
		t.Fatalf("%v", err)
	}
	if _, err := LoadPublicKey(writeKey(t, MarshalPrivateKey(s.key), 0o600)); err == nil {
		t.Fatal("a private key is not a public key")
	}
}

func TestRunDir(t *testing.T) {
	clearEnv(t)
	t.Setenv(EnvRunDir, "/srv/fluxgit/run")
	if d, _ := RunDir(); d != "/srv/fluxgit/run" {
		t.Fatalf("explicit: %s", d)
	}
	os.Unsetenv(EnvRunDir)
	t.Setenv("HOME", "/home/ada")
	t.Setenv("XDG_DATA_HOME", "")
	d, err := RunDir()
	if err != nil {
		t.Fatal(err)
	}
	switch runtime.GOOS {
	case "darwin":
		if d != "/home/ada/Library/Application Support/FluxGit/run" {
			t.Fatal(d)
		}
	case "windows":
	default:
		if d != "/home/ada/.local/share/FluxGit/run" {
			t.Fatal(d)
		}
		t.Setenv("XDG_DATA_HOME", "/data")
		if d, _ := RunDir(); d != "/data/FluxGit/run" {
			t.Fatal(d)
		}
	}
}

// The retention floor and the size ceiling come from the environment; a
// value that does not parse stops start-up instead of silently keeping a
// default.
func TestFromEnvRetention(t *testing.T) {
	for _, tc := range []struct {
		minAge, maxBytes *string
		wantAge          time.Duration
		wantMax          int64
		wantErr          string
	}{
		{nil, nil, DefaultMinAge, DefaultMaxBytes, ""},
		{ptr("0"), nil, 0, DefaultMaxBytes, ""},
		{ptr("30d"), ptr("0"), 30 * 24 * time.Hour, 0, ""},
		{ptr(" 720h "), ptr("1048576"), 720 * time.Hour, 1 << 20, ""},
		{ptr("-1h"), nil, 0, 0, EnvMinAge},
		{ptr("1.5d"), nil, 0, 0, EnvMinAge},
		{ptr("forever"), nil, 0, 0, EnvMinAge},
		{ptr(""), nil, 0, 0, EnvMinAge},
		{nil, ptr("1GiB"), 0, 0, EnvMaxBytes},
		{nil, ptr("-5"), 0, 0, EnvMaxBytes},
	} {
		clearEnv(t)
		t.Setenv(EnvRunDir, t.TempDir())
		if tc.minAge != nil {
			t.Setenv(EnvMinAge, *tc.minAge)
		}
		if tc.maxBytes != nil {
			t.Setenv(EnvMaxBytes, *tc.maxBytes)
		}
		l, err := FromEnv(nil)
		if tc.wantErr != "" {
			var ce *ConfigError
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%v/%v: want a config error naming %s, got %v", tc.minAge, tc.maxBytes, tc.wantErr, err)
			}
			continue
		}
		if err != nil || l.lim.minAge != tc.wantAge || l.lim.maxBytes != tc.wantMax {
			t.Errorf("%v/%v: age %v max %d err %v", tc.minAge, tc.maxBytes, l.lim.minAge, l.lim.maxBytes, err)
		}
	}
}

func ptr(s string) *string { return &s }

// The retention policy's variables: defaults, valid values, and every
// bad value a *ConfigError naming the variable to change — even with
// auditing disabled.
func TestRetentionFromEnvPolicy(t *testing.T) {
	def := DefaultRetention()
	for _, tc := range []struct {
		name    string
		env     map[string]string
		want    func(r Retention) bool
		wantErr []string // substrings of the error
	}{
		{"defaults", nil, func(r Retention) bool { return r == def && r.RetainBytes == 20971520 && r.RetainAge == 0 }, nil},
		{"size off", map[string]string{EnvRetainBytes: "0"}, func(r Retention) bool { return r.RetainBytes == 0 }, nil},
		{"size and segments", map[string]string{EnvRetainBytes: " 1048576 ", EnvSegmentBytes: "4096"},
			func(r Retention) bool { return r.RetainBytes == 1<<20 && r.SegmentBytes == 4096 }, nil},
		{"age above the floor", map[string]string{EnvRetainAge: "90d"}, func(r Retention) bool { return r.RetainAge == 90*24*time.Hour }, nil},
		{"age with the floor off", map[string]string{EnvRetainAge: "1s", EnvMinAge: "0"},
			func(r Retention) bool { return r.RetainAge == time.Second && r.MinAge == 0 }, nil},
		{"age equal to the floor", map[string]string{EnvRetainAge: "720h"}, func(r Retention) bool { return r.RetainAge == r.MinAge }, nil},
		{"age below the floor", map[string]string{EnvRetainAge: "7d"}, nil,
			[]string{EnvRetainAge + " (7d) is below " + EnvMinAge + " (30d)", "raise " + EnvRetainAge + " to at least 30d", "or lower " + EnvMinAge}},
		{"age not an age", map[string]string{EnvRetainAge: "forever"}, nil, []string{EnvRetainAge, "30d"}},
		{"negative size", map[string]string{EnvRetainBytes: "-1"}, nil, []string{EnvRetainBytes, "0 turns the size rule off"}},
		{"size with a unit", map[string]string{EnvRetainBytes: "20MiB"}, nil, []string{EnvRetainBytes, "20971520"}},
		{"segment too small", map[string]string{EnvSegmentBytes: "100"}, nil, []string{EnvSegmentBytes, "between 4096"}},
		{"segment too large", map[string]string{EnvSegmentBytes: "2147483648"}, nil, []string{EnvSegmentBytes, "1073741824"}},
		{"checked when disabled", map[string]string{EnvSegmentBytes: "x", EnvDisabled: "1"}, nil, []string{EnvSegmentBytes}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clearEnv(t)
			t.Setenv(EnvRunDir, t.TempDir())
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			l, err := FromEnv(nil)
			if tc.wantErr != nil {
				var ce *ConfigError
				if !errors.As(err, &ce) {
					t.Fatalf("want a *ConfigError, got %v", err)
				}
				for _, w := range tc.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q lacks %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tc.want(l.Policy()) {
				t.Fatalf("policy %+v", l.Policy())
			}
		})
	}
}
