#!/usr/bin/env bash
# Installs Chromium from Debian's packages when no Chromium or Chrome is on the PATH, for the web
# console's browser tests (test-e2e/console.e2e.test.ts drives it with playwright-core), through
# apt-install.sh (one installer at a time). Prints the executable's path. Idempotent: a second call
# finds it and stops.
set -euo pipefail

find_browser() {
  for name in chromium chromium-browser google-chrome-stable google-chrome; do
    if command -v "$name" >/dev/null 2>&1; then command -v "$name"; return 0; fi
  done
  return 1
}

if find_browser; then exit 0; fi
echo "chromium: installing Debian's chromium package" >&2
"$(dirname "$0")/apt-install.sh" chromium
find_browser
