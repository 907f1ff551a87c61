package shiftroster

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fluxgit/fluxgit/internal/roster"
	"github.com/fluxgit/fluxgit/plugins/sdk"
)

func TestCorruptDatabase(t *testing.T) {
	t.Run("not a database", func(t *testing.T) {
		dir := realTempDir(t)
		if err := os.WriteFile(filepath.Join(dir, roster.DatabaseName), []byte(strings.Repeat("this is not a SQLite file\n", 200)), 0o600); err != nil {
			t.Fatal(err)
		}
		assertCorrupt(t, dir)
	})
	t.Run("damaged page", func(t *testing.T) {
		dir := realTempDir(t)
		s, err := roster.Open(context.Background(), dir, roster.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 50 {
			if _, err := s.CheckIn(context.Background(), roster.CheckInInput{Workspace: "w", Gist: strings.Repeat("g", 200) + string(rune('a'+i%26))}); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Close(); err != nil { // last close checkpoints the WAL into the file
			t.Fatal(err)
		}
		path := filepath.Join(dir, roster.DatabaseName)
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		const page = 4096
		if len(raw) < 3*page {
			t.Fatalf("database too small to damage: %d bytes", len(raw))
		}
		for i := page; i < len(raw); i++ { // keep the header page, garble the rest
			raw[i] ^= 0x5A
		}
		if err := os.WriteFile(path, raw, 0o600); err != nil {
			t.Fatal(err)
		}
		assertCorrupt(t, dir)
	})
}

func assertCorrupt(t *testing.T, dir string) {
	t.Helper()
	_, err := roster.Open(context.Background(), dir, roster.Options{})
	var se *roster.StoreError
	if !errors.As(err, &se) || se.Reason != roster.ReasonCorrupt {
		t.Fatalf("Open: want %s, got %v", roster.ReasonCorrupt, err)
	}
	p := testProvider(t, dir, defaultWS)
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{ToolCheckIn, map[string]any{"gist": "g"}},
		{ToolCheckOut, map[string]any{"workerId": "ABCDEF"}},
	} {
		res := call(t, p, c.tool, c.args)
		if res.Error == nil || res.Error.Code != CodeStoreCorrupt {
			t.Fatalf("%s: want tool error %d, got %+v", c.tool, CodeStoreCorrupt, res)
		}
		var d StoreErrorData
		if err := json.Unmarshal(res.Error.Data, &d); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, roster.DatabaseName)
		if d.Reason != roster.ReasonCorrupt || d.Database != path || !strings.Contains(res.Error.Message, path) || d.Recovery.Hint == "" || d.Details == "" {
			t.Fatalf("%s: error %+v data %+v", c.tool, res.Error, d)
		}
		if !strings.Contains(res.Text, "(reason store_corrupt)") {
			t.Fatalf("error text:\n%s", res.Text)
		}
	}
	if _, err := p.ReadResource(context.Background(), StatusURI, sdk.Meta{}); err == nil || !strings.Contains(err.Error(), roster.ReasonCorrupt) {
		t.Fatalf("resource read of a corrupt store: %v", err)
	}
}

func TestStateDirIsAFile(t *testing.T) {
	file := filepath.Join(realTempDir(t), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	res := call(t, testProvider(t, file, defaultWS), ToolCheckIn, map[string]any{"gist": "g"})
	if res.Error == nil || res.Error.Code != CodeStoreUnavailable || !strings.Contains(string(res.Error.Data), "not a directory") {
		t.Fatalf("want %d naming the cause, got %+v %s", CodeStoreUnavailable, res.Error, res.Error.Data)
	}
}

// TestOpenRecoversWithoutRestart: a provider whose store could not be
// opened tries again on the next call.
func TestOpenRecoversWithoutRestart(t *testing.T) {
	base := realTempDir(t)
	dir := filepath.Join(base, "state")
	if err := os.WriteFile(dir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	p := testProvider(t, dir, defaultWS)
	if res := call(t, p, ToolCheckIn, map[string]any{"gist": "g"}); res.Error == nil {
		t.Fatal("expected an error while the state directory is a file")
	}
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	checkIn(t, p, map[string]any{"gist": "g"})
}

// A roster locked for longer than the budget is a store_busy tool error,
// not a hang and not a fallback.
func TestBusyIsAToolError(t *testing.T) {
	dir := realTempDir(t)
	inTx, release := make(chan struct{}), make(chan struct{})
	holder := openStore(t, dir, roster.Options{TxHook: func(_, stage string) {
		if stage == "begin" {
			close(inTx)
			<-release
		}
	}})
	done := make(chan error, 1)
	go func() {
		_, err := holder.CheckIn(context.Background(), roster.CheckInInput{Workspace: "w", Gist: "holder"})
		done <- err
	}()
	<-inTx
	p := NewWithConfig(Config{StateDir: dir, DefaultWorkspace: "w", Store: roster.Options{Budget: 200 * time.Millisecond}, Logger: slog.New(slog.DiscardHandler)})
	t.Cleanup(func() { _ = p.Close() })
	// The first call opens the store, which needs the lock too.
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{ToolCheckIn, map[string]any{"gist": "g"}},
		{ToolCheckOut, map[string]any{"workerId": "ABCDEF"}},
	} {
		res := call(t, p, c.tool, c.args)
		var d StoreErrorData
		if res.Error == nil || res.Error.Code != CodeStoreBusy || json.Unmarshal(res.Error.Data, &d) != nil || d.Reason != roster.ReasonBusy {
			t.Fatalf("%s: want tool error %d, got %+v", c.tool, CodeStoreBusy, res)
		}
		if !strings.Contains(res.Text, "(reason store_busy)") || !strings.Contains(res.Text, "- Operation: ") {
			t.Fatalf("%s text:\n%s", c.tool, res.Text)
		}
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	checkIn(t, p, map[string]any{"gist": "after the lock was released"})
}
