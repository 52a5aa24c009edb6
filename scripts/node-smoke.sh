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
cli=(node "$repo/bin/msgflow.js")
work=$(mktemp -d "${TMPDIR:-/tmp}/msgflow-node-smoke-XXXXXX")
log=$work/dev.log
READY_SECONDS=300
STOP_SECONDS=30
SEND_SECONDS=300
MAX_LINE=1000
dev_pid=

stop_dev() {
  if [ -n "$dev_pid" ] && kill -0 "$dev_pid" 2>/dev/null; then
    kill -TERM "$dev_pid" 2>/dev/null || true
    for _ in $(seq "$STOP_SECONDS"); do
      kill -0 "$dev_pid" 2>/dev/null || break
      sleep 1
    done
    if kill -0 "$dev_pid" 2>/dev/null; then
      echo "msgflow dev did not stop within ${STOP_SECONDS} s: killed" >&2
      kill -KILL -- "-$dev_pid" 2>/dev/null || true
    fi
  fi
  # The Temporal dev server runs in a process group of its own and outlives a msgflow dev that crashed or was
  # killed; its state file is in our folder, which names it.
  ps -eo pid=,args= | awk -v db="--db-filename $work/" 'index($0, db) && !/awk/ { print $1 }' |
    xargs -r kill -KILL 2>/dev/null || true
}
trap 'stop_dev; rm -rf "$work"' EXIT

fail() {
  echo "node-smoke: $*; msgflow dev's output:" >&2
  cat "$log" >&2
  exit 1
}

echo "node $(node --version): msgflow dev in $work"
read -r -a ports < <(node -e '
  const net = require("node:net");
  const servers = Array.from({ length: 6 }, () => net.createServer().listen(0, "127.0.0.1"));
  Promise.all(servers.map((s) => new Promise((r) => s.once("listening", r)))).then(() => {
    console.log(servers.map((s) => s.address().port).join(" "));
    servers.forEach((s) => s.close());
  });')

# Run from the temporary folder, so `.data/` is the one in there. A session of its own (its pid is its process
# group's), so a kill of last resort reaches everything it started in that group.
(cd "$work" && exec setsid "${cli[@]}" dev \
  --temporal-port "${ports[0]}" --ui-port "${ports[1]}" --sandbox-port "${ports[2]}" \
  --ingress-port "${ports[3]}" --codec-port "${ports[4]}" --worker-metrics-port "${ports[5]}" \
  < /dev/null > "$log" 2>&1) &
dev_pid=$!
started=$SECONDS
until grep -q '^msgflow dev is running:' "$log"; do
  kill -0 "$dev_pid" 2>/dev/null || fail "msgflow dev exited before it was ready"
  [ $((SECONDS - started)) -lt "$READY_SECONDS" ] || fail "msgflow dev was not ready within ${READY_SECONDS} s"
  sleep 1
done
echo "msgflow dev ready after $((SECONDS - started)) s"

result=$(cd "$work" && timeout "$SEND_SECONDS" "${cli[@]}" sms send --to 2348012345678 --sender ACME \
  --message "node smoke" --wait --json) || fail "msgflow sms send failed or took over ${SEND_SECONDS} s"
status=$(node -e 'console.log(JSON.parse(process.argv[1]).messages.map((m) => m.status).join(","))' "$result")
[ "$status" = delivered ] || fail "the SMS ended '$status', not delivered: $result"
echo "sms delivered on node $(node --version)"
stop_dev
grep -q '^stopping' "$log" || fail "msgflow dev did not stop in order"
echo "msgflow dev stopped"
# Its output stays readable: no line of kilobytes (webpack's bundle summary), no warning that is expected.
longest=$(awk '{ if (length($0) > max) max = length($0) } END { print max + 0 }' "$log")
[ "$longest" -le "$MAX_LINE" ] || fail "a line of $longest characters in msgflow dev's output (at most $MAX_LINE)"
! grep -q 'No workflows registered' "$log" || fail "msgflow dev printed the provider queue's expected warning"
