#!/usr/bin/env bash
# Builds fluxgit's release artefacts.
#
#   scripts/release.sh VERSION [OUTDIR]     the binaries and OUTDIR/SHA256SUMS
#   scripts/release.sh --package [OUTDIR]   every artefact of the canonical version
#   scripts/release.sh --check              --package into a temporary directory,
#                                           then tries each artefact as a user would
#   scripts/release.sh --set-version X.Y.Z  moves every file that names the version
#
# The canonical version is cmd/fluxgit/VERSION: semver without the v (git
# tags add it: v0.1.0). The binary embeds it; server.json, the Dockerfile's
# image, the Claude Code and Codex plugins (packaging/claude-plugin,
# packaging/codex) name it and --check fails when one disagrees; the npm
# packages, the Desktop bundles and the Homebrew formula are generated from
# the templates under packaging/ with it.
#
# Binaries: VERSION is stamped into each (`fluxgit version`, `fluxgit
# --version`); OUTDIR defaults to dist/. They are named fluxgit_VERSION_OS_ARCH
# (with .exe on Windows) and listed in OUTDIR/SHA256SUMS, the format
# `sha256sum -c` reads.
#
# Reproducible: the same source, VERSION and Go toolchain give the same bytes
# on any machine and in any directory — no cgo, no paths (-trimpath), no VCS
# stamp (-buildvcs=false), no build id (-buildid=), no debug tables (-s -w).
# SOURCE_DATE_EPOCH (default: the last commit's time, else 0) sets the files'
# modification time, so an archive made from OUTDIR is reproducible as well.
#
# RELEASE_TARGETS overrides the OS/arch pairs (space-separated GOOS/GOARCH).
#
# --package (needs Node and npm) adds, for the six pairs: the npm packages
# (fluxgit-VERSION.tgz, the launcher, and fluxgit-OS-CPU-VERSION.tgz, one per
# pair with its binary, which npm picks by os/cpu among the launcher's
# optional dependencies — no download and no script at install time), one
# Claude Desktop bundle per pair (fluxgit_VERSION_OS_ARCH.mcpb, packed and
# validated by @anthropic-ai/mcpb, pinned below), the Homebrew formula
# (fluxgit.rb, with the binaries' checksums), server.json and the two
# plugins; SHA256SUMS lists them all.
set -euo pipefail

# The official MCP Bundle tool, from the npm registry; a new version is a
# deliberate change.
MCPB_VERSION=2.1.2
ALL_TARGETS="linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64"

usage() {
  echo "usage: $0 VERSION [OUTDIR] | --package [OUTDIR] | --check | --set-version X.Y.Z" >&2
  exit 2
}

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
canonical() { tr -d '[:space:]' < "$root/cmd/fluxgit/VERSION"; }
semver_re='^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$'

