#!/usr/bin/env bash
# Usage: temporal-freeze.sh
# A message's report arrives while Temporal is frozen, and nothing waits on Temporal to accept it: starts
# `msgflow dev` (as node-smoke.sh does), forces the next message to a number to be delivered after
# REPORT_AFTER, sends it with `msgflow sms send --wait`, then stops the Temporal server (SIGSTOP) for
# FREEZE_SECONDS. Requires the sandbox's delivery log to show the report's first attempt answered 2xx while
# Temporal is stopped, and, once it continues (SIGCONT), the send to complete `delivered`.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/msgflow-freeze-XXXXXX")
log=$work/dev.log
TO=2348012345671
REPORT_AFTER=5s
FREEZE_SECONDS=20
SEND_SECONDS=300
temporal_pid=
# shellcheck source=scripts/lib/dev-stack.sh
source "$repo/scripts/lib/dev-stack.sh"
trap '[ -z "$temporal_pid" ] || kill -CONT "$temporal_pid" 2>/dev/null || true; dev_stop; rm -rf "$work"' EXIT

fail() {
  echo "temporal-freeze: $*; msgflow dev's output:" >&2
  cat "$log" >&2
  exit 1
}
cli() { (cd "$work" && "${dev_cli[@]}" "$@"); }
# The sandbox's deliveries carrying a message.delivered event, as "first-attempt-status state" lines.
delivered_reports() {
  cli sandbox deliveries --json | node -e '
    let input = "";
    process.stdin.on("data", (c) => (input += c)).on("end", () => {
      for (const d of JSON.parse(input).filter((d) => d.event_types.includes("message.delivered")))
        console.log(`${d.attempts[0]?.status ?? "none"} ${d.state}`);
    });'
}

dev_start
temporal_pid=$(ps -eo pid=,args= | awk -v db="--db-filename $work/" 'index($0, db) && !/awk/ { print $1 }' | head -1)
[ -n "$temporal_pid" ] || fail "no Temporal dev server found for $work"

cli sandbox outcome set --to "$TO" --outcome delivered --delay "$REPORT_AFTER" > /dev/null
cli sms send --to "$TO" --sender ACME --message "freeze check" --wait --json > "$work/result.json" 2>&1 &
send_pid=$!
# Frozen once the provider holds the message (its send answered), before its report is due.
for _ in $(seq 100); do
  cli sandbox inbox --to "$TO" --json | grep -q provider_message_id && break
  sleep 0.1
done
cli sandbox inbox --to "$TO" --json | grep -q provider_message_id || fail "the message never reached the sandbox"
kill -STOP "$temporal_pid"
echo "Temporal stopped (pid $temporal_pid) for ${FREEZE_SECONDS} s; the report is due after ${REPORT_AFTER}"
sleep "$FREEZE_SECONDS"
reports=$(delivered_reports)
kill -CONT "$temporal_pid"
echo "Temporal continued; the report's delivery while it was stopped: ${reports:-none}"
case "$reports" in
  2[0-9][0-9]\ *) ;;
  *) fail "the report's first attempt was not answered 2xx while Temporal was stopped (got: ${reports:-no delivery})" ;;
esac

wait "$send_pid" || fail "msgflow sms send --wait failed: $(cat "$work/result.json")"
status=$(sms_statuses "$(cat "$work/result.json")")
[ "$status" = delivered ] || fail "the SMS ended '$status', not delivered: $(cat "$work/result.json")"
echo "sms delivered after Temporal continued"
