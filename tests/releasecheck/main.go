// Command releasecheck holds the checks `scripts/release.sh --check` makes on
// the artefacts it built, where a shell script alone would be fragile:
//
//	releasecheck mcp [-cwd DIR] [-env K=V]... -- COMMAND ARGS...
//	    starts COMMAND as an MCP host does (stdio), initializes, lists the
//	    tools, closes stdin and wants exit status 0; prints the tool count.
//	releasecheck exitcode WANT -- COMMAND ARGS...
//	    runs COMMAND and wants exit status WANT.
//	releasecheck sigterm [-cwd DIR] -- COMMAND ARGS...
//	    starts COMMAND as an MCP server, initializes, sends it SIGTERM and
//	    wants it to end within 15 s (the npm launcher must pass it on).
//	releasecheck registry SCHEMA SERVER_JSON PACKAGE_JSON VERSION
//	    validates SERVER_JSON against the MCP Registry schema file SCHEMA and
//	    checks its npm package against the npm package's package.json.
//	releasecheck formula FORMULA SHA256SUMS VERSION PAIRS
//	    checks the Homebrew formula's structure, version, URLs and checksums,
//	    and that it has PAIRS binaries (4 in a full release).
//	releasecheck sums DIR
//	    checks DIR/SHA256SUMS lists every file under DIR with its digest.
//
// It is a release tool beside the test helpers (tests/echoprovider, …),
// not part of fluxgit.
package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/fluxgit/fluxgit/tests/internal/registry"
)

func main() {
	if len(os.Args) < 2 {
		fail(errors.New("usage: releasecheck mcp|exitcode|sigterm|registry|formula|sums ..."))
	}
	var err error
	args := os.Args[2:]
	switch os.Args[1] {
	case "mcp":
		err = runMCP(args)
	case "exitcode":
		err = runExitCode(args)
	case "sigterm":
		err = runSigterm(args)
	case "registry":
		err = checkRegistry(args)
	case "formula":
		err = checkFormula(args)
	case "sums":
		err = checkSums(args)
	default:
		err = fmt.Errorf("unknown check %q", os.Args[1])
	}
	if err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "releasecheck:", err)
	os.Exit(1)
}

// commandLine parses [-cwd DIR] [-env K=V]... -- COMMAND ARGS...
func commandLine(args []string) (*exec.Cmd, error) {
	cwd := ""
	var env []string
	for len(args) > 0 && args[0] != "--" {
		if len(args) < 2 {
			return nil, fmt.Errorf("option %s needs a value", args[0])
		}
		switch args[0] {
		case "-cwd":
			cwd = args[1]
		case "-env":
			env = append(env, args[1])
		default:
			return nil, fmt.Errorf("unknown option %s", args[0])
		}
		args = args[2:]
	}
	if len(args) < 2 {
		return nil, errors.New("want -- COMMAND [ARGS...]")
	}
	cmd := exec.Command(args[1], args[2:]...)
	cmd.Dir = cwd
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	return cmd, nil
}

// session is a newline-delimited JSON-RPC conversation over a child's stdio.
type session struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan []byte
}

func start(cmd *exec.Cmd) (*session, error) {
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", cmd.Path, err)
	}
	s := &session{cmd: cmd, stdin: stdin, lines: make(chan []byte, 16)}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			s.lines <- append([]byte(nil), sc.Bytes()...)
		}
		close(s.lines)
	}()
	return s, nil
}

// call sends a request and returns its result, skipping notifications.
func (s *session) call(id int, method string, params any) (json.RawMessage, error) {
	req, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if _, err := s.stdin.Write(append(req, '\n')); err != nil {
		return nil, fmt.Errorf("%s: write: %w", method, err)
	}
	timeout := time.After(60 * time.Second)
	for {
		select {
		case line, ok := <-s.lines:
			if !ok {
				return nil, fmt.Errorf("%s: the server closed stdout without answering", method)
			}
			var resp struct {
				ID     json.RawMessage `json:"id"`
				Result json.RawMessage `json:"result"`
				Error  *struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if err := json.Unmarshal(line, &resp); err != nil {
				return nil, fmt.Errorf("%s: stdout line is not JSON-RPC: %.200q", method, line)
			}
			if string(resp.ID) != strconv.Itoa(id) {
				continue
			}
			if resp.Error != nil {
				return nil, fmt.Errorf("%s: error %d %s", method, resp.Error.Code, resp.Error.Message)
			}
			return resp.Result, nil
		case <-timeout:
			return nil, fmt.Errorf("%s: no answer within 60 s", method)
		}
	}
}

func (s *session) initialize() error {
	_, err := s.call(1, "initialize", map[string]any{
		"protocolVersion": "2025-06-18",
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": "release-check", "version": "1.0.0"},
	})
	if err != nil {
		return err
	}
	_, err = s.stdin.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"))
	return err
}

// wait waits for the child to end within d, killing it otherwise.
func (s *session) wait(d time.Duration) error {
	done := make(chan error, 1)
	go func() {
		for range s.lines {
		}
		done <- s.cmd.Wait()
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		// Kill it and end its input: a grandchild left behind (the binary
		// a launcher failed to stop) then ends too, at end of input.
		_ = s.cmd.Process.Kill()
		_ = s.stdin.Close()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
		}
		return fmt.Errorf("%s did not end within %s", s.cmd.Path, d)
	}
}