mode=binaries
case "${1:-}" in
  --package) mode=package; shift; [ $# -le 1 ] || usage; version=$(canonical); outdir=${1:-dist} ;;
  --check) mode=check; shift; [ $# -eq 0 ] || usage; version=$(canonical) ;;
  --set-version) mode=set; shift; [ $# -eq 1 ] || usage; version=$1 ;;
  -*) usage ;;
  *)
    [ $# -ge 1 ] && [ $# -le 2 ] || usage
    version=$1
    outdir=${2:-dist}
    ;;
esac
# The version ends up in file names and in -ldflags: refuse anything that
# could split either.
if ! [[ $version =~ ^v?[0-9A-Za-z][0-9A-Za-z.+_-]*$ ]]; then
  echo "release: version '$version' must be letters, digits and . + _ - only (for example 1.2.0 or v1.2.0-rc.1)" >&2
  exit 2
fi
if [ "$mode" != binaries ] && ! [[ $version =~ $semver_re ]]; then
  echo "release: version '$version' must be semver without v (for example 1.2.0 or 1.2.0-rc.1): npm and the MCP Registry need one exact version; cmd/fluxgit/VERSION holds it" >&2
  exit 2
fi

# --set-version: every file that names the version literally.
if [ "$mode" = set ]; then
  old=$(canonical)
  printf '%s\n' "$version" > cmd/fluxgit/VERSION
  for f in server.json packaging/claude-plugin/.claude-plugin/plugin.json \
           packaging/codex/.codex-plugin/plugin.json packaging/codex/.mcp.json packaging/codex/config.toml; do
    sed -i.bak -e "s/\"version\": \"$old\"/\"version\": \"$version\"/g" \
      -e "s/fluxgit:$old\"/fluxgit:$version\"/g" -e "s/fluxgit@$old\"/fluxgit@$version\"/g" "$f"
    rm -f "$f.bak"
  done
  # The install lines people copy from the README and docs/install.md
  # (npx fluxgit@V, the bundle names, go install …@vV): there the version
  # string names nothing but fluxgit's own version, so every one moves.
  o=${old//./\\.}
  for f in README.md docs/install.md; do
    [ -f "$f" ] || continue
    sed -i.bak -e "s/$o/$version/g" "$f"
    rm -f "$f.bak"
  done
  echo "release: version $old -> $version; check with $0 --check" >&2
  exit 0
fi

targets=${RELEASE_TARGETS:-$ALL_TARGETS}
if [ -z "${SOURCE_DATE_EPOCH:-}" ]; then
  SOURCE_DATE_EPOCH=$(git -C "$root" log -1 --format=%ct 2>/dev/null || echo 0)
fi
export SOURCE_DATE_EPOCH
export CGO_ENABLED=0 GOFLAGS=
export npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false

if command -v sha256sum >/dev/null 2>&1; then sha256=(sha256sum); else sha256=(shasum -a 256); fi
stamp() { touch -d "@$SOURCE_DATE_EPOCH" "$@"; }

# build_binaries OUTDIR: the binaries for $targets; their names in $names.
names=()
build_binaries() {
  local out=$1 t goos goarch name
  for t in $targets; do
    goos=${t%/*} goarch=${t#*/}
    if [ -z "$goos" ] || [ -z "$goarch" ] || [ "$goos" = "$t" ]; then
      echo "release: target '$t' must be GOOS/GOARCH, for example linux/amd64" >&2
      exit 2
    fi
    name="fluxgit_${version}_${goos}_${goarch}"
    [ "$goos" = windows ] && name="$name.exe"
    echo "release: building $name" >&2
    GOOS=$goos GOARCH=$goarch go build -trimpath -buildvcs=false \
      -ldflags "-s -w -buildid= -X main.version=$version" \
      -o "$out/$name" ./cmd/fluxgit
    stamp "$out/$name"
    names+=("$name")
  done
}

# write_sums OUTDIR FILE...: SHA256SUMS of exactly these files, sorted by name.
write_sums() {
  local out=$1
  shift
  (cd "$out" && printf '%s\n' "$@" | LC_ALL=C sort | xargs "${sha256[@]}") > "$out/SHA256SUMS"
  stamp "$out/SHA256SUMS"
  echo "release: $out/SHA256SUMS" >&2
}

if [ "$mode" = binaries ]; then
  mkdir -p "$outdir"
  outdir=$(cd "$outdir" && pwd)
  build_binaries "$outdir"
  write_sums "$outdir" "${names[@]}"
  exit 0
fi

need() {
  command -v "$1" >/dev/null 2>&1 || { echo "release: $mode needs $1 ($2)" >&2; exit 2; }
}
need node "Node 18 or newer: npm pack and the MCP Bundle tool"
need npm "npm pack"

# The versions written literally must be the canonical one.
check_literal_versions() {
  local f bad=0
  for f in server.json packaging/claude-plugin/.claude-plugin/plugin.json packaging/codex/.codex-plugin/plugin.json; do
    if [ "$(node -p "require('./$f').version")" != "$version" ]; then
      echo "release: $f has version $(node -p "require('./$f').version"), cmd/fluxgit/VERSION $version; run $0 --set-version $version" >&2
      bad=1
    fi
  done
  for f in packaging/claude-plugin/.claude-plugin/plugin.json packaging/codex/.mcp.json packaging/codex/config.toml; do
    if ! grep -q "\"fluxgit@$version\"" "$f"; then
      echo "release: $f does not start fluxgit@$version; run $0 --set-version $version" >&2
      bad=1
    fi
  done
  if [ "$(grep -c "\"ghcr.io/fluxgit/fluxgit:$version\"" server.json)" -lt 1 ]; then
    echo "release: server.json's image is not tagged $version; run $0 --set-version $version" >&2
    bad=1
  fi
  [ $bad = 0 ] || exit 1
}

# mcpb: the pinned tool, installed once per cache directory.
mcpb_dir=""
mcpb() {
  if [ -z "$mcpb_dir" ]; then
    mcpb_dir="${FLUXGIT_NODE_CACHE:-${TMPDIR:-/tmp}/fluxgit-release-tools}/mcpb-$MCPB_VERSION"
    if ! [ -x "$mcpb_dir/node_modules/.bin/mcpb" ]; then
      echo "release: installing @anthropic-ai/mcpb@$MCPB_VERSION into $mcpb_dir" >&2
      mkdir -p "$mcpb_dir"
      npm install --prefix "$mcpb_dir" --no-save --no-package-lock "@anthropic-ai/mcpb@$MCPB_VERSION" >&2
    fi
  fi
  "$mcpb_dir/node_modules/.bin/mcpb" "$@"
}

npm_os() { case $1 in windows) echo win32 ;; *) echo "$1" ;; esac; }
npm_cpu() { case $1 in amd64) echo x64 ;; *) echo "$1" ;; esac; }

