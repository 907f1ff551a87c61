package gitexec

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"time"
)

// globalFlags precede -C on every call. Each one closes a way repository
// or user configuration could make a read run a program, take a lock, or
// change what the output means:
//   - --no-pager, core.pager=: never spawn a pager (it is a program).
//   - --no-optional-locks: status and friends must not rewrite the index.
//   - --no-replace-objects: refs/replace must not make history lie.
//   - --literal-pathspecs: a path from a caller is a path, never a glob
//     or a magic pathspec such as ":(exclude)".
//   - core.fsmonitor=false: the fsmonitor setting may name a hook program.
//   - core.untrackedCache=false: reading must not write cache extensions.
//   - diff.external=: the configured external diff program is never run.
//   - color.ui=false: parsers read plain text.
//   - core.hooksPath=/dev/null: no hook can run, whatever the command.
//   - protocol.allow=never: a read never talks to a remote.
//   - log.showSignature=false: signature checks would run gpg.program.
//   - mailmap.file=: repository config could name a mailmap file anywhere
//     on the machine, which blame and %aN formats would read; the
//     repository's own .mailmap still applies.
//   - diff.autoRefreshIndex=false: git 2.39's `git diff` rewrites a
//     stat-dirty index even under --no-optional-locks; this stops it
//     without changing the diff output.
//   - submodule.recurse=false, diff.submodule=short,
//     status.submoduleSummary=false, diff.ignoreSubmodules=dirty: git
//     must never start a process inside a submodule, because that process
//     reads the submodule's own configuration, which the driver scan below
//     never saw. These are only defaults (a .gitmodules entry's `ignore`
//     overrides diff.ignoreSubmodules), so the commands that can recurse
//     also get command-line flags in subcommandFlags, which override
//     every configuration source.
var globalFlags = []string{
	"--no-pager",
	"--no-optional-locks",
	"--no-replace-objects",
	"--literal-pathspecs",
	"-c", "core.fsmonitor=false",
	"-c", "core.untrackedCache=false",
	"-c", "diff.external=",
	"-c", "core.pager=",
	"-c", "color.ui=false",
	"-c", "core.hooksPath=/dev/null",
	"-c", "protocol.allow=never",
	"-c", "log.showSignature=false",
	"-c", "mailmap.file=",
	"-c", "diff.autoRefreshIndex=false",
	"-c", "submodule.recurse=false",
	"-c", "diff.submodule=short",
	"-c", "status.submoduleSummary=false",
	"-c", "diff.ignoreSubmodules=dirty",
}

// subcommandFlags are inserted right after the subcommand. `-c
// diff.external=` alone makes a plain `git diff` fail (git tries to run the
// empty program), and diff drivers selected by .gitattributes would still
// run their command or textconv; these flags turn both features off where
// the command supports them.
//
// The submodule flags keep git out of submodules whatever the
// configuration or .gitmodules says (a command-line value overrides both):
//   - --ignore-submodules=dirty: to find out whether a submodule's work
//     tree is dirty, git runs `git status` inside it, with the submodule's
//     own config (filters, fsmonitor, ...). With "dirty" git only compares
//     the recorded commit with the submodule's HEAD, read in-process, and
//     never starts a process there. Callers that report dirtiness recover
//     it with separate hardened runs (plugins/gitread).
//   - --submodule=short: `diff.submodule=diff` would run `git diff` inside
//     the submodule; "short" prints the two commit ids only.
var subcommandFlags = map[string][]string{
	"status":     {"--ignore-submodules=dirty"},
	"diff":       {"--no-ext-diff", "--no-textconv", "--ignore-submodules=dirty", "--submodule=short"},
	"diff-index": {"--no-ext-diff", "--no-textconv", "--ignore-submodules=dirty", "--submodule=short"},
	"diff-files": {"--no-ext-diff", "--no-textconv", "--ignore-submodules=dirty", "--submodule=short"},
	"diff-tree":  {"--no-ext-diff", "--no-textconv", "--submodule=short"},
	"log":        {"--no-ext-diff", "--no-textconv", "--submodule=short"},
	"show":       {"--no-ext-diff", "--no-textconv", "--submodule=short"},
	"blame":      {"--no-textconv"},
}

