#!/usr/bin/env bash
# Builds versioned fluxgit release binaries and their SHA-256 checksums.
#
#   scripts/release.sh VERSION [OUTDIR]
#
# VERSION is stamped into the binary (`fluxgit version`, `fluxgit --version`);
# OUTDIR defaults to dist/. Binaries are named fluxgit_VERSION_OS_ARCH (with
# .exe on Windows) and listed in OUTDIR/SHA256SUMS, the format `sha256sum -c`
# reads.
#
# Reproducible: the same source, VERSION and Go toolchain give the same bytes
# on any machine and in any directory — no cgo, no paths (-trimpath), no VCS
# stamp (-buildvcs=false), no build id (-buildid=), no debug tables (-s -w).
# SOURCE_DATE_EPOCH (default: the last commit's time, else 0) sets the files'
# modification time, so an archive made from OUTDIR is reproducible as well.
#
# RELEASE_TARGETS overrides the OS/arch pairs (space-separated GOOS/GOARCH).
set -euo pipefail

usage() { echo "usage: $0 VERSION [OUTDIR]" >&2; exit 2; }
[ $# -ge 1 ] && [ $# -le 2 ] || usage
version=$1
outdir=${2:-dist}
# The version ends up in file names and in -ldflags: refuse anything that
# could split either.
if ! [[ $version =~ ^v?[0-9A-Za-z][0-9A-Za-z.+_-]*$ ]]; then
  echo "release: version '$version' must be letters, digits and . + _ - only (for example 1.2.0 or v1.2.0-rc.1)" >&2
  exit 2
fi

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
targets=${RELEASE_TARGETS:-"linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64"}
if [ -z "${SOURCE_DATE_EPOCH:-}" ]; then
  SOURCE_DATE_EPOCH=$(git -C "$root" log -1 --format=%ct 2>/dev/null || echo 0)
fi
export SOURCE_DATE_EPOCH
export CGO_ENABLED=0 GOFLAGS=

mkdir -p "$outdir"
outdir=$(cd "$outdir" && pwd)
names=()
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
    -o "$outdir/$name" ./cmd/fluxgit
  touch -d "@$SOURCE_DATE_EPOCH" "$outdir/$name"
  names+=("$name")
done

# Checksums of exactly the files this run built, sorted by name.
(
  cd "$outdir"
  if command -v sha256sum >/dev/null 2>&1; then
    printf '%s\n' "${names[@]}" | LC_ALL=C sort | xargs sha256sum
  else
    printf '%s\n' "${names[@]}" | LC_ALL=C sort | xargs shasum -a 256
  fi
) > "$outdir/SHA256SUMS"
touch -d "@$SOURCE_DATE_EPOCH" "$outdir/SHA256SUMS"
echo "release: $outdir/SHA256SUMS" >&2
