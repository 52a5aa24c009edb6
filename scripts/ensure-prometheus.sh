#!/usr/bin/env bash
# Makes sure Debian's Prometheus server is installed for the dashboard test (test/ops/dashboard.test.ts), which
# evaluates every panel query of the Grafana dashboard against a real Prometheus scraping msgflow processes.
# Installs it with apt when missing and we are root (CI, the dev container); otherwise says what to run.
# The package's service is never started here: the test runs its own server on a free port.
set -euo pipefail
if command -v prometheus >/dev/null 2>&1 || [ -x /usr/bin/prometheus ]; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "prometheus is missing: run 'sudo apt-get update && sudo apt-get install -y prometheus' (Debian)" >&2
  exit 1
fi
echo "installing prometheus with apt (first run only)…"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
# policy-rc.d: a container has no init to start the package's service with; the test starts its own.
apt-get install -y -q --no-install-recommends prometheus