// hardenedArgs builds the full argv after the executable.
func hardenedArgs(repo string, args []string) []string {
	extra := subcommandFlags[args[0]]
	out := make([]string, 0, len(globalFlags)+len(args)+len(extra)+2)
	out = append(out, globalFlags...)
	out = append(out, "-C", repo, args[0])
	out = append(out, extra...)
	return append(out, args[1:]...)
}

// removedEnvPrefixes and removedEnv are dropped from the inherited
// environment. GIT_* can point git at another repository or object store,
// another exec path, a trace file, or inject config; GCM_* steers the
// credential manager; the loader variables inject code into every process;
// the pager variables are for interactive use only.
var (
	removedEnvPrefixes = []string{"GIT_", "GCM_", "DYLD_"}
	removedEnv         = map[string]bool{
		"SSH_ASKPASS": true, "SSH_ASKPASS_REQUIRE": true,
		"PAGER": true, "LESS": true, "LV": true,
		"LD_PRELOAD": true, "LD_LIBRARY_PATH": true, "LD_AUDIT": true,
		// Replaced below; removing first avoids duplicate keys.
		"LC_ALL": true, "LANG": true, "NO_COLOR": true,
	}
)

// fixedEnv is appended to every environment: no prompts, no system or
// global config or attributes (only the repository's own, neutralized by
// the flags above), literal pathspecs, C locale for stable messages.
var fixedEnv = []string{
	"GIT_OPTIONAL_LOCKS=0",
	"GIT_TERMINAL_PROMPT=0",
	"GIT_CONFIG_NOSYSTEM=1",
	"GIT_CONFIG_GLOBAL=/dev/null",
	"GIT_ATTR_NOSYSTEM=1",
	"GIT_LITERAL_PATHSPECS=1",
	"GIT_PAGER=",
	"LC_ALL=C",
	"LANG=C",
	"NO_COLOR=1",
}

// sanitizedEnv returns the environment for a git child: os.Environ() minus
// the removed variables, plus fixedEnv, plus config overrides passed
// through GIT_CONFIG_COUNT (used for driver names that may contain '=' and
// so cannot be written as -c name=value).
func sanitizedEnv(overrides [][2]string) []string {
	return buildEnv(os.Environ(), overrides)
}

