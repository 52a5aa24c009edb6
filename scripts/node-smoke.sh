#!/usr/bin/env bash
# Usage: node-smoke.sh
# `msgflow dev` end to end on whichever Node.js is first on PATH (CI runs it on Node 24 and 22): starts the whole stack
# (Temporal dev server, sandbox, ingress, worker, codec endpoint) on free loopback ports in a temporary folder of
# its own (its .data/ never meets a checkout's), sends one SMS with `msgflow sms send --wait` and requires it to
# be delivered, then stops the stack with SIGTERM, checks its output has no line over 1,000 characters and no
# expected warning, and removes the folder. Needs the checkout's node_modules
# installed for that Node and a Temporal CLI (`msgflow temporal ensure`).
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/msgflow-node-smoke-XXXXXX")
log=$work/dev.log
SEND_SECONDS=300
MAX_LINE=1000
# shellcheck source=scripts/lib/dev-stack.sh
source "$repo/scripts/lib/dev-stack.sh"
trap 'dev_stop; rm -rf "$work"' EXIT

fail() {
  echo "node-smoke: $*; msgflow dev's output:" >&2
  cat "$log" >&2
  exit 1
}

echo "node $(node --version): msgflow dev in $work"
dev_start

result=$(cd "$work" && timeout "$SEND_SECONDS" "${dev_cli[@]}" sms send --to 2348012345678 --sender ACME \
  --message "node smoke" --wait --json) || fail "msgflow sms send failed or took over ${SEND_SECONDS} s"
status=$(sms_statuses "$result")
[ "$status" = delivered ] || fail "the SMS ended '$status', not delivered: $result"
echo "sms delivered on node $(node --version)"
dev_stop
grep -q '^stopping' "$log" || fail "msgflow dev did not stop in order"
echo "msgflow dev stopped"
# Its output stays readable: no line of kilobytes (webpack's bundle summary), no warning that is expected.
longest=$(awk '{ if (length($0) > max) max = length($0) } END { print max + 0 }' "$log")
[ "$longest" -le "$MAX_LINE" ] || fail "a line of $longest characters in msgflow dev's output (at most $MAX_LINE)"
! grep -q 'No workflows registered' "$log" || fail "msgflow dev printed the provider queue's expected warning"
