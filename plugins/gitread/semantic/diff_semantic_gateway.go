package semantic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/fluxgit/fluxgit/internal/fluxbridge"
	"github.com/fluxgit/fluxgit/internal/gitexec"
	"github.com/fluxgit/fluxgit/internal/operation"
	"github.com/fluxgit/fluxgit/plugins/gitread/repo"
)

// The gateway path of diff.semantic: list the changed files with git,
// send at most semanticMaxFiles of them to POST /v1/mcp/diff/semantic, and
// keep from the reply only what passes a field-by-field check. The reply
// is never passed on as is: every member served is rebuilt here, so a
// gateway bug cannot put an unchecked shape (or a path that was not asked
// for) in front of an agent.

// sourceGateway is the Result.Source of a semantic diff the FluxGit
// gateway served.
const sourceGateway = "fluxgit-gateway"

// Limits of the gateway path (spec/tools/diff.semantic.yaml): files per call,
// diff lines per file, and the size of a per-file reason taken from the
// engine.
const (
	semanticEngine    = "fluxgit-diff-engine"
	semanticEndpoint  = operation.SemanticDiffPath
	semanticMaxFiles  = 25
	semanticMaxLines  = 1500
	semanticMaxReason = 1000
)

// semanticTimeout bounds the gateway call. It is a variable only so the
// package tests can exercise a slow gateway without waiting 10 s.
var semanticTimeout = fluxbridge.SemanticTimeout

// semanticReasonEngineFallback is a fallback file's reason when the engine
// gave none.
const semanticReasonEngineFallback = "The FluxGit diff engine has no semantic diff for this file; use diff.text with textDiffArguments."

// semanticRequest is the body of POST /v1/mcp/diff/semantic; every member
// is always present.
type semanticRequest struct {
	RepoID   string   `json:"repoId"`
	RepoPath string   `json:"repoPath"`
	BaseRef  string   `json:"baseRef"`
	HeadRef  string   `json:"headRef"`
	Paths    []string `json:"paths"`
}

// gatewaySemanticData is the diff.semantic payload the gateway served.
// Supported is always true; a file the engine could not diff carries
// fallbackToText:true with its own textDiffArguments instead.
type gatewaySemanticData struct {
	Supported      bool           `json:"supported"`
	Engine         string         `json:"engine"`
	Base           *string        `json:"base"`
	Head           *string        `json:"head"`
	Path           *string        `json:"path"`
	Files          []semanticFile `json:"files"`
	ChangedFiles   int            `json:"changedFiles"`
	FilesTruncated bool           `json:"filesTruncated"`
}

// semanticFile is one file of a gateway semantic diff: hunks when
// FallbackToText is false, else Reason and textDiffArguments.
type semanticFile struct {
	Path              string             `json:"path"`
	FallbackToText    bool               `json:"fallbackToText"`
	Hunks             []semanticHunk     `json:"hunks"`
	LinesTruncated    *bool              `json:"linesTruncated,omitempty"`
	Reason            string             `json:"reason,omitempty"`
	TextDiffArguments *textDiffArguments `json:"textDiffArguments,omitempty"`
}

// semanticHunk is one hunk of a semantic file diff.
type semanticHunk struct {
	Header string         `json:"header"`
	Lines  []semanticLine `json:"lines"`
}

// semanticLine is one line of a hunk. OldContent and OldChangedTokens
// describe the old side of a modified line.
type semanticLine struct {
	Type             string            `json:"type"`
	OldLine          *int64            `json:"oldLine"`
	NewLine          *int64            `json:"newLine"`
	Content          string            `json:"content"`
	OldContent       *string           `json:"oldContent"`
	ChangedTokens    []json.RawMessage `json:"changedTokens"`
	OldChangedTokens []json.RawMessage `json:"oldChangedTokens"`
}