func buildEnv(parent []string, overrides [][2]string) []string {
	out := make([]string, 0, len(parent)+len(fixedEnv)+2*len(overrides)+1)
	for _, kv := range parent {
		key, _, _ := strings.Cut(kv, "=")
		if removedEnv[key] || hasAnyPrefix(key, removedEnvPrefixes) {
			continue
		}
		out = append(out, kv)
	}
	out = append(out, fixedEnv...)
	if len(overrides) > 0 {
		out = append(out, "GIT_CONFIG_COUNT="+strconv.Itoa(len(overrides)))
		for i, o := range overrides {
			n := strconv.Itoa(i)
			out = append(out, "GIT_CONFIG_KEY_"+n+"="+o[0], "GIT_CONFIG_VALUE_"+n+"="+o[1])
		}
	}
	return out
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// noContentSubcommands never convert file content, so they cannot reach a
// filter, diff or merge driver and skip the driver scan below.
var noContentSubcommands = map[string]bool{
	"rev-parse": true, "symbolic-ref": true, "for-each-ref": true,
	"show-ref": true, "config": true, "merge-base": true, "rev-list": true,
	"ls-tree": true, "name-rev": true, "describe": true,
	"count-objects": true, "check-ref-format": true, "remote": true,
}

// driverScanArgs lists every filter, diff and merge driver key in the
// repository's configuration (names only, NUL-terminated), and every
// include key: a config with includes is never cached (see drivercache.go).
var driverScanArgs = []string{"config", "-z", "--name-only", "--get-regexp", `^(filter|diff|merge|include|includeif)\.`}

// driverOverrides neutralizes the programs .gitattributes can select.
// Drivers are named by the (untrusted) work tree and defined in the
// repository config, so no fixed -c list can cover them: a `filter.x.clean`
// runs during a plain `git status` when a file's stat data is stale. One
// cheap `git config` scan finds the defined names and each program-valued
// key is overridden with an empty value. For filters git treats that as
// "no filter", and required=false lets a marked file be read as-is. For
// diff commands, textconv and merge drivers an empty command makes git
// fail ("cannot run") instead of running anything; diff, log and show never
// get that far because of subcommandFlags, but a future caller of
// merge-tree on a repository with a custom merge driver will see a 10010
// rather than the driver's result, which is the safe side.
//
// The scan's result is cached per repository and revalidated by stat()
// before every use; drivercache.go explains when it is and is not reused.
func (r *Runner) driverOverrides(ctx context.Context, exe, repo, subcommand string) ([][2]string, error) {
	if noContentSubcommands[subcommand] {
		return nil, nil
	}
	key := exe + "\x00" + repo
	var paths []string
	var before []fileSig
	if e, ok := r.drivers.get(key); ok {
		if !e.includes {
			return e.overrides, nil
		}
		paths, before = e.paths, e.sigs // known locations, config has includes
	} else {
		paths, before = r.watchList(ctx, exe, repo)
	}
	if paths != nil && racy(before, time.Now()) {
		paths = nil
	}
	if driverScanHook != nil {
		driverScanHook(repo)
	}
	out := &limitBuffer{keep: MaxStdout, limit: MaxStdout, what: "stdout"}
	err := r.start(ctx, exe, Command(repo, driverScanArgs...), hardenedArgs(repo, driverScanArgs), nil, out)
	var names []string
	if err != nil {
		var ge *Error
		if !errors.As(err, &ge) || ge.ExitCode != 1 || !errors.Is(err, ErrExit) {
			return nil, err
		}
		// exit 1: no matching keys
	} else {
		names = strings.Split(out.buf.String(), "\x00")
	}
	ov := overridesFor(names)
	if paths != nil {
		// Cache only when nothing moved while git read the config. With
		// includes only the file locations are kept, never the answer.
		if after, ok := statAll(paths); ok && sameSigs(before, after) {
			e := &driverEntry{key: key, paths: paths, sigs: before, overrides: ov}
			if hasIncludes(names) {
				e.overrides, e.includes = nil, true
			}
			r.drivers.put(e)
		}
	}
	return ov, nil
}

// hasIncludes reports an include.* or includeIf.* key among the names.
func hasIncludes(names []string) bool {
	for _, n := range names {
		section, _, _ := strings.Cut(n, ".")
		if strings.EqualFold(section, "include") || strings.EqualFold(section, "includeif") {
			return true
		}
	}
	return false
}

// overridesFor maps config key names to neutralizing overrides.
func overridesFor(names []string) [][2]string {
	var out [][2]string
	seen := map[string]bool{}
	add := func(k, v string) {
		if !seen[k] {
			seen[k] = true
			out = append(out, [2]string{k, v})
		}
	}
	for _, name := range names {
		section, rest, ok := strings.Cut(name, ".")
		if !ok {
			continue
		}
		dot := strings.LastIndexByte(rest, '.')
		if dot < 0 {
			continue // two-level key such as diff.external: handled by flags
		}
		sub, key := rest[:dot], rest[dot+1:]
		switch {
		case section == "filter" && (key == "clean" || key == "smudge" || key == "process"):
			add(name, "")
			add("filter."+sub+".required", "false")
		case section == "diff" && (key == "command" || key == "textconv"):
			add(name, "")
		case section == "merge" && key == "driver":
			add(name, "")
		}
	}
	return out
}