# package OUTDIR: every artefact, for $targets.
package() {
  local out=$1 stage t goos goarch bin exe plat dir tgz file
  stage=$(mktemp -d "${TMPDIR:-/tmp}/fluxgit-stage.XXXXXX")
  check_literal_versions
  build_binaries "$out"
  local files=("${names[@]}")
  write_sums "$out" "${names[@]}" # the formula reads the binaries' digests

  # npm: one package per pair, then the launcher.
  for t in $targets; do
    goos=${t%/*} goarch=${t#*/}
    plat="$(npm_os "$goos")-$(npm_cpu "$goarch")"
    exe=fluxgit bin="fluxgit_${version}_${goos}_${goarch}"
    [ "$goos" = windows ] && exe=fluxgit.exe bin="$bin.exe"
    dir="$stage/npm/$plat"
    mkdir -p "$dir/bin"
    for file in package.json README.md; do
      sed -e "s/@VERSION@/$version/g" -e "s/@PLATFORM@/$plat/g" -e "s/@OS@/$(npm_os "$goos")/g" \
        -e "s/@CPU@/$(npm_cpu "$goarch")/g" "packaging/npm/platform/$file" > "$dir/$file"
    done
    cp "$out/$bin" "$dir/bin/$exe"
    chmod 0755 "$dir/bin/$exe"
    tgz=$(cd "$dir" && npm pack --ignore-scripts --pack-destination "$out" 2>/dev/null | tail -n 1)
    stamp "$out/$tgz"
    files+=("$tgz")

    # The Desktop bundle for this pair: its binary and the manifest.
    dir="$stage/mcpb/$plat"
    mkdir -p "$dir/server"
    sed -e "s/@VERSION@/$version/g" -e "s/@BINARY@/$exe/g" -e "s/@MCPB_OS@/$(npm_os "$goos")/g" \
      packaging/mcpb/manifest.json > "$dir/manifest.json"
    cp "$out/$bin" "$dir/server/$exe"
    chmod 0755 "$dir/server/$exe"
    cp LICENSE "$dir/LICENSE"
    find "$dir" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
    mcpb validate "$dir/manifest.json" >&2
    mcpb pack "$dir" "$out/${bin%.exe}.mcpb" >&2
    stamp "$out/${bin%.exe}.mcpb"
    files+=("${bin%.exe}.mcpb")
  done
  dir="$stage/npm/fluxgit"
  mkdir -p "$dir/bin"
  sed -e "s/@VERSION@/$version/g" packaging/npm/fluxgit/package.json > "$dir/package.json"
  sed -e "s/@VERSION@/$version/g" packaging/npm/fluxgit/README.md > "$dir/README.md"
  cp packaging/npm/fluxgit/bin/fluxgit.js "$dir/bin/fluxgit.js"
  chmod 0755 "$dir/bin/fluxgit.js"
  tgz=$(cd "$dir" && npm pack --ignore-scripts --pack-destination "$out" 2>/dev/null | tail -n 1)
  stamp "$out/$tgz"
  files+=("$tgz")

  # Homebrew: the formula with the binaries' checksums; a pair this run did
  # not build (RELEASE_TARGETS) has no block.
  node - "$version" "$out/SHA256SUMS" packaging/homebrew/fluxgit.rb.in > "$out/fluxgit.rb" <<'EOF'
const fs = require("node:fs");
const [version, sumsFile, template] = process.argv.slice(2);
const sums = {};
for (const line of fs.readFileSync(sumsFile, "utf8").trim().split("\n")) {
  const [sum, name] = line.split(/ +/);
  sums[name.replace(`fluxgit_${version}_`, "").replace(/\.exe$/, "")] = sum;
}
let text = fs.readFileSync(template, "utf8").replaceAll("@VERSION@", version);
// An on_arm/on_intel block (do, url, sha256, end) per pair.
text = text.replace(/^ *on_(arm|intel) do\n.*\n *sha256 "@SHA256_(\w+)@"\n *end\n/gm, (block, _, pair) =>
  sums[pair] ? block.replace(`@SHA256_${pair}@`, sums[pair]) : "");
// An OS block left empty goes too.
text = text.replace(/^ *on_(macos|linux) do\n *end\n\n?/gm, "");
process.stdout.write(text);
EOF
  files+=(fluxgit.rb)

  # The registry entry and the plugins, as they are in the repository.
  cp server.json "$out/server.json"
  files+=(server.json)
  for dir in claude-plugin codex; do
    mkdir -p "$out/$dir"
    cp -R "packaging/$dir/." "$out/$dir/"
    while IFS= read -r file; do files+=("${file#"$out"/}"); done < <(find "$out/$dir" -type f)
  done
  find "$out" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
  write_sums "$out" "${files[@]}"
  rm -rf "$stage"
}

