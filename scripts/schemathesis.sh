#!/usr/bin/env bash
# schemathesis against the sandbox's own OpenAPI document: generated valid and invalid requests for every
# operation must never get a 5xx, nor a response outside the documented schema.
#
#   bash scripts/schemathesis.sh            (CI runs it from .ci/run after the test suites)
#
# Installs schemathesis from PyPI into a cached venv, starts a sandbox on a free loopback port with an
# in-memory database, makes an account and a token through the sandbox CLI, runs schemathesis, stops the
# sandbox. Skipped (exit 0, with a message saying why) only when python3 or its venv/pip are missing.
#
# Environment: MSGFLOW_SCHEMATHESIS_EXAMPLES (default 40 per operation and phase),
# MSGFLOW_SCHEMATHESIS_SEED (default: random, printed by schemathesis for a re-run),
# MSGFLOW_SCHEMATHESIS_VENV (default ~/.cache/msgflow/schemathesis-<version>).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

SCHEMATHESIS_VERSION=4.32.5
EXAMPLES=${MSGFLOW_SCHEMATHESIS_EXAMPLES:-40}
VENV=${MSGFLOW_SCHEMATHESIS_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/msgflow/schemathesis-$SCHEMATHESIS_VERSION}
WORK=$(mktemp -d)
SANDBOX_PID=

cleanup() {
  if [ -n "$SANDBOX_PID" ] && kill -0 "$SANDBOX_PID" 2>/dev/null; then
    kill "$SANDBOX_PID" 2>/dev/null || true
    wait "$SANDBOX_PID" 2>/dev/null || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT

skip() {
  echo "schemathesis: SKIPPED — $*"
  exit 0
}

# --- schemathesis itself --------------------------------------------------------------------------------
command -v python3 >/dev/null 2>&1 || skip "python3 is not installed"
if [ ! -x "$VENV/bin/schemathesis" ] || [ "$("$VENV/bin/schemathesis" --version 2>/dev/null)" != "schemathesis, version $SCHEMATHESIS_VERSION" ]; then
  rm -rf "$VENV"
  python3 -m venv "$VENV" >/dev/null 2>&1 || skip "python3 cannot create a venv (its venv/ensurepip module is missing)"
  [ -x "$VENV/bin/pip" ] || skip "the venv has no pip"
  echo "installing schemathesis $SCHEMATHESIS_VERSION into $VENV"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$SCHEMATHESIS_VERSION"
fi
"$VENV/bin/schemathesis" --version

# --- a sandbox to test -------------------------------------------------------------------------------------
ADMIN_TOKEN="schemathesis-admin-$RANDOM$RANDOM$RANDOM"
# Limits raised so the fuzzer measures validation, not the rate limiter (429s are still checked, just rare).
node --import tsx src/cli/main.ts sandbox start --port 0 --db :memory: --admin-token "$ADMIN_TOKEN" \
  --rate-limit 1000000 --otp-ip-limit 1000000 --carrier-submit 50ms --carrier-final 50ms \
  >"$WORK/sandbox.out" 2>"$WORK/sandbox.err" </dev/null &
SANDBOX_PID=$!
for _ in $(seq 1 300); do
  grep -q '^sandbox: http' "$WORK/sandbox.out" 2>/dev/null && break
  kill -0 "$SANDBOX_PID" 2>/dev/null || { cat "$WORK/sandbox.err" >&2; echo "schemathesis: the sandbox did not start" >&2; exit 1; }
  sleep 0.1
done
BASE_URL=$(sed -n 's/^sandbox: \(http[^ ]*\)$/\1/p' "$WORK/sandbox.out" | head -n1)
[ -n "$BASE_URL" ] || { echo "schemathesis: the sandbox did not report its address" >&2; exit 1; }
echo "sandbox: $BASE_URL"

export MSGFLOW_SANDBOX_URL=${BASE_URL%/v1} MSGFLOW_SANDBOX_ADMIN_TOKEN=$ADMIN_TOKEN
cli() { node --import tsx src/cli/main.ts sandbox "$@" </dev/null; }
json_field() { python3 -c "import json,sys; print(json.load(sys.stdin)['$1'])"; }

ACCOUNT_ID=$(cli account create --name schemathesis --balance 1000000000 --json | json_field id)
cli sender add --account "$ACCOUNT_ID" --sender ACME >/dev/null
# Every scope but `webhooks`: a fuzzed webhook URL could name any host, and the sandbox would then deliver
# events there. Webhook operations are still exercised (they must answer 403 in-schema, never 5xx).
API_TOKEN=$(cli token create --account "$ACCOUNT_ID" --scopes sms:send,otp,voice,lookup,email:verify,reports,balance --json | json_field token)

# --- the run -----------------------------------------------------------------------------------------------
seed_args=()
[ -n "${MSGFLOW_SCHEMATHESIS_SEED:-}" ] && seed_args=(--seed "$MSGFLOW_SCHEMATHESIS_SEED")
status=0
# From the scratch directory: schemathesis keeps its example database in ./.schemathesis.
# One worker: with two threads, Python 3.11's `ast` (which Hypothesis uses to describe its filters) can fail
# with "SystemError: AST constructor recursion depth mismatch", a runtime error of the tool, not a finding.
(cd "$WORK" && "$VENV/bin/schemathesis" run "$BASE_URL/openapi.json" \
  --url "$BASE_URL" \
  --header "Authorization: Bearer $API_TOKEN" \
  --checks not_a_server_error,response_schema_conformance,status_code_conformance,content_type_conformance \
  --phases examples,coverage,fuzzing \
  --max-examples "$EXAMPLES" \
  --workers 1 \
  --request-timeout 10 \
  --suppress-health-check too_slow,filter_too_much \
  "${seed_args[@]}") || status=$?

# Errors the sandbox reported on its own (a 5xx it caught would be listed here too).
if grep -qi 'internal' "$WORK/sandbox.err"; then
  echo "schemathesis: the sandbox logged internal errors:" >&2
  grep -i 'internal' "$WORK/sandbox.err" | head -n 20 >&2
  status=1
fi
exit "$status"
