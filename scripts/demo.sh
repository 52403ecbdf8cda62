#!/usr/bin/env bash
# The newcomer's first command (make demo): build, scaffold a project,
# serve it on the embedded SQLite store, push sensors, show the run; then
# replay a week of the example project on a virtual clock.
set -euo pipefail
cd "$(dirname "$0")/.."
bin="$PWD/bin/interlock"
work=$(mktemp -d "${TMPDIR:-/tmp}/interlock-demo.XXXXXX")
serve_pid=""
cleanup() { [ -n "$serve_pid" ] && kill "$serve_pid" 2>/dev/null && wait "$serve_pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "interlock init $work/project"
"$bin" init "$work/project" | sed -n '1,5p'
cd "$work/project"

step "interlock validate"
"$bin" validate

step "interlock serve   (embedded SQLite store: ./interlock.db; any free port)"
"$bin" serve --addr 127.0.0.1:0 >serve.out 2>serve.log &
serve_pid=$!
for _ in $(seq 1 100); do grep -q 'listening on' serve.out 2>/dev/null && break; sleep 0.1; done
url=$(sed -n 's/^interlock listening on //p' serve.out)
[ -n "$url" ] || { echo "serve did not start:"; cat serve.log; exit 1; }
echo "listening on $url"

step "interlock sensor put example row-count '{\"count\": 15432}'"
"$bin" sensor put example row-count '{"count": 15432}' --server "$url"
step "the same over HTTP: curl -X PUT $url/v1/pipelines/example/sensors/upstream-ready -d '{\"status\": \"ready\"}'"
if command -v curl >/dev/null; then
  curl -sS -X PUT -H 'Content-Type: application/json' -d '{"status": "ready"}' "$url/v1/pipelines/example/sensors/upstream-ready"; echo
else
  "$bin" sensor put example upstream-ready '{"status": "ready"}' --server "$url"
fi
sleep 1

step "interlock status example"
"$bin" status example --server "$url"
step "interlock events --pipeline example"
"$bin" events --pipeline example --server "$url"
step "interlock explain example"
"$bin" explain example --server "$url"

step "stopping serve (SIGTERM: graceful shutdown)"
kill "$serve_pid"; wait "$serve_pid" || true; serve_pid=""
echo "alerts printed by the console sink:"
grep -v '^interlock listening on ' serve.out | sed 's/^/  /' || echo "  (none)"

cd - >/dev/null
step "interlock simulate: a week of the example project's gold-revenue on a virtual clock"
"$bin" simulate --quiet examples/scenarios/gold-revenue-week.yaml
