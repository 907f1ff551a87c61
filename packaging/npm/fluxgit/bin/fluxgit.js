#!/usr/bin/env node
// The fluxgit command of the npm package: finds the binary npm installed for
// this machine (one optional dependency per OS/arch, picked by its "os" and
// "cpu" fields — nothing is downloaded at install time) and runs it as if it
// had been started directly: same arguments, the same standard streams (the
// MCP host talks JSON-RPC over them), signals passed on, and its exit status
// as this process's.
"use strict";

const { spawn } = require("node:child_process");
const path = require("node:path");

const { version } = require("../package.json");
const supported = ["linux-x64", "linux-arm64", "darwin-x64", "darwin-arm64", "win32-x64", "win32-arm64"];
const platform = `${process.platform}-${process.arch}`;
const pkg = `@fluxgit/${platform}`;
const windows = process.platform === "win32";

function fail(message) {
  process.stderr.write(`fluxgit (npm launcher): ${message}\n`);
  process.exit(1);
}

function binaryPath() {
  if (!supported.includes(platform)) {
    fail(
      `there is no fluxgit binary for ${platform} (built for ${supported.join(", ")}). ` +
        `Build one with Go 1.26: go install github.com/fluxgit/fluxgit/cmd/fluxgit@v${version}`,
    );
  }
  let manifest;
  try {
    manifest = require.resolve(`${pkg}/package.json`);
  } catch {
    fail(
      `the package ${pkg} that carries the binary for this machine is not installed. npm installs it ` +
        `with fluxgit as an optional dependency: reinstall without --omit=optional or --no-optional, ` +
        `or install ${pkg}@${version} beside fluxgit@${version}.`,
    );
  }
  const got = require(manifest).version;
  if (got !== version) {
    fail(`${pkg} is version ${got} but fluxgit is ${version}; install the same version of both (npm install fluxgit@${version}).`);
  }
  return path.join(path.dirname(manifest), "bin", windows ? "fluxgit.exe" : "fluxgit");
}

const child = spawn(binaryPath(), process.argv.slice(2), { stdio: "inherit", windowsHide: true });

// Signals: an MCP host stops its server by signalling the process it
// started, which is this one, so pass them on. On Windows a console's Ctrl+C
// and Ctrl+Break already reach every process attached to it, the child
// included, and Node can only terminate a child there, never signal it: this
// process then only waits for the child to finish, except when the console
// closes (SIGHUP), which ends the child too.
const forwarded = windows ? ["SIGHUP"] : ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"];
const waitOnly = windows ? ["SIGINT", "SIGBREAK"] : [];
const handlers = new Map();
for (const sig of forwarded) {
  const h = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill(sig);
  };
  handlers.set(sig, h);
  process.on(sig, h);
}
for (const sig of waitOnly) {
  const h = () => {};
  handlers.set(sig, h);
  process.on(sig, h);
}

child.on("error", (err) => {
  fail(`cannot start ${child.spawnfile}: ${err.message}. Reinstall ${pkg}@${version} (npm install fluxgit@${version}).`);
});

child.on("exit", (code, signal) => {
  if (signal) {
    // End the same way, so the parent sees the signal rather than a code.
    for (const [sig, h] of handlers) process.removeListener(sig, h);
    const number = require("node:os").constants.signals[signal];
    const status = number ? 128 + number : 1;
    try {
      process.kill(process.pid, signal);
    } catch {
      process.exit(status); // a signal this platform cannot raise on itself
    }
    // The shell's status for a signal, should the signal not end us.
    setTimeout(() => process.exit(status), 1000);
    return;
  }
  process.exit(code === null ? 1 : code);
});