// gatewayFallbacksData is the diff.semanticFallbacks payload when the
// gateway served the diff: only the files that fell back to text.
type gatewayFallbacksData struct {
	Fallbacks         []semanticFallback `json:"fallbacks"`
	Engine            string             `json:"engine"`
	AnalyzedFiles     int                `json:"analyzedFiles"`
	FilesTruncated    bool               `json:"filesTruncated"`
	RejectedArguments []string           `json:"rejectedArguments"`
}

// gatewaySemantic is a served gateway answer.
type gatewaySemantic struct {
	data *gatewaySemanticData
}

// semanticRepoID is the FluxGit repository id: the repoId argument, else
// the run-directory registry entry naming this repository (by its
// canonical path, or its work-tree top level when repoPath named a
// subdirectory). "" means not registered.
func semanticRepoID(a semanticArgs, dir string) string {
	if id := strings.TrimSpace(a.RepoID); id != "" {
		return id
	}
	runDir, err := repo.RunDirFor("")
	if err != nil || runDir == "" {
		return ""
	}
	canonical := filepath.Clean(a.RepoPath)
	if c, err := filepath.EvalSymlinks(canonical); err == nil {
		canonical = c
	}
	entries, _ := repo.ReadRegistry(runDir, nil)
	for _, want := range []string{canonical, dir} {
		for _, e := range entries {
			if e.Path == want {
				return e.ID
			}
		}
	}
	return ""
}

// semanticViaGateway asks the gateway. A non-empty failed says, in one
// sentence for the agent, why the local fallback is served instead; err
// is only gitexec.ErrMoved (the caller retries the whole call) or a
// cancelled call.
func semanticViaGateway(p *repo.Provider, ctx context.Context, addr fluxbridge.Address, repoID string, a semanticArgs, r *repo.Repo, text textDiffArguments) (g *gatewaySemantic, failed string, err error) {
	moved := func(err error) bool { return errors.Is(err, gitexec.ErrMoved) }
	var relPath string
	if a.Path != "" {
		if relPath, err = repo.RepoRelative(a.Path, a.RepoPath, r.Dir()); err != nil {
			return nil, "arguments.path must be repository-relative without '..'.", nil
		}
	}
	// Pin the revisions as diff.text does, so the file list and the
	// engine's diff describe the same commits however refs move meanwhile.
	var baseOID, headOID string
	err = repo.Parallel(
		func() (err error) {
			if a.Base != "" {
				baseOID, err = p.ResolveCommit(ctx, r, "base", a.Base)
			}
			return err
		},
		func() (err error) {
			if a.Head != "" {
				headOID, err = p.ResolveCommit(ctx, r, "head", a.Head)
			}
			return err
		},
	)
	if err != nil {
		if moved(err) {
			return nil, "", err
		}
		return nil, semanticGitProblem(err), nil
	}
	args := []string{"diff", "--name-only", "-z", "--no-ext-diff", "--no-textconv", "--no-color"}
	for _, oid := range []string{baseOID, headOID} {
		if oid != "" {
			args = append(args, oid)
		}
	}
	args = append(args, "--")
	if relPath != "" {
		args = append(args, relPath)
	}
	out, err := p.Run(ctx, r.Dir(), args...)
	if err != nil {
		if moved(err) {
			return nil, "", err
		}
		return nil, semanticGitProblem(err), nil
	}
	paths := []string{}
	for _, name := range strings.Split(string(out), "\x00") {
		if name != "" {
			paths = append(paths, name)
		}
	}
	changed := len(paths)
	truncated := changed > semanticMaxFiles
	if truncated {
		paths = paths[:semanticMaxFiles]
	}

	// Ref mapping of the gateway contract: a lone revision is always sent
	// as baseRef (it is compared with the work tree either way).
	body := semanticRequest{RepoID: repoID, RepoPath: r.Dir(), Paths: paths}
	switch {
	case baseOID != "" && headOID != "":
		body.BaseRef, body.HeadRef = baseOID, headOID
	case baseOID != "":
		body.BaseRef = baseOID
	case headOID != "":
		body.BaseRef = headOID
	}
	resp, err := fluxbridge.NewClient(addr).Do(ctx, http.MethodPost, semanticEndpoint, body, semanticTimeout)
	if err != nil {
		if ctx.Err() != nil {
			return nil, "", fmt.Errorf("semantic diff: %w", ctx.Err())
		}
		return nil, semanticTransportProblem(err), nil
	}
	if resp.Status < 200 || resp.Status > 299 {
		return nil, semanticStatusProblem(resp), nil
	}
	files, pathsTruncated, problem := parseSemanticReply(resp.Body, paths, text)
	if problem != "" {
		return nil, "its reply was not a valid semantic diff (" + problem + ").", nil
	}
	d := &gatewaySemanticData{
		Supported: true, Engine: semanticEngine, Files: files,
		ChangedFiles: changed, FilesTruncated: truncated || pathsTruncated,
	}
	if a.Base != "" {
		d.Base = &a.Base
	}
	if a.Head != "" {
		d.Head = &a.Head
	}
	if relPath != "" {
		d.Path = &relPath
	}
	return &gatewaySemantic{data: d}, "", nil
}

