package logging

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
)

func TestParseLevel(t *testing.T) {
	cases := []struct {
		in   string
		want hclog.Level
		ok   bool
	}{
		{"debug", hclog.Debug, true},
		{"info", hclog.Info, true},
		{"notice", hclog.Info, true},
		{"warning", hclog.Warn, true},
		{"error", hclog.Error, true},
		{"critical", hclog.Error, true},
		{"alert", hclog.Error, true},
		{"emergency", hclog.Error, true},
		{"trace", hclog.Trace, true},
		{"warn", hclog.Warn, true},
		{" WARNING ", hclog.Warn, true},
		{"verbose", hclog.NoLevel, false},
		{"", hclog.NoLevel, false},
		{"off", hclog.NoLevel, false},
	}
	for _, c := range cases {
		got, err := ParseLevel(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("ParseLevel(%q) = %v, %v; want %v, ok=%v", c.in, got, err, c.want, c.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "notice") {
			t.Errorf("ParseLevel(%q) error %q does not list the valid levels", c.in, err)
		}
	}
}

func TestResolveLevel(t *testing.T) {
	cases := []struct {
		name    string
		flag    string
		flagSet bool
		env     string
		want    hclog.Level
		errHas  string
	}{
		{"default", "info", false, "", hclog.Info, ""},
		{"env", "info", false, "debug", hclog.Debug, ""},
		{"flag wins", "error", true, "debug", hclog.Error, ""},
		{"bad env", "info", false, "loud", hclog.NoLevel, EnvLevel},
		{"bad flag", "loud", true, "debug", hclog.NoLevel, "--log-level"},
		{"bad env ignored when flag set", "warning", true, "loud", hclog.Warn, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ResolveLevel(c.flag, c.flagSet, c.env)
			if c.errHas != "" {
				if err == nil || !strings.Contains(err.Error(), c.errHas) {
					t.Fatalf("err = %v, want one naming %s", err, c.errHas)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("got %v, %v; want %v", got, err, c.want)
			}
		})
	}
}

func TestRotatingFile(t *testing.T) {
	cases := []struct {
		name  string
		keep  int
		lines int
		// files present afterwards, and the line the active file starts with
		want []string
	}{
		{"keep two", 2, 7, []string{FileName, FileName + ".1", FileName + ".2"}},
		{"keep none", 0, 7, []string{FileName}},
		{"no rotation needed", 3, 2, []string{FileName}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "logs") // created on open
			// Each line is 10 bytes; 25 bytes hold two lines per file.
			r, err := OpenRotating(dir, 25, c.keep)
			if err != nil {
				t.Fatal(err)
			}
			for i := range c.lines {
				if _, err := r.Write([]byte("line " + string(rune('0'+i)) + "...\n")); err != nil {
					t.Fatal(err)
				}
			}
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
			ents, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range ents {
				got = append(got, e.Name())
			}
			if strings.Join(got, ",") != strings.Join(c.want, ",") {
				t.Fatalf("files = %v, want %v", got, c.want)
			}
			for _, name := range got {
				b, _ := os.ReadFile(filepath.Join(dir, name))
				if len(b) > 25 || len(b)%10 != 0 {
					t.Errorf("%s holds %d bytes: a line was split or the limit ignored", name, len(b))
				}
			}
			// The newest line is always in the active file.
			b, _ := os.ReadFile(filepath.Join(dir, FileName))
			last := "line " + string(rune('0'+c.lines-1)) + "...\n"
			if !strings.HasSuffix(string(b), last) {
				t.Errorf("active file %q does not end with the newest line", b)
			}
			if c.keep == 2 {
				// .1 holds the pair before the active file; older pairs fell off.
				b1, _ := os.ReadFile(filepath.Join(dir, FileName+".1"))
				if string(b1) != "line 4...\nline 5...\n" {
					t.Errorf("%s.1 = %q", FileName, b1)
				}
			}
		})
	}
}

func TestOpenRotatingRejects(t *testing.T) {
	cases := []struct {
		name   string
		dir    string
		max    int64
		keep   int
		errHas string
	}{
		{"relative", "logs", 10, 1, "absolute"},
		{"zero size", t.TempDir(), 0, 1, "positive"},
		{"negative keep", t.TempDir(), 10, -1, "negative"},
	}
	for _, c := range cases {
		if _, err := OpenRotating(c.dir, c.max, c.keep); err == nil || !strings.Contains(err.Error(), c.errHas) {
			t.Errorf("%s: err = %v, want %q", c.name, err, c.errHas)
		}
	}
}

func TestRotationFromEnv(t *testing.T) {
	cases := []struct {
		env    map[string]string
		max    int64
		keep   int
		errHas string
	}{
		{map[string]string{}, DefaultMaxBytes, DefaultKeep, ""},
		{map[string]string{EnvMaxBytes: "1000", EnvKeep: "0"}, 1000, 0, ""},
		{map[string]string{EnvMaxBytes: "10MB"}, 0, 0, EnvMaxBytes},
		{map[string]string{EnvKeep: "-2"}, 0, 0, EnvKeep},
	}
	for _, c := range cases {
		m, k, err := RotationFromEnv(func(k string) string { return c.env[k] })
		if c.errHas != "" {
			if err == nil || !strings.Contains(err.Error(), c.errHas) {
				t.Errorf("%v: err = %v, want one naming %s", c.env, err, c.errHas)
			}
			continue
		}
		if err != nil || m != c.max || k != c.keep {
			t.Errorf("%v: got %d, %d, %v", c.env, m, k, err)
		}
	}
}
