#!/usr/bin/env bash
# Builds a Kadens release into dist/ (or $OUT): the kadens binary for linux
# and darwin on amd64 and arm64, a Debian package per linux architecture
# (packaging/nfpm.yaml), and SHA256SUMS over all of them.
#
#   scripts/release.sh                        # everything, version from git
#   VERSION=1.2.0 scripts/release.sh          # a named version
#   TARGETS=linux/amd64 scripts/release.sh    # only some platforms (CI)
#
# The build is reproducible: the same commit and Go toolchain give the same
# bytes (-trimpath, -buildvcs=false, no build id, the version and revision
# stamped with -X; the packages' file times are the commit's time through
# SOURCE_DATE_EPOCH). `kadens version` prints the stamped version.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$(go env GOPATH 2>/dev/null || echo /root/go)/bin:$PATH"

NFPM_VERSION=v2.45.2
TARGETS=${TARGETS:-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64}
OUT=${OUT:-dist}

revision=$(git rev-parse HEAD 2>/dev/null || echo unknown)
if [ -z "${SOURCE_DATE_EPOCH:-}" ]; then
  SOURCE_DATE_EPOCH=$(git log -1 --format=%ct 2>/dev/null || echo 0)
fi
export SOURCE_DATE_EPOCH
if [ -z "${VERSION:-}" ]; then
  # A tag v1.2.3 on the commit is the version 1.2.3; otherwise the last
  # tag (or 0.0.0), the commit's date and its short hash, which sorts
  # after that tag for dpkg and is valid semver.
  if VERSION=$(git describe --tags --exact-match --match 'v[0-9]*' 2>/dev/null); then
    VERSION=${VERSION#v}
  else
    base=$(git describe --tags --abbrev=0 --match 'v[0-9]*' 2>/dev/null || echo v0.0.0)
    VERSION="${base#v}+git$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y%m%d).$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)"
  fi
fi
case $VERSION in
  [0-9]*) ;;
  *) echo "release: VERSION $VERSION must begin with a digit (Debian and semver need it)" >&2; exit 2 ;;
esac

need_nfpm=false
for t in $TARGETS; do [ "${t%/*}" = linux ] && need_nfpm=true; done
# The pinned nfpm, unless it is installed already (a `go install`ed nfpm
# prints no version of its own; its build info names the module's).
if $need_nfpm && ! { command -v nfpm >/dev/null &&
  go version -m "$(command -v nfpm)" 2>/dev/null | grep -Eq "^[[:space:]]+mod[[:space:]]+github.com/goreleaser/nfpm/v2[[:space:]]+$NFPM_VERSION([[:space:]]|$)"; }; then
  echo "release: installing nfpm $NFPM_VERSION"
  GOFLAGS=-buildvcs=false go install "github.com/goreleaser/nfpm/v2/cmd/nfpm@$NFPM_VERSION"
fi

rm -rf "$OUT"
mkdir -p "$OUT"
for t in $TARGETS; do
  os=${t%/*} arch=${t#*/}
  bin="$OUT/kadens-$VERSION-$os-$arch"
  echo "release: $bin"
  CGO_ENABLED=0 GOOS=$os GOARCH=$arch GOFLAGS= go build -trimpath -buildvcs=false \
    -ldflags "-s -w -buildid= -X main.version=$VERSION -X main.revision=$revision" -o "$bin" ./cmd/kadens
  if [ "$os" = linux ]; then
    # nfpm expands no variables in a file's source: the config is
    # rendered with this platform's values first.
    sed -e "s|\${VERSION}|$VERSION|g" -e "s|\${ARCH}|$arch|g" -e "s|\${BINARY}|$bin|g" packaging/nfpm.yaml >"$OUT/nfpm-$arch.yaml"
    nfpm package --config "$OUT/nfpm-$arch.yaml" --packager deb --target "$OUT/"
    rm "$OUT/nfpm-$arch.yaml"
  fi
done
(cd "$OUT" && sha256sum -- * > SHA256SUMS)
echo "release: $VERSION ($revision) in $OUT:"
cat "$OUT/SHA256SUMS"