if [ "$mode" = package ]; then
  mkdir -p "$outdir"
  outdir=$(cd "$outdir" && pwd)
  package "$outdir"
  exit 0
fi

# --check ------------------------------------------------------------------
started=$(date +%s)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fluxgit-release-check.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
dist="$tmp/dist"
mkdir -p "$dist"
goos=$(go env GOOS) goarch=$(go env GOARCH)
here="$goos/$goarch"
case " $ALL_TARGETS " in
  *" $here "*) ;;
  *) echo "release: --check runs the artefacts for $here, which fluxgit does not release" >&2; exit 2 ;;
esac
# Only this machine's pair by default: the check runs that one, and a cold
# cross-build of all six takes minutes. RELEASE_TARGETS="…" adds others
# (every one is still packaged and checksummed); this pair is always built.
targets=${RELEASE_TARGETS:-$here}
case " $targets " in *" $here "*) ;; *) targets="$targets $here" ;; esac
plat="$(npm_os "$goos")-$(npm_cpu "$goarch")"
ok() { echo "release check: ok: $*" >&2; }

echo "release check: building every artefact of $version into $dist" >&2
package "$dist"
go build -o "$tmp/releasecheck" ./tests/releasecheck
rc="$tmp/releasecheck"

# Checksums: every file, listed with its digest.
"$rc" sums "$dist" >&2
ok "SHA256SUMS"

# A repository for the servers to serve, inside the allowed root.
repo="$tmp/repos/demo"
mkdir -p "$repo"
git -C "$repo" init -q
git -C "$repo" -c user.name=check -c user.email=check@example.invalid commit -q --allow-empty -m init
export FLUXGIT_RUN_DIR="$tmp/run" SHIFT_STATE_DIR="$tmp/state" HOME="$tmp/home"
mkdir -p "$HOME"
roots="$tmp/repos"

# The binary for this machine says its version.
exe="fluxgit_${version}_${goos}_${goarch}"
[ "$goos" = windows ] && exe="$exe.exe"
[ "$("$dist/$exe" --version)" = "fluxgit $version" ] || { echo "release: $exe --version is not fluxgit $version" >&2; exit 1; }

# npm: install the launcher and this machine's package from their tarballs
# into an empty project, offline, so no name is looked up on the registry
# (one could belong to someone else), then run it as npx runs it.
user="$tmp/npm-user"
mkdir -p "$user"
export npm_config_cache="$tmp/npm-cache"
(cd "$user" && npm install --offline --no-save --ignore-scripts \
  "$dist/fluxgit-$plat-$version.tgz" "$dist/fluxgit-$version.tgz" >&2)
