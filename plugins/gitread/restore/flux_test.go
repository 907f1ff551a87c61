package restore

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/fluxgit/fluxgit/gateway/execute"
)

var fxFluxTools = []string{"safety.timeline", "safety.eventDetails", "flux.latestRestorePoint", "flux.restorePoints", "flux.restorePointDetails"}

func TestFluxGitToolsGated(t *testing.T) {
	repo := newRepo(t)
	tests := []struct {
		name       string
		env        map[string]string
		configured bool
	}{
		{"unset", nil, false},
		{"localhost rejected", map[string]string{"FLUXGIT_GATEWAY_ADDR": "localhost:1234"}, false},
		{"no port rejected", map[string]string{"FLUXGIT_MCP_HANDSHAKE_ADDR": "127.0.0.1"}, false},
		{"ipv6 url accepted", map[string]string{"FLUXGIT_GATEWAY_URL": "http://[::1]:5/"}, true},
		{"handshake accepted", map[string]string{"FLUXGIT_MCP_HANDSHAKE_ADDR": "127.0.0.1:59647"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fxNoGateway(t)
			t.Setenv("FLUXGIT_RUN_DIR", tempDir(t))
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			for _, tool := range fxFluxTools {
				res, err := call(t, tool, map[string]any{"repoPath": repo})
				if err != nil {
					t.Fatal(err)
				}
				fxCheckPayload(t, tool, res, repo)
				if tt.configured {
					if res.Error != nil || res.Source != source {
						t.Fatalf("%s: %+v", tool, res.Error)
					}
					continue
				}
				if res.Error == nil || res.Error.Code != 10001 || res.Source != "" {
					t.Fatalf("%s: want 10001, got %+v", tool, res)
				}
				var d gatewayError
				_ = json.Unmarshal(res.Error.Data, &d)
				if d.Tool != tool || d.Tier != "fluxgit" || d.GatewayConfigured || d.LearnMore != "https://fluxgit.com/features/mcp-agent-git/" || len(d.FreeShellAlternative) == 0 || d.UpgradeHint == "" {
					t.Fatalf("%s: %+v", tool, d)
				}
				// The hint says how to start fluxgit's own gateway.
				if !strings.Contains(d.UpgradeHint, "`fluxgit gateway`") || !strings.Contains(d.UpgradeHint, "FLUXGIT_MCP_HANDSHAKE_ADDR") {
					t.Fatalf("%s: upgradeHint %q does not say how to start fluxgit gateway", tool, d.UpgradeHint)
				}
			}
		})
	}
}

func TestRestorePoints(t *testing.T) {
	repo := newRepo(t)
	first := git(t, repo, "rev-parse", "HEAD")
	write(t, repo, "b.txt", "b\n")
	second := commitAll(t, repo, "second")
	runDir := tempDir(t)
	fxNoGateway(t)
	t.Setenv("FLUXGIT_GATEWAY_ADDR", "127.0.0.1:4000")
	t.Setenv("FLUXGIT_RUN_DIR", runDir)
	write(t, runDir, "repos/web.path", repo+"\n")
	record := func(undone bool, branch string) {
		b, _ := json.Marshal(map[string]any{
			"operation": "rebase", "before_commit": first, "after_commit": second, "branch_ref": branch,
			"undone": undone, "created_at": 1700000100, "plan": map[string]any{"steps": 1},
		})
		write(t, runDir, "rebase/web.json", string(b))
	}
	tests := []struct {
		name             string
		undone           bool
		branch           string
		head             string
		canUndo, canRedo bool
	}{
		{"undo possible", false, "refs/heads/main", second, true, false},
		{"redo possible", true, "refs/heads/main", first, false, true},
		{"undone but head moved", true, "refs/heads/main", second, false, false},
		{"other branch", false, "refs/heads/other", second, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			record(tt.undone, tt.branch)
			git(t, repo, "reset", "-q", "--hard", tt.head)
			var d LatestRestorePointData
			fxOK(t, "flux.latestRestorePoint", map[string]any{"repoPath": repo}, &d)
			rp := d.LatestRestorePoint
			if rp == nil || d.RestoreCount != 1 || rp.CanUndo != tt.canUndo || rp.CanRedo != tt.canRedo || rp.ID != "restore:web:1700000100" {
				t.Fatalf("%+v", d)
			}
			var det restorePointDetailsData
			fxOK(t, "flux.restorePointDetails", map[string]any{"repoPath": repo, "restorePointId": "restore:web:1"}, &det)
			if det.RestorePoint == nil || det.RestorePoint.ID != rp.ID || det.IDMatched == nil || *det.IDMatched || !strings.Contains(det.Note, rp.ID) {
				t.Fatalf("id mismatch: want the one restore point, flagged: %+v", det)
			}
		})
	}
	var list restorePointsData
	fxOK(t, "flux.restorePoints", map[string]any{"repoPath": repo, "repoId": "nothing-here", "limit": 5}, &list)
	if list.RestoreCount != 0 || len(list.RestorePoints) != 0 {
		t.Fatalf("%+v", list)
	}
	mustArgError(t, "flux.restorePoints", map[string]any{"repoPath": repo, "repoId": ".."}, "safe file name")

	// Timeline: the restore point plus HEAD reflog moves (a reset is a warning).
	var tl timelineData
	fxOK(t, "safety.timeline", map[string]any{"repoPath": repo, "reflogLimit": 3}, &tl)
	if tl.EventCount != 4 || tl.Events[0].Source != "restore_point" {
		t.Fatalf("%+v", tl)
	}
	var sawReset bool
	for _, e := range tl.Events {
		if strings.HasPrefix(e.Summary, "reset:") && e.Severity == "warning" && e.ReflogSelector != "" {
			sawReset = true
		}
	}
	if !sawReset {
		t.Fatalf("no reset warning in %+v", tl.Events)
	}
	var ed eventDetailsData
	fxOK(t, "safety.eventDetails", map[string]any{"repoPath": repo, "eventId": "reflog:HEAD@{1}"}, &ed)
	if !ed.EventFound || ed.Event.ReflogSelector != "HEAD@{1}" {
		t.Fatalf("%+v", ed)
	}
	fxOK(t, "safety.eventDetails", map[string]any{"repoPath": repo, "eventId": "reflog:nope"}, &ed)
	if ed.EventFound || ed.Event != nil {
		t.Fatalf("%+v", ed)
	}
}

