#!/bin/sh
# build.sh: one Lambda deployment package per function — dist/<function>.zip
# holding the function as `bootstrap` (runtime provided.al2023, arm64), for
# every directory of cmd/lambda. The packages are reproducible: the same
# sources and Go toolchain give the same bytes (-trimpath, no VCS stamp,
# deploy/zipdist's fixed order, times and modes). docs/aws.md, "Build".
#
#   deploy/build.sh [DIST]        (DIST defaults to dist; FUNCTIONS="a b" builds only those)
set -eu
cd "$(dirname "$0")/.."
GO=${GO:-go}
DIST=${1:-dist}
FUNCTIONS=${FUNCTIONS:-$(cd cmd/lambda && for d in */; do [ -f "$d/main.go" ] && printf '%s ' "${d%/}"; done)}
if [ -z "$FUNCTIONS" ]; then echo "build.sh: no function under cmd/lambda" >&2; exit 1; fi
mkdir -p "$DIST"
# The zip writer is built once, for this machine.
ZIPDIST="$DIST/.zipdist"
$GO build -o "$ZIPDIST" ./deploy/zipdist
for fn in $FUNCTIONS; do
	mkdir -p "$DIST/$fn"
	GOOS=linux GOARCH=arm64 CGO_ENABLED=0 $GO build -trimpath -buildvcs=false -ldflags '-s -w' \
		-o "$DIST/$fn/bootstrap" "./cmd/lambda/$fn"
	"$ZIPDIST" -o "$DIST/$fn.zip" "$DIST/$fn/bootstrap"
	echo "$DIST/$fn.zip"
done
rm -f "$ZIPDIST"
