#!/bin/sh
# Postgres of the chainpay containers: makes the cluster on the first start (the user POSTGRES_USER with
# POSTGRES_PASSWORD, scram-sha-256 over the network, the database POSTGRES_DB), then runs postgres as pid 1 on
# POSTGRES_LISTEN (all addresses unless set) and POSTGRES_PORT.
set -eu
bin=/usr/lib/postgresql/17/bin
: "${PGDATA:=/var/lib/postgresql/data}"
user=${POSTGRES_USER:-chainpay}
db=${POSTGRES_DB:-chainpay}
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  if [ -z "${POSTGRES_PASSWORD:-}" ]; then
    echo "postgres: POSTGRES_PASSWORD is required to make the cluster" >&2
    exit 1
  fi
  pwfile=$(mktemp)
  printf '%s\n' "$POSTGRES_PASSWORD" > "$pwfile"
  "$bin/initdb" --pgdata="$PGDATA" --username="$user" --pwfile="$pwfile" --auth-local=peer --auth-host=scram-sha-256 \
    --encoding=UTF8 --locale=C.UTF-8 >/dev/null
  rm -f "$pwfile"
  # initdb allows loopback connections only; the service connects from other containers.
  echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
  if [ "$db" != postgres ]; then
    echo "CREATE DATABASE \"$db\" OWNER \"$user\";" | "$bin/postgres" --single -D "$PGDATA" -j postgres >/dev/null
  fi
  echo "postgres: made the cluster in $PGDATA (user $user, database $db)"
fi
exec "$bin/postgres" -D "$PGDATA" -c listen_addresses="${POSTGRES_LISTEN:-*}" -p "${POSTGRES_PORT:-5432}" "$@"
