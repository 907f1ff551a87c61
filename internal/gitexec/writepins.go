package gitexec

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// ErrRepoProgram means the repository's own configuration names a program
// git would run for this write and that the writer can neither pin to the
// person's own setting nor switch off without changing what is written (a
// filter or merge driver that only the repository defines). Details name
// the key and the fix.
var ErrRepoProgram = errors.New("the repository's configuration names a program for this write")

// Program-valued configuration keys, and what a write does with each when
// the repository's own configuration (local or worktree scope, with its
// includes) sets it. The person's own configuration (system and global
// scope) is what "behave like my git" means; the repository's file can be
// written by anything that writes the work tree's .git directory, an agent
// included, so a program it names is never run by an approved write. The
// table in docs/security.md ("What an approved write may run") is the
// person-facing form of these lists; keep them together.
var (
	// pinnedSingle are single-valued keys: the person's last value wins,
	// or the neutral value when the person sets none.
	pinnedSingle = map[string]string{
		"core.sshcommand":           "ssh",
		"core.askpass":              "",
		"gpg.program":               "gpg",
		"gpg.openpgp.program":       "gpg",
		"gpg.x509.program":          "gpgsm",
		"gpg.ssh.program":           "ssh-keygen",
		"gpg.ssh.defaultkeycommand": "",
	}
)

// scopedEntry is one `git config --list --show-scope` line.
type scopedEntry struct{ scope, key, value string }

// personScope reports whether scope is the person's own configuration.
func personScope(scope string) bool { return scope == "system" || scope == "global" }

// pinArgs returns the configuration overrides that make git ignore every
// program-valued key the repository's own configuration sets, in the order
// git must see them (GIT_CONFIG_COUNT entries come after every file).
// It fails with ErrRepoProgram for a filter or merge driver only the
// repository defines.
func pinArgs(entries []scopedEntry) ([][2]string, error) {
	var out [][2]string
	personLast := map[string]string{}
	repoSets := map[string]bool{}
	var personHelpers [][2]string
	repoHelper := false
	personDrivers := map[string]string{}
	var repoDrivers []string
	for _, e := range entries {
		k := strings.ToLower(e.key)
		section, rest, _ := strings.Cut(k, ".")
		// Subsection names keep their case: take them from the raw key.
		isHelper := section == "credential" && strings.HasSuffix(k, ".helper")
		// core.gitProxy: the first matching value wins, so no override
		// can outrank the repository's; it is refused like a driver.
		isDriver := k == "core.gitproxy"
		if dot := strings.LastIndexByte(rest, '.'); dot > 0 {
			leaf := rest[dot+1:]
			isDriver = isDriver || section == "filter" && (leaf == "clean" || leaf == "smudge" || leaf == "process") ||
				section == "merge" && leaf == "driver"
		}
		switch {
		case isHelper:
			if personScope(e.scope) {
				personHelpers = append(personHelpers, [2]string{e.key, e.value})
			} else {
				repoHelper = true
			}
		case isDriver:
			if personScope(e.scope) {
				personDrivers[e.key] = e.value
			} else if e.scope == "local" || e.scope == "worktree" {
				repoDrivers = append(repoDrivers, e.key)
			}
		default:
			if _, ok := pinnedSingle[k]; !ok {
				continue
			}
			if personScope(e.scope) {
				personLast[k] = e.value
			} else if e.scope == "local" || e.scope == "worktree" {
				repoSets[k] = true
			}
		}
	}
	for k := range repoSets {
		v, ok := personLast[k]
		if !ok {
			v = pinnedSingle[k]
		}
		out = append(out, [2]string{k, v})
	}
	if repoHelper {
		// An empty helper empties the list collected so far (every file);
		// the person's own helpers are then added back in their order.
		out = append(out, [2]string{"credential.helper", ""})
		out = append(out, personHelpers...)
	}
	var refuse []string
	for _, k := range repoDrivers {
		if v, ok := personDrivers[k]; ok {
			out = append(out, [2]string{k, v})
			continue
		}
		refuse = append(refuse, k)
	}
	if len(refuse) > 0 {
		return nil, fmt.Errorf("%w: %s (set in the repository's own .git/config, not in your global or system configuration); "+
			"fluxgit never runs a program that only the repository's configuration names, and it cannot switch this one off without changing "+
			"what git writes (an encryption filter switched off would commit plaintext); run this operation yourself with git, or define the key in your global configuration (git config --global)",
			ErrRepoProgram, strings.Join(refuse, ", "))
	}
	return out, nil
}

// parseScoped parses `git config --list --show-scope -z`: records of
// "scope\0key\nvalue\0" (a key without a value has no newline).
func parseScoped(out string) []scopedEntry {
	var es []scopedEntry
	parts := strings.Split(out, "\x00")
	for i := 0; i+1 < len(parts); i += 2 {
		key, value, _ := strings.Cut(parts[i+1], "\n")
		es = append(es, scopedEntry{scope: parts[i], key: key, value: value})
	}
	return es
}

// pinScanArgs lists every configuration entry with its scope, following
// includes (an included file carries the scope of the file including it).
var pinScanArgs = []string{"config", "--list", "--show-scope", "-z", "--includes"}

// pinFreeSubcommands read or write refs and objects only: they never run
// a program a configuration key names, so they skip the scan.
var pinFreeSubcommands = map[string]bool{
	"rev-parse": true, "symbolic-ref": true, "for-each-ref": true, "show-ref": true,
	"config": true, "merge-base": true, "rev-list": true, "ls-tree": true, "remote": true,
	"update-ref": true, "write-tree": true,
}

// pins runs the configuration scan for repo and returns its overrides.
func (w *Writer) pins(ctx context.Context, exe, repo string) ([][2]string, error) {
	stdout := &limitBuffer{keep: MaxStdout, limit: MaxStdout, what: "stdout"}
	argv := append(append(append([]string(nil), writeFlags...), "-c", "core.hooksPath=/dev/null", "-C", repo), pinScanArgs...)
	if err := w.start(ctx, exe, Command(repo, pinScanArgs...), argv, DefaultTimeout, stdout, nil, ""); err != nil {
		return nil, err
	}
	return pinArgs(parseScoped(stdout.buf.String()))
}
