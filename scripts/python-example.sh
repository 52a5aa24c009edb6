#!/usr/bin/env bash
# Usage: python-example.sh
# Runs examples/python/send_sms.py (the Temporal Python SDK, payloads through msgflow's codec endpoint) against
# `msgflow dev`, started on free loopback ports in a temporary folder of its own, and requires its SMS
# delivered; a bad number first, which the example must refuse against msgflow's published JSON Schema (exit 2,
# naming the field). The venv lives in ~/.cache/msgflow/python-example-venv (made once, `pip install temporalio
# jsonschema` from PyPI). Fails, never skips, when python3, venv or pip is missing. Needs the checkout's node_modules and a
# Temporal CLI (`msgflow temporal ensure`).
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venv=${XDG_CACHE_HOME:-$HOME/.cache}/msgflow/python-example-venv
PACKAGES=('temporalio>=1.8,<2' 'jsonschema>=4.18,<5')
work=$(mktemp -d "${TMPDIR:-/tmp}/msgflow-python-example-XXXXXX")
log=$work/dev.log
RUN_SECONDS=300
# shellcheck source=scripts/lib/dev-stack.sh
source "$repo/scripts/lib/dev-stack.sh"
trap 'dev_stop; rm -rf "$work"' EXIT

fail() {
  echo "python-example: $*" >&2
  [ -s "$log" ] && { echo "msgflow dev's output:" >&2; cat "$log" >&2; }
  exit 1
}

# --- Python, a venv and temporalio: missing parts are failures, not skips -----------------------------------
command -v python3 >/dev/null || fail "python3 is missing (install Python 3.9 or later)"
if ! "$venv/bin/python" -c 'import temporalio, jsonschema' 2>/dev/null; then
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
  "$venv/bin/python" -m pip install -q "${PACKAGES[@]}" || fail "pip install ${PACKAGES[*]} failed"
fi
echo "python $("$venv/bin/python" -c 'import sys; print(sys.version.split()[0])'), temporalio $("$venv/bin/python" -m pip show temporalio | awk '/^Version/ { print $2 }')"

# --- A bad input is refused by the published schema, before anything starts ----------------------------------
refused=0
refusal=$("$venv/bin/python" "$repo/examples/python/send_sms.py" nonsense 2>&1) || refused=$?
[ "$refused" -eq 2 ] && [[ "$refusal" == *"recipients.0: not a phone number"* ]] ||
  fail "the example should refuse the number 'nonsense' (exit 2, naming recipients.0); it exited $refused: $refusal"
echo "python example: bad input refused ($refusal)"

# --- msgflow dev on free ports, in a folder of its own --------------------------------------------------------
dev_start

# --- The example: it reads .data/dev.env from the folder it runs in --------------------------------------------
result=$(cd "$work" && env -u MSGFLOW_CODEC_TOKEN -u TEMPORAL_ADDRESS -u TEMPORAL_NAMESPACE -u MSGFLOW_TASK_QUEUE \
  -u MSGFLOW_CODEC_URL timeout "$RUN_SECONDS" "$venv/bin/python" "$repo/examples/python/send_sms.py" \
  2348012345678 "python example") || fail "the Python example failed or took over ${RUN_SECONDS} s: ${result:-no output}"
status=$(sms_statuses "$result") ||
  fail "the Python example printed no result: $result"
[ "$status" = delivered ] || fail "the SMS ended '$status', not delivered: $result"
echo "python example: sms delivered ($result)"
