#!/usr/bin/env bash
# Builds Jaeger v1.75.0 (the all-in-one `jaeger` binary) from the Go module proxy into .tmp/bin.
# `go install pkg@version` refuses this module (its go.mod has a replace directive), so the module
# is downloaded and built in a copy. The Go build cache makes later builds fast.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
BIN="$ROOT/.tmp/bin/jaeger"
VERSION=v1.75.0
if [[ -x "$BIN" ]]; then exit 0; fi
SRC="$(go mod download -json "github.com/jaegertracing/jaeger@$VERSION" | sed -n 's/^\s*"Dir": "\(.*\)",$/\1/p')"
WORK="$ROOT/.tmp/jaeger-src"
rm -rf "$WORK"
cp -r "$SRC" "$WORK"
chmod -R u+w "$WORK"
mkdir -p "$(dirname "$BIN")"
(cd "$WORK" && go build -o "$BIN" ./cmd/jaeger)
rm -rf "$WORK"
