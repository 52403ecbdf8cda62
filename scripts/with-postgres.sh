#!/usr/bin/env bash
# Runs a command with one throwaway PostgreSQL started for it (initdb into a
# temporary directory, postgres on a free 127.0.0.1 port, fsync off) and
# INTERLOCK_TEST_POSTGRES_URL set to it; stops it and removes its files
# afterwards, whatever the command's outcome, and exits with the command's
# status. As root, initdb and postgres run as the postgres user (setpriv):
# both refuse root.
#   scripts/with-postgres.sh go test ./internal/store/postgres/
set -euo pipefail

bin=
if command -v initdb >/dev/null 2>&1 && [ -x "$(dirname "$(readlink -f "$(command -v initdb)")")/postgres" ]; then
  bin=$(dirname "$(readlink -f "$(command -v initdb)")") # Debian's /usr/bin links to a wrapper: the real directory
else
  bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n1 || true)
fi
[ -n "$bin" ] && [ -x "$bin/initdb" ] || { echo "with-postgres: PostgreSQL is not installed (apt-get install postgresql)" >&2; exit 1; }

as=()
dir=$(mktemp -d "${TMPDIR:-/tmp}/with-postgres.XXXXXX")
if [ "$(id -u)" = 0 ]; then
  id postgres >/dev/null 2>&1 || { echo "with-postgres: running as root and there is no postgres user" >&2; exit 1; }
  as=(setpriv --reuid=postgres --regid=postgres --init-groups --)
  chown postgres: "$dir"
fi
name=with-postgres what=PostgreSQL stop_signal=INT stop_tenths=100 # INT: a fast shutdown
server_log="$dir/postgres.log"
cleanup() { rm -rf "$dir"; }
# shellcheck source=scripts/server.sh
. "$(dirname "$0")/server.sh"

"${as[@]}" "$bin/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --locale=C --no-sync --no-instructions >"$dir/initdb.log" 2>&1 ||
  { echo "with-postgres: initdb failed:" >&2; cat "$dir/initdb.log" >&2; exit 1; }

start_server() {
  # setpriv execs, so $! is the postmaster.
  "${as[@]}" "$bin/postgres" -D "$dir/data" -c listen_addresses=127.0.0.1 -p "$1" \
    -c unix_socket_directories="$dir" -c fsync=off -c synchronous_commit=off -c full_page_writes=off \
    -c max_connections=200 >"$server_log" 2>&1 &
}
# Ready: pg_isready says so (or, without it, the port accepts connections).
server_ready() {
  if [ -x "$bin/pg_isready" ]; then "$bin/pg_isready" -q -h 127.0.0.1 -p "$1"; else ! port_free "$1"; fi
}
serve_on_free_port

export INTERLOCK_TEST_POSTGRES_URL="postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable"
echo "with-postgres: PostgreSQL at $INTERLOCK_TEST_POSTGRES_URL"
run_command "$@"
