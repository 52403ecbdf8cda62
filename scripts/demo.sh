#!/usr/bin/env bash
# The newcomer's first command (make demo): build, scaffold a project,
# serve it on the embedded SQLite store, push sensors, show the run; then
# replay a week of the example project on a virtual clock, show what
# validate says of broken files, and end with the dashboard of the served
# project: its URL, and a screenshot in docs/screenshots/demo.png when
# Chromium is installed (/usr/bin/chromium, or INTERLOCK_CHROMIUM).
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

echo "alerts printed so far by the console sink:"
grep -v '^interlock listening on ' serve.out | sed 's/^/  /' || echo "  (none)"

cd - >/dev/null
step "interlock simulate: a week of the example project's gold-revenue on a virtual clock"
"$bin" simulate --quiet examples/scenarios/gold-revenue-week.yaml

step "interlock validate --config examples/interlock.yaml examples/broken (every error, with file, line and field; exit 1 is expected)"
rc=0; "$bin" validate --config examples/interlock.yaml examples/broken || rc=$?
[ "$rc" -eq 1 ] || { echo "validate exited $rc, want 1 (the broken examples refused)" >&2; exit 1; }
echo "(exit 1, as expected: the broken examples were refused)"

step "the dashboard of the served project"
chromium=${INTERLOCK_CHROMIUM:-/usr/bin/chromium}
shot=docs/screenshots/demo.png
if [ -x "$chromium" ]; then
  mkdir -p "$(dirname "$shot")"
  # The flags that work headless here (as root, on a closed network).
  if timeout 60 "$chromium" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
      --disable-background-networking --disable-component-update --disable-sync \
      --user-data-dir="$work/chromium" --window-size=1280,720 --hide-scrollbars \
      --screenshot="$PWD/$shot" "$url/" >"$work/chromium.log" 2>&1; then
    echo "screenshot of the overview: $shot"
  else
    echo "Chromium could not take the screenshot:"; tail -5 "$work/chromium.log"
  fi
else
  echo "no screenshot: Chromium is not installed (apt-get install chromium, or set INTERLOCK_CHROMIUM)"
fi
if [ -t 0 ] && [ -t 1 ]; then
  echo "serve keeps running until you press Ctrl-C; the dashboard:"
  echo "$url/"
  trap 'echo' INT
  wait "$serve_pid" || true
else
  echo "the dashboard (serve stops when the demo ends; run it yourself with interlock serve):"
  echo "$url/"
fi