[ -e "$user/node_modules/@fluxgit/$plat/package.json" ] || { echo "release: npm did not install @fluxgit/$plat" >&2; exit 1; }
got=$(cd "$user" && npx --offline --no-install fluxgit --version)
[ "$got" = "fluxgit $version" ] || { echo "release: npx fluxgit --version printed '$got', want fluxgit $version" >&2; exit 1; }
ok "npm install from the tarballs; npx fluxgit --version: $got"
# The cheapest catalog is what fluxgit serves with no toolset chosen; every
# host configuration below must default to it.
baseline=$("$rc" mcp -env "FLUXGIT_MCP_ALLOWED_ROOTS=$roots" -- "$dist/$exe")
same_tools() { # WHAT "tools/list: N tools"
  [ "$2" = "$baseline" ] || { echo "release: $1 serves '$2', the default is '$baseline' (the core toolset)" >&2; exit 1; }
}
same_tools "npx fluxgit" "$("$rc" mcp -cwd "$user" -env "FLUXGIT_MCP_ALLOWED_ROOTS=$roots" -- npx --offline --no-install fluxgit)"
ok "npx fluxgit: $baseline over stdio"
launcher="$user/node_modules/fluxgit/bin/fluxgit.js"
want=0
"$dist/$exe" --no-such-flag >/dev/null 2>&1 || want=$?
[ "$want" != 0 ] || { echo "release: fluxgit --no-such-flag exited 0" >&2; exit 1; }
"$rc" exitcode "$want" -cwd "$user" -- node "$launcher" --no-such-flag >&2
ok "the launcher passes on the exit status ($want)"
"$rc" sigterm -cwd "$user" -env "FLUXGIT_MCP_ALLOWED_ROOTS=$roots" -- node "$launcher" >&2
ok "the launcher passes on SIGTERM"
"$rc" exitcode 0 -cwd "$user" -- npx --offline --no-install fluxgit gateway --help >&2
ok "npx fluxgit gateway --help"

