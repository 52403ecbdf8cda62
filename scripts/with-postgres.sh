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
pid=
stop() {
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill -INT "$pid" 2>/dev/null || true # a fast shutdown
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  fi
  rm -rf "$dir"
}
trap stop EXIT
trap 'exit 130' INT TERM

"${as[@]}" "$bin/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --locale=C --no-sync --no-instructions >"$dir/initdb.log" 2>&1 ||
  { echo "with-postgres: initdb failed:" >&2; cat "$dir/initdb.log" >&2; exit 1; }

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
# Ready: pg_isready says so (or, without it, the port accepts connections).
ready() {
  if [ -x "$bin/pg_isready" ]; then "$bin/pg_isready" -q -h 127.0.0.1 -p "$1"; else ! port_free "$1"; fi
}

# A port that is free now can be taken before postgres binds it: try three.
for try in 1 2 3; do
  port=$((20000 + RANDOM % 20000))
  port_free "$port" || continue
  # setpriv execs, so $! is the postmaster.
  "${as[@]}" "$bin/postgres" -D "$dir/data" -c listen_addresses=127.0.0.1 -p "$port" \
    -c unix_socket_directories="$dir" -c fsync=off -c synchronous_commit=off -c full_page_writes=off \
    -c max_connections=200 >"$dir/postgres.log" 2>&1 &
  pid=$!
  # Ready when it accepts connections; bounded at 30 s.
  for _ in $(seq 300); do
    kill -0 "$pid" 2>/dev/null || break
    ready "$port" && break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null && ready "$port"; then break; fi
  echo "with-postgres: PostgreSQL did not start on port $port (try $try):" >&2
  cat "$dir/postgres.log" >&2
  if kill -0 "$pid" 2>/dev/null; then kill -9 "$pid" 2>/dev/null || true; fi
  wait "$pid" 2>/dev/null || true
  pid=
  [ "$try" = 3 ] && exit 1
done

export INTERLOCK_TEST_POSTGRES_URL="postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable"
echo "with-postgres: PostgreSQL at $INTERLOCK_TEST_POSTGRES_URL"
set +e
"$@"
status=$?
set -e
exit "$status"
