# Sourced, not run, by with-dynamodb-local.sh and with-postgres.sh: what
# both do around their server. The caller sets name (its messages' prefix),
# what (the server's name), server_log, stop_signal and stop_tenths, and
# defines start_server PORT (starts the server in the background, its
# output to $server_log), server_ready PORT and cleanup (removes its
# files); then it calls serve_on_free_port and run_command "$@".

pid=
# stop_server stops the server if it runs: stop_signal, at most
# stop_tenths tenths of a second to exit, then KILL.
stop_server() {
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill "-$stop_signal" "$pid" 2>/dev/null || true
    for _ in $(seq "$stop_tenths"); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  fi
  pid=
}
trap 'stop_server; cleanup' EXIT
trap 'exit 130' INT TERM

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# serve_on_free_port starts the server on a free port (set in port) and
# waits until it is ready, at most 30 s. A port that is free now can be
# taken before the server binds it: it tries three.
serve_on_free_port() {
  for try in 1 2 3; do
    port=$((20000 + RANDOM % 20000))
    if port_free "$port"; then
      start_server "$port"
      pid=$!
      for _ in $(seq 300); do
        kill -0 "$pid" 2>/dev/null || break
        server_ready "$port" && break
        sleep 0.1
      done
      if kill -0 "$pid" 2>/dev/null && server_ready "$port"; then return 0; fi
      echo "$name: $what did not start on port $port (try $try):" >&2
      cat "$server_log" >&2
      stop_server
    else
      echo "$name: port $port is taken (try $try)" >&2
    fi
  done
  exit 1
}

# run_command runs the command and exits with its status (the EXIT trap
# stops the server).
run_command() {
  set +e
  "$@"
  local status=$?
  set -e
  exit "$status"
}
