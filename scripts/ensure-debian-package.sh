#!/usr/bin/env bash
# Usage: ensure-debian-package.sh PACKAGE EXECUTABLE
# Makes sure a Debian package some tests need is installed (chromium for the console's browser tests,
# prometheus for the dashboard check): nothing to do when EXECUTABLE exists; installs PACKAGE with apt,
# non-interactively, when we are root (CI, the dev container); otherwise says what to run. A package's
# service is never started here: the tests run their own processes.
set -euo pipefail
package=$1
executable=$2
if [ -x "$executable" ]; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "$package is missing: run 'sudo apt-get update && sudo apt-get install -y $package' (Debian)" >&2
  exit 1
fi
echo "installing $package with apt (first run only)…"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "$package"
