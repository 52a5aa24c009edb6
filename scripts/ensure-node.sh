#!/usr/bin/env bash
# Usage: ensure-node.sh MAJOR
# Prints the folder of a Node.js MAJOR.x for this platform (bin/node and include/node, so it also serves as
# npm's --nodedir when a native module such as better-sqlite3 is compiled for it). Installed on first use from
# the npm registry's node-<platform>-<arch> package (the binary the `node` package's installer would pick) into
# the msgflow cache, beside the Temporal builds; later runs reuse it without asking the registry. Delete the
# folder to take the newest MAJOR.x again.
set -euo pipefail
major=${1:-}
if ! [[ $major =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: ensure-node.sh MAJOR (a Node.js major version such as 24; got '${major}')" >&2
  exit 2
fi
cache=${MSGFLOW_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/msgflow}
dir=$cache/node-v$major
if [ ! -x "$dir/bin/node" ]; then
  package=node-$(node -p 'process.platform + "-" + process.arch')
  mkdir -p "$cache"
  tmp=$(mktemp -d "$cache/.node-v$major-XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  echo "installing Node.js $major from the npm registry ($package@$major, first run only)…" >&2
  npm install --prefix "$tmp" --no-save --no-package-lock --no-audit --no-fund "$package@$major" >&2
  # Moved into place whole, so an interrupted install is simply started over.
  rm -rf "$dir"
  mv "$tmp/node_modules/$package" "$dir"
fi
echo "$dir"