func runMCP(args []string) error {
	cmd, err := commandLine(args)
	if err != nil {
		return err
	}
	s, err := start(cmd)
	if err != nil {
		return err
	}
	defer func() { _ = s.cmd.Process.Kill() }()
	if err := s.initialize(); err != nil {
		return err
	}
	raw, err := s.call(2, "tools/list", map[string]any{})
	if err != nil {
		return err
	}
	var list struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(raw, &list); err != nil || len(list.Tools) == 0 {
		return fmt.Errorf("tools/list answered no tools: %.300s", raw)
	}
	// End of input ends an MCP stdio server, with status 0.
	_ = s.stdin.Close()
	if err := s.wait(30 * time.Second); err != nil {
		return fmt.Errorf("after stdin closed: %w", err)
	}
	fmt.Printf("tools/list: %d tools\n", len(list.Tools))
	return nil
}

func runExitCode(args []string) error {
	if len(args) < 1 {
		return errors.New("want WANT -- COMMAND")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		return fmt.Errorf("exit status %q: %w", args[0], err)
	}
	cmd, err := commandLine(args[1:])
	if err != nil {
		return err
	}
	cmd.Stdout = io.Discard
	cmd.Stderr = io.Discard
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	go func() { <-ctx.Done(); _ = killIfStarted(cmd) }()
	err = cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		return err
	}
	if code != want {
		return fmt.Errorf("%s exited %d, want %d", strings.Join(cmd.Args, " "), code, want)
	}
	return nil
}

func killIfStarted(cmd *exec.Cmd) error {
	if cmd.Process != nil {
		return cmd.Process.Kill()
	}
	return nil
}

func runSigterm(args []string) error {
	if runtime.GOOS == "windows" {
		fmt.Println("sigterm: skipped on Windows (no SIGTERM)")
		return nil
	}
	cmd, err := commandLine(args)
	if err != nil {
		return err
	}
	s, err := start(cmd)
	if err != nil {
		return err
	}
	defer func() { _ = s.cmd.Process.Kill() }()
	if err := s.initialize(); err != nil {
		return err
	}
	if err := terminate(s.cmd.Process); err != nil {
		return err
	}
	// stdin stays open: only the signal can end the server.
	if err := s.wait(15 * time.Second); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			return fmt.Errorf("after SIGTERM: %w", err)
		}
		// Ending by SIGTERM or with a status is fine; hanging is not.
	}
	fmt.Println("sigterm: the server ended")
	return nil
}

func checkRegistry(args []string) error {
	if len(args) != 4 {
		return errors.New("want SCHEMA SERVER_JSON PACKAGE_JSON VERSION")
	}
	schemaPath, serverPath, pkgPath, version := args[0], args[1], args[2], args[3]
	raw, err := os.ReadFile(serverPath)
	if err != nil {
		return err
	}
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return fmt.Errorf("%s: %w", serverPath, err)
	}
	id, _ := doc.(map[string]any)["$schema"].(string)
	schema, err := registry.CompileSchema(schemaPath, id)
	if err != nil {
		return fmt.Errorf("%w (server.json's $schema)", err)
	}
	if err := schema.Validate(doc); err != nil {
		return fmt.Errorf("%s does not validate against %s: %v", serverPath, id, err)
	}
	var e registry.Entry
	if err := json.Unmarshal(raw, &e); err != nil {
		return err
	}
	var pkg struct {
		Name    string `json:"name"`
		Version string `json:"version"`
		MCPName string `json:"mcpName"`
	}
	pkgRaw, err := os.ReadFile(pkgPath)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(pkgRaw, &pkg); err != nil {
		return fmt.Errorf("%s: %w", pkgPath, err)
	}
	if e.Version != version {
		return fmt.Errorf("server.json version %q, want %q", e.Version, version)
	}
	if pkg.MCPName != e.Name {
		return fmt.Errorf("package.json mcpName %q must equal server.json name %q (the registry checks it)", pkg.MCPName, e.Name)
	}
	npm := 0
	for _, p := range e.Packages {
		switch p.RegistryType {
		case "npm":
			npm++
			if p.Identifier != pkg.Name || p.Version != pkg.Version || p.Version != version {
				return fmt.Errorf("server.json npm package %s@%s, want %s@%s", p.Identifier, p.Version, pkg.Name, version)
			}
			if p.RegistryBaseURL != "https://registry.npmjs.org" || p.Transport.Type != "stdio" {
				return fmt.Errorf("server.json npm package: registryBaseUrl %q transport %q, want https://registry.npmjs.org and stdio", p.RegistryBaseURL, p.Transport.Type)
			}
		case "oci":
			if !strings.HasSuffix(p.Identifier, ":"+version) {
				return fmt.Errorf("server.json image %q is not tagged %s", p.Identifier, version)
			}
		}
	}
	if npm != 1 {
		return fmt.Errorf("server.json lists %d npm packages, want 1", npm)
	}
	fmt.Printf("server.json: valid against %s, npm %s@%s beside the image\n", id, pkg.Name, version)
	return nil
}

