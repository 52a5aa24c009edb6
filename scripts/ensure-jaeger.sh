#!/usr/bin/env bash
# Usage: ensure-jaeger.sh
# Prints the path of a Jaeger v1.76.0 all-in-one binary (OTLP on 4317/4318, query API and UI on 16686, traces in
# memory), the trace store the tracing test reads back from. Built on first use with Go into the msgflow cache,
# beside the Temporal builds (several minutes on 2 cores); later runs reuse it. `go install` refuses this module
# (its go.mod has a `replace` directive), so it is built as a tool of a throwaway module of its own.
set -euo pipefail
version=v1.76.0
module=github.com/jaegertracing/jaeger
cache=${MSGFLOW_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/msgflow}
binary=$cache/jaeger-$version/jaeger
if [ ! -x "$binary" ]; then
  command -v go >/dev/null || {
    echo "ensure-jaeger: no Jaeger at $binary, and no Go on PATH to build it (install Go, or put a Jaeger $version binary there)" >&2
    exit 1
  }
  mkdir -p "$cache"
  tmp=$(mktemp -d "$cache/.jaeger-$version-XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  echo "building Jaeger $version with Go (first run only, several minutes)…" >&2
  (
    cd "$tmp"
    go mod init msgflow.local/jaeger-build >&2 2>&1
    go get -tool "$module/cmd/jaeger@$version" >&2
    go build -o jaeger "$module/cmd/jaeger" >&2
  )
  mkdir -p "$(dirname "$binary")"
  # Moved into place whole, so an interrupted build is simply started over.
  mv "$tmp/jaeger" "$binary"
fi
echo "$binary"