// semanticGitProblem words a failed revision check or file listing.
func semanticGitProblem(err error) string {
	if details, ok := repo.FailureDetails(err); ok {
		return "listing the changed files failed: " + details + "."
	}
	var ge *gitexec.Error
	if errors.As(err, &ge) {
		return "listing the changed files failed: " + ge.Details + "."
	}
	return "listing the changed files failed."
}

// semanticTransportProblem words a failed gateway call. The address is
// not repeated: the agent cannot change it, the person configured it.
func semanticTransportProblem(err error) string {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("it did not answer within %s.", semanticTimeout)
	case errors.Is(err, fluxbridge.ErrBodyTooLarge):
		return fmt.Sprintf("its reply exceeded %d bytes.", fluxbridge.MaxBodyBytes)
	case errors.Is(err, fluxbridge.ErrRedirect):
		return "it answered with a redirect, which is never followed."
	}
	return "it could not be reached (is FluxGit running?)."
}

// semanticStatusProblem words a non-2xx reply, quoting the gateway's own
// error message when it sent one.
func semanticStatusProblem(resp *fluxbridge.Response) string {
	s := fmt.Sprintf("it answered HTTP %d", resp.Status)
	if raw, ok := resp.JSONError(); ok {
		var msg string
		var obj struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(raw, &msg) != nil && json.Unmarshal(raw, &obj) == nil {
			msg = obj.Message
		}
		if msg = strings.TrimSpace(msg); msg != "" {
			s += " (" + semanticClip(msg, 200) + ")"
		}
	}
	return s + "."
}

