#!/usr/bin/env bash
# Usage: python-example.sh
# Runs examples/python/send_sms.py (the Temporal Python SDK, payloads through msgflow's codec endpoint) against
# `msgflow dev`, started on free loopback ports in a temporary folder of its own, and requires its SMS
# delivered. The venv lives in ~/.cache/msgflow/python-example-venv (made once, `pip install temporalio` from
# PyPI). Fails, never skips, when python3, venv or pip is missing. Needs the checkout's node_modules and a
# Temporal CLI (`msgflow temporal ensure`).
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cli=("$repo/node_modules/.bin/tsx" "$repo/src/cli/main.ts")
venv=${XDG_CACHE_HOME:-$HOME/.cache}/msgflow/python-example-venv
TEMPORALIO='temporalio>=1.8,<2'
work=$(mktemp -d "${TMPDIR:-/tmp}/msgflow-python-example-XXXXXX")
log=$work/dev.log
READY_SECONDS=300
STOP_SECONDS=30
RUN_SECONDS=300
dev_pid=

stop_dev() {
  if [ -n "$dev_pid" ] && kill -0 "$dev_pid" 2>/dev/null; then
    kill -TERM "$dev_pid" 2>/dev/null || true
    for _ in $(seq "$STOP_SECONDS"); do
      kill -0 "$dev_pid" 2>/dev/null || break
      sleep 1
    done
    kill -0 "$dev_pid" 2>/dev/null && kill -KILL -- "-$dev_pid" 2>/dev/null || true
  fi
  # The Temporal dev server runs in a process group of its own; its state file is in our folder, which names it.
  ps -eo pid=,args= | awk -v db="--db-filename $work/" 'index($0, db) && !/awk/ { print $1 }' |
    xargs -r kill -KILL 2>/dev/null || true
}
trap 'stop_dev; rm -rf "$work"' EXIT

fail() {
  echo "python-example: $*" >&2
  [ -s "$log" ] && { echo "msgflow dev's output:" >&2; cat "$log" >&2; }
  exit 1
}

# --- Python, a venv and temporalio: missing parts are failures, not skips -----------------------------------
command -v python3 >/dev/null || fail "python3 is missing (install Python 3.9 or later)"
if ! "$venv/bin/python" -c 'import temporalio' 2>/dev/null; then
  rm -rf "$venv"
  mkdir -p "$(dirname "$venv")"
  if ! python3 -m venv "$venv" 2>"$work/venv.err"; then
    # Debian's python3 lacks venv/ensurepip until python3-venv is installed: as root, install it.
    package="python$(python3 -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')-venv"
    [ "$(id -u)" -eq 0 ] || fail "python3 -m venv failed ($(cat "$work/venv.err")): run 'sudo apt-get install -y $package'"
    echo "installing $package with apt (first run only)…"
    DEBIAN_FRONTEND=noninteractive apt-get update -q && DEBIAN_FRONTEND=noninteractive \
      apt-get install -y -q --no-install-recommends "$package" || fail "apt-get could not install $package"
    rm -rf "$venv"
    python3 -m venv "$venv" || fail "python3 -m venv failed after installing $package"
  fi
  "$venv/bin/python" -m pip --version >/dev/null 2>&1 || fail "pip is missing in the venv $venv"
  "$venv/bin/python" -m pip install -q "$TEMPORALIO" || fail "pip install $TEMPORALIO failed"
fi
echo "python $("$venv/bin/python" -c 'import sys; print(sys.version.split()[0])'), temporalio $("$venv/bin/python" -m pip show temporalio | awk '/^Version/ { print $2 }')"

# --- msgflow dev on free ports, in a folder of its own --------------------------------------------------------
read -r -a ports < <(node -e '
  const net = require("node:net");
  const servers = Array.from({ length: 6 }, () => net.createServer().listen(0, "127.0.0.1"));
  Promise.all(servers.map((s) => new Promise((r) => s.once("listening", r)))).then(() => {
    console.log(servers.map((s) => s.address().port).join(" "));
    servers.forEach((s) => s.close());
  });')
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

# --- The example: it reads .data/dev.env from the folder it runs in --------------------------------------------
result=$(cd "$work" && env -u MSGFLOW_CODEC_TOKEN -u TEMPORAL_ADDRESS -u TEMPORAL_NAMESPACE -u MSGFLOW_TASK_QUEUE \
  -u MSGFLOW_CODEC_URL timeout "$RUN_SECONDS" "$venv/bin/python" "$repo/examples/python/send_sms.py" \
  2348012345678 "python example") || fail "the Python example failed or took over ${RUN_SECONDS} s: ${result:-no output}"
status=$(node -e 'console.log(JSON.parse(process.argv[1]).messages.map((m) => m.status).join(","))' "$result") ||
  fail "the Python example printed no result: $result"
[ "$status" = delivered ] || fail "the SMS ended '$status', not delivered: $result"
echo "python example: sms delivered ($result)"