// TestRestorePointDetailsGatewayRecord reads a restore record the gateway
// itself wrote (a real reset executed by gateway/execute, so the run-dir
// format is the gateway's, not a fixture's) through
// flux.restorePointDetails: before and after are the record's commits,
// with or without a restorePointId (the reference accepts the id without
// using it; before the fix any id but the exact one answered a null
// restore point, so its before/after read as null).
func TestRestorePointDetailsGatewayRecord(t *testing.T) {
	repo := newRepo(t)
	before := git(t, repo, "rev-parse", "HEAD")
	write(t, repo, "b.txt", "b\n")
	second := commitAll(t, repo, "second")
	runDir := tempDir(t)
	fxNoGateway(t)
	t.Setenv("FLUXGIT_GATEWAY_ADDR", "127.0.0.1:4000")
	t.Setenv("FLUXGIT_RUN_DIR", runDir)

	// The gateway resets main from second back to before.
	ctx := context.Background()
	e := execute.New(execute.Options{RunDir: runDir})
	body, _ := json.Marshal(map[string]any{"repoPath": repo, "reason": "test", "operationType": "reset", "targetRef": "HEAD~1", "mode": "soft"})
	b, err := e.Bind(ctx, "reset", body)
	if err != nil {
		t.Fatal(err)
	}
	if out := e.Execute(ctx, execute.Job{ID: "job-1", OperationType: "reset", Body: body, Binding: b}); out.Status != "completed" {
		t.Fatalf("reset: %s", out.Result)
	}
	var latest LatestRestorePointData
	fxOK(t, "flux.latestRestorePoint", map[string]any{"repoPath": repo}, &latest)
	if latest.LatestRestorePoint == nil {
		t.Fatalf("no restore point after the gateway's reset: %+v", latest)
	}
	id := latest.LatestRestorePoint.ID
	for _, tt := range []struct {
		name    string
		id      string
		matched bool
	}{
		{"no id", "", true},
		{"its id", id, true},
		{"another id", "rp-1", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			args := map[string]any{"repoPath": repo}
			if tt.id != "" {
				args["restorePointId"] = tt.id
			}
			var d restorePointDetailsData
			fxOK(t, "flux.restorePointDetails", args, &d)
			rp := d.RestorePoint
			if rp == nil || rp.Before == nil || rp.After == nil {
				t.Fatalf("before/after missing for a record that has them: %+v", d)
			}
			// The record's before is the commit HEAD was at (second);
			// after is where the reset left it.
			if *rp.Before != second || *rp.After != before || rp.Operation == nil || *rp.Operation != "reset" || !rp.CanUndo || d.RestoreCount != 1 {
				t.Fatalf("restore point %+v (before %s after %s)", rp, second, before)
			}
			if tt.matched != (d.IDMatched == nil) || tt.matched != (d.Note == "") {
				t.Fatalf("restorePointIdMatched %v note %q, want matched=%v", d.IDMatched, d.Note, tt.matched)
			}
		})
	}
}
