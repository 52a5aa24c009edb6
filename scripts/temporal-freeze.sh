#!/usr/bin/env bash
# Usage: temporal-freeze.sh
# A message's report arrives while Temporal is frozen, and nothing waits on Temporal to accept it: starts
# `msgflow dev` (as node-smoke.sh does), forces the next message to a number to be delivered after
# REPORT_AFTER, sends it with `msgflow sms send --wait`, then stops the Temporal server (SIGSTOP) for
# FREEZE_SECONDS. Requires the sandbox's delivery log to show the report's first attempt answered 2xx while
# Temporal is stopped, and, once it continues (SIGCONT), the send to complete `delivered`. While Temporal is
# stopped it also requires: `msgflow sms send` with a bad number to exit 2 naming it (it does not wait for
# Temporal); a second `msgflow ingress` started then (its own port, the same store) to listen, report ready and
# answer a signed report of another waiting send 2xx; and that send to complete `delivered` after SIGCONT.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/msgflow-freeze-XXXXXX")
log=$work/dev.log
TO=2348012345671
# Its report comes only from the second ingress: the sandbox's own is far later.
TO_SECOND=2348012345672
REPORT_AFTER=5s
FREEZE_SECONDS=20
SEND_SECONDS=300
temporal_pid=
# shellcheck source=scripts/lib/dev-stack.sh
source "$repo/scripts/lib/dev-stack.sh"
second_ingress=
trap '[ -z "$temporal_pid" ] || kill -CONT "$temporal_pid" 2>/dev/null || true; [ -z "$second_ingress" ] || kill "$second_ingress" 2>/dev/null || true; dev_stop; rm -rf "$work"' EXIT

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

# The provider message id of the one message to a number, once the sandbox holds it.
message_id_to() {
  for _ in $(seq 100); do
    cli sandbox inbox --to "$1" --json | grep -q provider_message_id && break
    sleep 0.1
  done
  cli sandbox inbox --to "$1" --json |
    node -e 'let s = ""; process.stdin.on("data", (c) => (s += c)).on("end", () => console.log(JSON.parse(s)[0]?.provider_message_id ?? ""))'
}
# A signed message.delivered report of message $2, posted to the ingress at $1; prints the HTTP status (and says
# when the ingress rejected the event).
post_delivered() {
  local secret
  secret=$(grep '^MSGFLOW_WEBHOOK_SECRETS=' "$work/.data/dev.env" | cut -d= -f2- | cut -d, -f1)
  (cd "$repo" && node --import tsx -e '
    import { formatTimestamp } from "./src/api/common.ts";
    import { signWebhook } from "./src/api/signature.ts";
    const [url, secret, id] = process.argv.slice(1);
    const body = JSON.stringify({ event: "message.delivered", mobile_number: "+2348012345672",
      provider_message_id: id, status: "delivered", timestamp: formatTimestamp(new Date()) });
    const headers = signWebhook([secret], `evt_freeze_${Date.now()}`, Math.floor(Date.now() / 1000), body);
    const response = await fetch(url, { method: "POST", headers: { ...headers, "content-type": "application/json" }, body });
    const { rejected } = await response.json();
    console.log(rejected?.length ? `${response.status} with the event rejected` : response.status);' "$1/webhooks/messaging" "$secret" "$2")
}

cli sandbox outcome set --to "$TO" --outcome delivered --delay "$REPORT_AFTER" > /dev/null
cli sandbox outcome set --to "$TO_SECOND" --outcome delivered --delay 1h > /dev/null
cli sms send --to "$TO" --sender ACME --message "freeze check" --wait --json > "$work/result.json" 2>&1 &
send_pid=$!
cli sms send --to "$TO_SECOND" --sender ACME --message "second ingress check" --wait --json > "$work/second.json" 2>&1 &
second_send_pid=$!
# Frozen once the provider holds both messages (their sends answered), before the first one's report is due.
[ -n "$(message_id_to "$TO")" ] || fail "the message never reached the sandbox"
second_id=$(message_id_to "$TO_SECOND")
[ -n "$second_id" ] || fail "the second message never reached the sandbox"
kill -STOP "$temporal_pid"
frozen_at=$SECONDS
echo "Temporal stopped (pid $temporal_pid) for ${FREEZE_SECONDS} s; the report is due after ${REPORT_AFTER}"

# A typo is answered without waiting for Temporal.
code=0
typo=$(cli sms send --to nonsense --sender ACME --message "typo" 2>&1) || code=$?
[ "$code" -eq 2 ] || fail "sms send --to nonsense exited $code, not 2, while Temporal was stopped: $typo"
echo "$typo" | grep -q recipients || fail "sms send --to nonsense did not name the recipients: $typo"
echo "sms send --to nonsense: exit 2 naming the recipients, while Temporal was stopped"

# A second ingress starts, is ready and answers while Temporal is stopped.
second_port=$(node -e 'const s = require("node:net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })')
(cd "$work" && MSGFLOW_INGRESS_HOST=127.0.0.1 MSGFLOW_INGRESS_PORT=$second_port exec "${dev_cli[@]}" ingress \
  < /dev/null > "$work/second-ingress.log" 2>&1) &
second_ingress=$!
second_url=http://127.0.0.1:$second_port
for _ in $(seq 150); do
  [ "$(curl -s -o /dev/null -w '%{http_code}' "$second_url/readyz")" = 200 ] && break
  kill -0 "$second_ingress" 2>/dev/null || fail "the second ingress exited: $(cat "$work/second-ingress.log")"
  sleep 0.1
done
[ "$(curl -s -o /dev/null -w '%{http_code}' "$second_url/readyz")" = 200 ] ||
  fail "the second ingress was not ready while Temporal was stopped: $(cat "$work/second-ingress.log")"
answer=$(post_delivered "$second_url" "$second_id")
case "$answer" in
  2[0-9][0-9]) ;;
  *) fail "the second ingress answered the report $answer while Temporal was stopped" ;;
esac
echo "a second ingress started while Temporal was stopped: ready, and answered a report $answer"

left=$((FREEZE_SECONDS - (SECONDS - frozen_at)))
[ "$left" -le 0 ] || sleep "$left"
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
for _ in $(seq 120); do kill -0 "$second_send_pid" 2>/dev/null || break; sleep 1; done
kill -0 "$second_send_pid" 2>/dev/null && fail "the second send was still waiting 2 minutes after Temporal continued"
wait "$second_send_pid" || fail "the second send failed: $(cat "$work/second.json")"
status=$(sms_statuses "$(cat "$work/second.json")")
[ "$status" = delivered ] || fail "the second send ended '$status', not delivered: $(cat "$work/second.json")"
echo "the report answered by the second ingress reached its send after Temporal continued: delivered"
