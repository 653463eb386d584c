#!/usr/bin/env bash
# Installs Debian packages for the project's scripts and tests, one installer at a time: test
# files run in parallel workers and may each find a tool missing on a fresh machine (dpkg allows
# one apt-get at a time and refuses the second at once). Waits for this script's lock, then for
# dpkg's own (apt run by anyone else), installs only what is still missing, and when that install
# fails runs `apt-get update` and tries once more. Needs root, or sudo without a password.
# Usage: deploy/local/apt-install.sh package...   (APT_RECOMMENDS=1 installs recommended packages too)
set -euo pipefail

[ $# -gt 0 ] || { echo "usage: $0 package..." >&2; exit 2; }
sudo=()
[ "$(id -u)" -eq 0 ] || sudo=(sudo -n)

# One path for every caller, writable by any user (made with umask 0), opened without creating it:
# a file another user created in /tmp may not be opened for writing.
lock=/tmp/hangar-apt-install.lock
[ -e "$lock" ] || (umask 0 && : >>"$lock") 2>/dev/null || true
exec 9<"$lock"
# Within the callers' own bounds (10 minutes and more).
flock -w 480 9 || { echo "apt-install: another installer held the lock for 8 minutes" >&2; exit 1; }

missing=()
for package in "$@"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q '^install ok installed$' || missing+=("$package")
done
[ ${#missing[@]} -eq 0 ] && exit 0

recommends=(--no-install-recommends)
[ "${APT_RECOMMENDS:-0}" = 1 ] && recommends=()
apt=("${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -q -o DPkg::Lock::Timeout=300)
"${apt[@]}" install -y "${recommends[@]}" "${missing[@]}" >/dev/null 2>&1 ||
  { "${apt[@]}" update >/dev/null && "${apt[@]}" install -y "${recommends[@]}" "${missing[@]}" >/dev/null; }
