#!/usr/bin/env bash
# Installs the pgvector extension into this machine's PostgreSQL when it is missing: Debian's
# bookworm has no pgvector package for PostgreSQL 15, so it is built from Debian's own source
# tarball (checked against its SHA-256) with the server headers from postgresql-server-dev-<major>.
# Usage: deploy/local/pgvector.sh [pg_config]   (default: the newest /usr/lib/postgresql/*/bin/pg_config)
# Needs root for apt-get (apt-install.sh) and `make install`. Idempotent: a second call finds the extension and stops.
set -euo pipefail

VERSION=0.8.0
SHA256=867a2c328d4928a5a9d6f052cd3bc78c7d60228a9b914ad32aa3db88e9de27b0
SOURCE="http://deb.debian.org/debian/pool/main/p/pgvector/pgvector_${VERSION}.orig.tar.gz"

PG_CONFIG="${1:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)/pg_config}"
MAJOR="$(basename "$(dirname "$(dirname "$PG_CONFIG")")")"
SHARE="/usr/share/postgresql/$MAJOR"

if [ -f "$SHARE/extension/vector.control" ]; then
  echo "pgvector: already installed for PostgreSQL $MAJOR"
  exit 0
fi

# The server package ships pg_config too; the headers come only with postgresql-server-dev.
if [ ! -x "$PG_CONFIG" ] || [ ! -f "$("$PG_CONFIG" --includedir-server)/postgres.h" ]; then
  echo "pgvector: installing postgresql-server-dev-$MAJOR"
  APT_RECOMMENDS=1 "$(dirname "$0")/apt-install.sh" "postgresql-server-dev-$MAJOR"
fi

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
echo "pgvector: building $VERSION for PostgreSQL $MAJOR from $SOURCE"
curl -fsSL -m 120 -o "$WORK/pgvector.tar.gz" "$SOURCE"
echo "$SHA256  $WORK/pgvector.tar.gz" | sha256sum -c --quiet
tar -xzf "$WORK/pgvector.tar.gz" -C "$WORK"
cd "$WORK"/pgvector-*
# OPTFLAGS="" leaves out -march=native: the library may be loaded on another CPU of the same kind.
make -s OPTFLAGS="" PG_CONFIG="$PG_CONFIG" >/dev/null
make -s OPTFLAGS="" PG_CONFIG="$PG_CONFIG" install >/dev/null
echo "pgvector: installed $VERSION for PostgreSQL $MAJOR"
