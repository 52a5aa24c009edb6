#!/usr/bin/env bash
# Usage: python-example.sh
# Runs the Python examples (the Temporal Python SDK) against `msgflow dev` (which serves the Nexus service and
# makes its endpoint and caller namespace), started on free loopback ports in a temporary folder of its own:
# - examples/python/send_sms.py (payloads through msgflow's codec endpoint) must get its SMS delivered; a bad
#   number first, which it must refuse against msgflow's published JSON Schema (exit 2, naming the field);
# - examples/python/nexus_caller.py, workflows in the `callers` namespace calling the `msgflow` endpoint with
#   Temporal's default converter, must get an SMS delivered, a wrong OTP code refused and the right one verified.
#   `msgflow dev` must have made the namespace and the endpoint.
# The venv lives in ~/.cache/msgflow/python-example-venv (made once, `pip install temporalio jsonschema` from
# PyPI; remade when its temporalio predates Nexus). Fails, never skips, when python3, venv or pip is missing.
# Needs the checkout's node_modules and a Temporal CLI (`msgflow temporal ensure`).
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venv=${XDG_CACHE_HOME:-$HOME/.cache}/msgflow/python-example-venv
# temporalio 1.14 is the first with a Nexus caller (workflow.create_nexus_client); 1.14.0 itself runs it only with
# nexus-rpc 1.1 (pip picks a newer one it cannot import), so a fresh venv gets the newest 1.x.
PACKAGES=('temporalio>=1.14,<2' 'jsonschema>=4.18,<5')
CALLER_NAMESPACE=callers
ENDPOINT=msgflow
work=$(mktemp -d "${TMPDIR:-/tmp}/msgflow-python-example-XXXXXX")
log=$work/dev.log
RUN_SECONDS=300
# The caller's run takes seconds; an operation msgflow never answers would be retried for hours.
CALLER_SECONDS=120
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
# A venv whose packages are missing or below PACKAGES' floors is made again.
if ! "$venv/bin/python" -c '
import sys
import jsonschema, temporalio.workflow
sys.exit(0 if hasattr(temporalio.workflow, "create_nexus_client") else 1)' 2>/dev/null; then
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

# --- msgflow dev on free ports, in a folder of its own, serving the Nexus service ------------------------------
temporal_cli=$(cd "$work" && env -u TEMPORAL_ADDRESS "${dev_cli[@]}" temporal ensure) && [ -x "$temporal_cli" ] ||
  fail "no Temporal CLI (msgflow temporal ensure printed '${temporal_cli:-nothing}')"
dev_start
dev_setting() { sed -n "s/^$1=//p" "$work/.data/dev.env"; }
address=$(dev_setting TEMPORAL_ADDRESS)
# The caller's namespace and the endpoint into msgflow's namespace and workflows' queue: `msgflow dev` makes them.
temporal_op() { env -u TEMPORAL_CONFIG_FILE -u TEMPORAL_NAMESPACE "$temporal_cli" operator "$@" --address "$address"; }
temporal_op namespace describe --namespace "$CALLER_NAMESPACE" >/dev/null 2>&1 ||
  fail "msgflow dev did not make the namespace $CALLER_NAMESPACE"
endpoint=$(temporal_op nexus endpoint get --name "$ENDPOINT" -o json 2>&1) ||
  fail "msgflow dev did not make the Nexus endpoint $ENDPOINT: $endpoint"
[[ "$endpoint" == *"\"$(dev_setting MSGFLOW_TASK_QUEUE)\""* ]] ||
  fail "the Nexus endpoint $ENDPOINT does not target the workflows' queue: $endpoint"
# A new namespace takes a few seconds to reach the frontend's cache: until then its calls are refused.
for _ in $(seq 30); do
  env -u TEMPORAL_CONFIG_FILE "$temporal_cli" workflow list --namespace "$CALLER_NAMESPACE" --limit 1 \
    --address "$address" >/dev/null 2>&1 && break
  sleep 1
done

# --- The example: it reads .data/dev.env from the folder it runs in --------------------------------------------
result=$(cd "$work" && env -u MSGFLOW_CODEC_TOKEN -u TEMPORAL_ADDRESS -u TEMPORAL_NAMESPACE -u MSGFLOW_TASK_QUEUE \
  -u MSGFLOW_CODEC_URL timeout "$RUN_SECONDS" "$venv/bin/python" "$repo/examples/python/send_sms.py" \
  2348012345678 "python example") || fail "the Python example failed or took over ${RUN_SECONDS} s: ${result:-no output}"
status=$(sms_statuses "$result") ||
  fail "the Python example printed no result: $result"
[ "$status" = delivered ] || fail "the SMS ended '$status', not delivered: $result"
echo "python example: sms delivered ($result)"

# --- The Nexus caller: workflows in their own namespace, Temporal's default converter, msgflow's endpoint --------
called=$(cd "$work" && env -u TEMPORAL_NAMESPACE MSGFLOW_CALLER_NAMESPACE="$CALLER_NAMESPACE" \
  MSGFLOW_NEXUS_ENDPOINT="$ENDPOINT" timeout "$CALLER_SECONDS" "$venv/bin/python" "$repo/examples/python/nexus_caller.py" \
  2348012345678 2348012340001 2>&1) || fail "the Python Nexus caller failed or took over ${CALLER_SECONDS} s: ${called:-no output}"
echo "python nexus caller: sms delivered, a wrong code refused, the right one verified"
echo "$called"