// semanticClip cuts s to at most n bytes on a character boundary.
func semanticClip(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// parseSemanticReply checks the reply {files:[…], pathsTruncated?}. A
// reply that is not such an object is a problem (the whole call falls
// back); a bad entry only turns its own file into a text fallback. Files
// come back in request order; an entry for a path that was not asked for
// is dropped, and a requested path the engine left out, sent twice or
// described in a shape this contract does not know falls back to text.
func parseSemanticReply(body []byte, paths []string, text textDiffArguments) (files []semanticFile, pathsTruncated bool, problem string) {
	var top map[string]json.RawMessage
	if err := strictUnmarshal(body, &top); err != nil || top == nil {
		return nil, false, "not a JSON object"
	}
	rawFiles, ok := top["files"]
	if !ok {
		return nil, false, "no files member"
	}
	var entries []json.RawMessage
	if err := strictUnmarshal(rawFiles, &entries); err != nil || entries == nil {
		return nil, false, "files is not an array"
	}
	if raw, ok := top["pathsTruncated"]; ok && !isJSONNull(raw) {
		if err := strictUnmarshal(raw, &pathsTruncated); err != nil {
			return nil, false, "pathsTruncated is not a boolean"
		}
	}
	requested := make(map[string]int, len(paths))
	for i, p := range paths {
		requested[p] = i
	}
	type slot struct {
		file    *semanticFile
		problem string
	}
	slots := make([]slot, len(paths))
	for _, raw := range entries {
		var m map[string]json.RawMessage
		if strictUnmarshal(raw, &m) != nil || m == nil {
			continue // no path to attach a fallback to
		}
		var path string
		if strictUnmarshal(m["path"], &path) != nil {
			continue
		}
		i, ok := requested[path]
		if !ok {
			continue // never asked for: nothing of it is served
		}
		switch s := &slots[i]; {
		case s.file != nil || s.problem != "":
			s.file, s.problem = nil, "the engine returned this file more than once"
		default:
			f, bad := parseSemanticFile(path, m)
			if bad != "" {
				s.problem = "the engine's answer for this file was malformed: " + bad
			} else {
				s.file = f
			}
		}
	}
	files = make([]semanticFile, len(paths))
	for i, p := range paths {
		s := slots[i]
		switch {
		case s.file != nil:
			files[i] = *s.file
		case s.problem == "":
			files[i] = semanticFile{Path: p, FallbackToText: true, Reason: "The FluxGit diff engine returned nothing for this file; use diff.text with textDiffArguments."}
		default:
			files[i] = semanticFile{Path: p, FallbackToText: true, Reason: strings.ToUpper(s.problem[:1]) + s.problem[1:] + "; use diff.text with textDiffArguments."}
		}
		if files[i].FallbackToText {
			files[i].Hunks = []semanticHunk{}
			files[i].LinesTruncated = nil
			t := text
			t.Path = p
			files[i].TextDiffArguments = &t
		}
	}
	return files, pathsTruncated, ""
}

// parseSemanticFile checks one file entry; bad names the first problem.
func parseSemanticFile(path string, m map[string]json.RawMessage) (f *semanticFile, bad string) {
	f = &semanticFile{Path: path}
	if strictUnmarshal(m["fallbackToText"], &f.FallbackToText) != nil {
		return nil, "fallbackToText is missing or not a boolean"
	}
	if f.FallbackToText {
		var hunks []json.RawMessage
		if raw, ok := m["hunks"]; ok && !isJSONNull(raw) && (strictUnmarshal(raw, &hunks) != nil || len(hunks) > 0) {
			return nil, "a text fallback must not carry hunks"
		}
		if raw, ok := m["reason"]; ok && !isJSONNull(raw) {
			if strictUnmarshal(raw, &f.Reason) != nil {
				return nil, "reason is not a string"
			}
		}
		if f.Reason = strings.TrimSpace(f.Reason); f.Reason == "" {
			f.Reason = semanticReasonEngineFallback
		}
		f.Reason = semanticClip(f.Reason, semanticMaxReason)
		return f, ""
	}
	var hunks []json.RawMessage
	if strictUnmarshal(m["hunks"], &hunks) != nil || hunks == nil {
		return nil, "hunks is missing or not an array"
	}
	truncated := false
	if raw, ok := m["linesTruncated"]; ok && !isJSONNull(raw) {
		if strictUnmarshal(raw, &truncated) != nil {
			return nil, "linesTruncated is not a boolean"
		}
	}
	f.Hunks = make([]semanticHunk, 0, len(hunks))
	budget := semanticMaxLines
	for hi, raw := range hunks {
		var h struct {
			Header *string           `json:"header"`
			Lines  []json.RawMessage `json:"lines"`
		}
		if strictUnmarshal(raw, &h) != nil || h.Header == nil || h.Lines == nil {
			return nil, fmt.Sprintf("hunks[%d] needs a string header and a lines array", hi)
		}
		hunk := semanticHunk{Header: *h.Header, Lines: make([]semanticLine, 0, min(len(h.Lines), budget))}
		for li, rl := range h.Lines {
			l, bad := parseSemanticLine(rl)
			if bad != "" {
				return nil, fmt.Sprintf("hunks[%d].lines[%d]: %s", hi, li, bad)
			}
			if budget == 0 {
				truncated = true
				continue // still checked: a bad line anywhere makes the file a fallback
			}
			hunk.Lines = append(hunk.Lines, l)
			budget--
		}
		if len(hunk.Lines) > 0 || len(h.Lines) == 0 {
			f.Hunks = append(f.Hunks, hunk)
		}
	}
	f.LinesTruncated = &truncated
	return f, ""
}

// semanticLineTypes are the line kinds of the contract.
var semanticLineTypes = map[string]bool{"unchanged": true, "added": true, "deleted": true, "modified": true}

// parseSemanticLine checks one hunk line.
func parseSemanticLine(raw json.RawMessage) (semanticLine, string) {
	var m map[string]json.RawMessage
	if strictUnmarshal(raw, &m) != nil || m == nil {
		return semanticLine{}, "not an object"
	}
	l := semanticLine{ChangedTokens: []json.RawMessage{}, OldChangedTokens: []json.RawMessage{}}
	if strictUnmarshal(m["type"], &l.Type) != nil || !semanticLineTypes[l.Type] {
		return l, "type must be unchanged, added, deleted or modified"
	}
	if strictUnmarshal(m["content"], &l.Content) != nil {
		return l, "content is missing or not a string"
	}
	for _, n := range []struct {
		name string
		dst  **int64
	}{{"oldLine", &l.OldLine}, {"newLine", &l.NewLine}} {
		raw, ok := m[n.name]
		if !ok || isJSONNull(raw) {
			continue
		}
		var v int64
		if strictUnmarshal(raw, &v) != nil || v < 0 {
			return l, n.name + " must be a non-negative integer or null"
		}
		*n.dst = &v
	}
	if raw, ok := m["oldContent"]; ok && !isJSONNull(raw) {
		var s string
		if strictUnmarshal(raw, &s) != nil {
			return l, "oldContent must be a string or null"
		}
		l.OldContent = &s
	}
	for _, t := range []struct {
		name string
		dst  *[]json.RawMessage
	}{{"changedTokens", &l.ChangedTokens}, {"oldChangedTokens", &l.OldChangedTokens}} {
		raw, ok := m[t.name]
		if !ok || isJSONNull(raw) {
			continue
		}
		var items []json.RawMessage
		if strictUnmarshal(raw, &items) != nil {
			return l, t.name + " must be an array"
		}
		for i, it := range items {
			tok, ok := semanticToken(it)
			if !ok {
				return l, fmt.Sprintf("%s[%d] must be a string or an object of strings, numbers and booleans", t.name, i)
			}
			*t.dst = append(*t.dst, tok)
		}
	}
	return l, ""
}

// semanticToken accepts a changed token as a string, or as a flat object
// whose members are strings, numbers or booleans (a span such as
// {start, end, text}), and returns it re-encoded compactly.
func semanticToken(raw json.RawMessage) (json.RawMessage, bool) {
	var s string
	if strictUnmarshal(raw, &s) == nil {
		b, _ := json.Marshal(s)
		return b, true
	}
	var m map[string]json.RawMessage
	if strictUnmarshal(raw, &m) != nil || m == nil {
		return nil, false
	}
	for _, v := range m {
		v = bytes.TrimSpace(v)
		if len(v) == 0 || v[0] == '{' || v[0] == '[' || isJSONNull(v) {
			return nil, false
		}
	}
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		return nil, false
	}
	return buf.Bytes(), true
}

// strictUnmarshal decodes exactly one JSON value (numbers kept exact). A
// missing member (nil raw) and null are errors: encoding/json would leave
// the target untouched, letting null pass for "", false or 0.
func strictUnmarshal(raw []byte, v any) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		return errors.New("missing")
	}
	if isJSONNull(raw) {
		return errors.New("null")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data")
	}
	return nil
}

func isJSONNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }
