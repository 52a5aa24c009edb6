#!/usr/bin/env bash
# Makes sure Debian's chromium is at /usr/bin/chromium for the console's browser tests (test:console).
# Installs it with apt when missing and we are root (CI, the dev container); otherwise says what to run.
set -euo pipefail
if [ -x /usr/bin/chromium ]; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "chromium is missing: run 'sudo apt-get update && sudo apt-get install -y chromium' (Debian)" >&2
  exit 1
fi
echo "installing chromium with apt (first run only)…"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends chromium