# Desktop bundle: validate every manifest (pack did), unpack this machine's
# bundle as Claude Desktop installs it and start the command line its
# manifest gives for the user's settings, computed by the mcpb library.
desktop="$tmp/desktop/fluxgit"
mkdir -p "$desktop"
mcpb unpack "$dist/${exe%.exe}.mcpb" "$desktop" >&2
mcpb validate "$desktop/manifest.json" >&2
mcpb_lib="$mcpb_dir/node_modules/@anthropic-ai/mcpb/dist/index.js"
node --input-type=module - "$mcpb_lib" "$desktop" "$roots" > "$tmp/desktop.json" <<'EOF'
import { readFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
const [lib, dir, roots] = process.argv.slice(2);
const { getMcpConfigForManifest } = await import(pathToFileURL(lib).href);
const manifest = JSON.parse(readFileSync(path.join(dir, "manifest.json"), "utf8"));
for (const [key, opt] of Object.entries(manifest.user_config ?? {})) {
  if (opt.sensitive && !["database_url"].includes(key)) throw new Error(`unexpected sensitive setting ${key}`);
}
if (!manifest.user_config?.database_url?.sensitive) throw new Error("database_url must be marked sensitive");
const config = await getMcpConfigForManifest({
  manifest, extensionPath: dir, systemDirs: { HOME: process.env.HOME, DESKTOP: "", DOCUMENTS: "", DOWNLOADS: "" },
  userConfig: { allowed_roots: roots }, pathSeparator: path.sep,
});
if (!config) throw new Error("the manifest gives no command line for these settings");
process.stdout.write(JSON.stringify(config));
EOF
mapfile -t desktop_cmd < <(node -e 'const c=JSON.parse(require("fs").readFileSync(process.argv[1],"utf8")); for (const a of [c.command,...(c.args||[])]) console.log(a)' "$tmp/desktop.json")
mapfile -t desktop_env < <(node -e 'const c=JSON.parse(require("fs").readFileSync(process.argv[1],"utf8")); for (const [k,v] of Object.entries(c.env||{})) console.log("-env\n"+k+"="+v)' "$tmp/desktop.json")
same_tools "Desktop bundle" "$("$rc" mcp "${desktop_env[@]}" -- "${desktop_cmd[@]}")"
ok "Desktop bundle: mcpb validate, pack, unpack; its command line serves tools/list, the default catalog"

# Plugins: each server entry, its settings substituted as the host does,
# run against the package installed above (npx finds it in the project).
plugin_run() { # FILE JSONPATH
  node -e '
    const [file, roots] = process.argv.slice(1);
    const doc = JSON.parse(require("fs").readFileSync(file, "utf8"));
    const s = doc.mcpServers.fluxgit;
    const config = doc.userConfig ?? {};
    const values = { allowed_roots: roots };
    const sub = (v) => v.replace(/\$\{user_config\.(\w+)\}/g, (_, k) => {
      if (!(k in config)) throw new Error(`${file}: \${user_config.${k}} names no userConfig entry`);
      return values[k] ?? config[k].default ?? "";
    });
    const env = Object.entries(s.env ?? {}).map(([k, v]) => [k, sub(v)]);
    for (const name of s.env_vars ?? []) if (process.env[name] !== undefined) env.push([name, process.env[name]]);
    for (const [k, v] of env) console.log("-env\n" + k + "=" + v);
    console.log("--");
    for (const a of [s.command, ...(s.args ?? [])]) console.log(sub(a));
  ' "$1" "$roots"
}
for f in "$dist/claude-plugin/.claude-plugin/plugin.json" "$dist/codex/.mcp.json"; do
  host=claude-code
  case $f in */codex/*) host=codex ;; esac
  if grep -Eq 'SHIFT_DATABASE_URL|_KEY|SECRET|TOKEN' "$f"; then
    echo "release: $f names a secret; plugins never carry them" >&2; exit 1
  fi
  mapfile -t plugin_cmd < <(FLUXGIT_MCP_ALLOWED_ROOTS="$roots" plugin_run "$f")
  # npx must find fluxgit@VERSION installed: offline, nothing is fetched.
  same_tools "the $host plugin" "$(cd "$user" && npm_config_offline=true "$rc" mcp -cwd "$user" "${plugin_cmd[@]}")"
  ok "$host plugin: its server entry, run against the installed package, serves the default catalog"
done
# The repository's Claude Code marketplace lists the plugin directory.
node -e '
  const m = require(process.argv[1] + "/.claude-plugin/marketplace.json");
  const p = m.plugins.find((p) => p.name === "fluxgit");
  if (!p || require(process.argv[1] + "/" + p.source + "/.claude-plugin/plugin.json").name !== "fluxgit") process.exit(1);
' "$root" || { echo "release: .claude-plugin/marketplace.json does not list packaging/claude-plugin" >&2; exit 1; }
[ "$(node -p "require('$dist/codex/.codex-plugin/plugin.json').mcpServers")" = "./.mcp.json" ] || { echo "release: the Codex plugin does not point at .mcp.json" >&2; exit 1; }

# Homebrew: syntax and checksums.
if command -v ruby >/dev/null 2>&1; then ruby -c "$dist/fluxgit.rb" >&2; fi
formula_pairs=0
for t in $targets; do case $t in darwin/* | linux/*) formula_pairs=$((formula_pairs + 1)) ;; esac; done
"$rc" formula "$dist/fluxgit.rb" "$dist/SHA256SUMS" "$version" "$formula_pairs" >&2
ok "Homebrew formula"

# go install: the module path the README's line names, and a main package.
[ "$(go list -m)" = github.com/fluxgit/fluxgit ] || { echo "release: go.mod's module is not github.com/fluxgit/fluxgit" >&2; exit 1; }
[ "$(go list -f '{{.Name}}' ./cmd/fluxgit)" = main ] || { echo "release: cmd/fluxgit is not a main package" >&2; exit 1; }
if grep -Eq '^(replace|exclude)\b' go.mod; then echo "release: go.mod has replace/exclude directives; go install …@v$version refuses them" >&2; exit 1; fi
ok "go install github.com/fluxgit/fluxgit/cmd/fluxgit@v$version (module path, main package, no replace)"

# The registry entry: the published schema, the npm package beside the image.
tar -xzf "$dist/fluxgit-$version.tgz" -C "$tmp" package/package.json
"$rc" registry tests/testdata/registry/server.schema.json "$dist/server.json" "$tmp/package/package.json" "$version" >&2
ok "server.json"

# One version everywhere.
if grep -Eq '^ARG VERSION=.+' Dockerfile; then
  echo "release: the Dockerfile names a version; leave ARG VERSION empty (the binary reports cmd/fluxgit/VERSION) or pass --build-arg VERSION=$version" >&2
  exit 1
fi
for f in "$dist"/*.tgz "$dist"/*.mcpb "$dist"/fluxgit_*; do
  case "$(basename "$f")" in *"$version"*) ;; *) echo "release: $(basename "$f") does not carry $version" >&2; exit 1 ;; esac
done
echo "release check: every artefact of $version built and tried in $(( $(date +%s) - started ))s" >&2
