# Sourced by scripts that need the whole stack (node-smoke.sh, python-example.sh): `msgflow dev` on free
# loopback ports, run from a temporary folder of its own so its .data/ never meets a checkout's.
# The caller sets `repo`, `work` (the folder), `log` (dev's output) and defines `fail MESSAGE`.
DEV_READY_SECONDS=300
DEV_STOP_SECONDS=30
dev_cli=(node "$repo/bin/msgflow.js")
dev_pid=

# Starts `msgflow dev` and waits until it says it is running.
dev_start() {
  local ports started
  read -r -a ports < <(node -e '
    const net = require("node:net");
    const servers = Array.from({ length: 6 }, () => net.createServer().listen(0, "127.0.0.1"));
    Promise.all(servers.map((s) => new Promise((r) => s.once("listening", r)))).then(() => {
      console.log(servers.map((s) => s.address().port).join(" "));
      servers.forEach((s) => s.close());
    });')
  # A session of its own (its pid is its process group's), so a kill of last resort reaches all it started.
  (cd "$work" && exec setsid "${dev_cli[@]}" dev \
    --temporal-port "${ports[0]}" --ui-port "${ports[1]}" --sandbox-port "${ports[2]}" \
    --ingress-port "${ports[3]}" --codec-port "${ports[4]}" --worker-metrics-port "${ports[5]}" \
    < /dev/null > "$log" 2>&1) &
  dev_pid=$!
  started=$SECONDS
  until grep -q '^msgflow dev is running:' "$log"; do
    kill -0 "$dev_pid" 2>/dev/null || fail "msgflow dev exited before it was ready"
    [ $((SECONDS - started)) -lt "$DEV_READY_SECONDS" ] || fail "msgflow dev was not ready within ${DEV_READY_SECONDS} s"
    sleep 1
  done
  echo "msgflow dev ready after $((SECONDS - started)) s"
}

# Stops it with SIGTERM (SIGKILL to its group after DEV_STOP_SECONDS), and any Temporal dev server it left.
dev_stop() {
  if [ -n "$dev_pid" ] && kill -0 "$dev_pid" 2>/dev/null; then
    kill -TERM "$dev_pid" 2>/dev/null || true
    for _ in $(seq "$DEV_STOP_SECONDS"); do
      kill -0 "$dev_pid" 2>/dev/null || break
      sleep 1
    done
    if kill -0 "$dev_pid" 2>/dev/null; then
      echo "msgflow dev did not stop within ${DEV_STOP_SECONDS} s: killed" >&2
      kill -KILL -- "-$dev_pid" 2>/dev/null || true
    fi
  fi
  # The Temporal dev server runs in a process group of its own and outlives a msgflow dev that crashed or was
  # killed; its state file is in our folder, which names it.
  ps -eo pid=,args= | awk -v db="--db-filename $work/" 'index($0, db) && !/awk/ { print $1 }' |
    xargs -r kill -KILL 2>/dev/null || true
}

# The statuses of the messages in a sendSms result (JSON), comma-separated.
sms_statuses() {
  node -e 'console.log(JSON.parse(process.argv[1]).messages.map((m) => m.status).join(","))' "$1"
}
