#!/usr/bin/env bash
# Installs the speech tools the voice tests build their audio fixtures with, from Debian's
# packages, when missing: espeak-ng (text to speech), lame (MP3) and sox (resampling), through
# apt-install.sh (one installer at a time). Idempotent: a second call finds them and stops.
set -euo pipefail

missing=()
command -v espeak-ng >/dev/null 2>&1 || missing+=(espeak-ng)
command -v lame >/dev/null 2>&1 || missing+=(lame)
command -v sox >/dev/null 2>&1 || missing+=(sox)
[ ${#missing[@]} -eq 0 ] && exit 0
echo "voice tools: installing ${missing[*]} from Debian's packages" >&2
"$(dirname "$0")/apt-install.sh" "${missing[@]}"