var (
	formulaURLRE = regexp.MustCompile(`^\s*url "([^"]+)"$`)
	formulaSumRE = regexp.MustCompile(`^\s*sha256 "([0-9a-f]{64})"$`)
	openerRE     = regexp.MustCompile(`^\s*(class \S+ < Formula|def \w+|.* do( \|\w+\|)?)$`)
)

func checkFormula(args []string) error {
	if len(args) != 4 {
		return errors.New("want FORMULA SHA256SUMS VERSION PAIRS")
	}
	pairs, err := strconv.Atoi(args[3])
	if err != nil {
		return fmt.Errorf("PAIRS %q: %w", args[3], err)
	}
	src, err := os.ReadFile(args[0])
	if err != nil {
		return err
	}
	sums, err := readSums(args[1])
	if err != nil {
		return err
	}
	version := args[2]
	if regexp.MustCompile(`@[A-Z0-9_a-z]+@`).Match(src) {
		return errors.New("formula: a template placeholder was left in")
	}
	if !strings.Contains(string(src), `version "`+version+`"`) {
		return fmt.Errorf("formula: no version %q", version)
	}
	depth, urls := 0, 0
	lines := strings.Split(string(src), "\n")
	for i, line := range lines {
		switch {
		case openerRE.MatchString(line):
			depth++
		case strings.TrimSpace(line) == "end":
			depth--
			if depth < 0 {
				return fmt.Errorf("formula line %d: end without an opener", i+1)
			}
		}
		m := formulaURLRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		urls++
		name := path.Base(m[1])
		if !strings.Contains(m[1], "/v"+version+"/") || !strings.Contains(name, "_"+version+"_") {
			return fmt.Errorf("formula line %d: url %s is not the v%s release", i+1, m[1], version)
		}
		want, ok := sums[name]
		if !ok {
			return fmt.Errorf("formula line %d: %s is not in SHA256SUMS", i+1, name)
		}
		if i+1 >= len(lines) {
			return fmt.Errorf("formula line %d: url without sha256", i+1)
		}
		s := formulaSumRE.FindStringSubmatch(lines[i+1])
		if s == nil || s[1] != want {
			return fmt.Errorf("formula line %d: sha256 for %s is not SHA256SUMS's %s", i+2, name, want)
		}
	}
	if depth != 0 {
		return fmt.Errorf("formula: %d block(s) not closed", depth)
	}
	if urls != pairs {
		return fmt.Errorf("formula: %d urls, want %d (one per macOS and Linux binary built)", urls, pairs)
	}
	fmt.Printf("formula: %d urls, checksums match SHA256SUMS\n", urls)
	return nil
}

func readSums(file string) (map[string]string, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for i, line := range strings.Split(strings.TrimRight(string(raw), "\n"), "\n") {
		sum, name, ok := strings.Cut(line, "  ")
		if !ok || len(sum) != 64 {
			return nil, fmt.Errorf("%s line %d: %q is not `DIGEST  NAME`", file, i+1, line)
		}
		out[name] = sum
	}
	return out, nil
}

func checkSums(args []string) error {
	if len(args) != 1 {
		return errors.New("want DIR")
	}
	dir := args[0]
	sums, err := readSums(filepath.Join(dir, "SHA256SUMS"))
	if err != nil {
		return err
	}
	var seen []string
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if rel == "SHA256SUMS" {
			return nil
		}
		want, ok := sums[rel]
		if !ok {
			return fmt.Errorf("%s is not listed in SHA256SUMS", rel)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		got := sha256.Sum256(data)
		if hex.EncodeToString(got[:]) != want {
			return fmt.Errorf("%s: digest differs from SHA256SUMS", rel)
		}
		seen = append(seen, rel)
		return nil
	})
	if err != nil {
		return err
	}
	for name := range sums {
		if !slices.Contains(seen, name) {
			return fmt.Errorf("SHA256SUMS lists %s, which is missing", name)
		}
	}
	fmt.Printf("SHA256SUMS: %d files, every digest matches\n", len(seen))
	return nil
}

// terminate sends SIGTERM, what an MCP host sends its server to stop it.
func terminate(p *os.Process) error { return p.Signal(syscall.SIGTERM) }
