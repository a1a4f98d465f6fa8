#!/usr/bin/env bash
# Installs pgvector into the Postgres answering on 127.0.0.1:5432 when it lacks it, so CI's Postgres
# pass runs library search on pgvector's HNSW index as a production server with pgvector would (the
# exact-scan layout a server without it gets is tested in both passes: test/search/search-postgres.test.ts).
# Debian bookworm ships no pgvector package for its Postgres 15: this builds Debian trixie's source
# package against the server's headers. Measured: ~40 s (most of it the compile). Any failure only
# leaves the server as it was (the pass then runs on the exact-scan layout); it never fails CI.
set -uo pipefail
version=0.8.0
sha256=867a2c328d4928a5a9d6f052cd3bc78c7d60228a9b914ad32aa3db88e9de27b0
available=$(psql -h 127.0.0.1 -U postgres -Atc "SELECT count(*) FROM pg_available_extensions WHERE name = 'vector'" 2>/dev/null)
if [[ -z "$available" ]]; then echo "pgvector: the server did not answer psql"; exit 0; fi
if [[ "$available" != "0" ]]; then echo "pgvector: already available"; exit 0; fi
major=$(psql -h 127.0.0.1 -U postgres -Atc "SHOW server_version_num" | cut -c1-2)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(
  set -e
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "postgresql-server-dev-$major" make gcc >/dev/null
  cd "$work"
  curl -fsS -m 120 -o pgvector.tar.gz "http://deb.debian.org/debian/pool/main/p/pgvector/pgvector_${version}.orig.tar.gz"
  echo "$sha256  pgvector.tar.gz" | sha256sum -c --quiet
  tar xzf pgvector.tar.gz
  cd "pgvector-$version"
  make -s OPTFLAGS="" PG_CONFIG="/usr/lib/postgresql/$major/bin/pg_config" >/dev/null
  make -s install PG_CONFIG="/usr/lib/postgresql/$major/bin/pg_config" >/dev/null
) && echo "pgvector $version installed for Postgres $major" || echo "pgvector: not installed (the Postgres pass uses the exact-scan layout)"
exit 0
