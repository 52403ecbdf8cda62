#!/usr/bin/env bash
# make bench's saturation table (issue 28): the highest sustained
# sensor-write rate at which p99 stays under 50 ms — BenchmarkSaturation of
# internal/engine (SQLite, one process) and of internal/store/postgres (one
# engine, and three sharing the database) — beside each store's commit
# ceiling (BenchmarkCommit), with the machine's load before and after: on a
# shared machine the figures move with it. One package at a time (-p 1):
# two benchmarks side by side would measure each other.
#   GO=go scripts/bench-saturation.sh
set -euo pipefail
go=${GO:-go}
out=$(mktemp "${TMPDIR:-/tmp}/bench-saturation.XXXXXX")
trap 'rm -f "$out"' EXIT
load() { sed 's/.*load average: //' /proc/loadavg 2>/dev/null | cut -d' ' -f1-3; }
before=$(load)
"$go" test -p 1 -v -run '^$' -bench '^BenchmarkSaturation$' -benchtime 1x -timeout 10m \
  ./internal/engine/ ./internal/store/postgres/ | grep -v '^=== ' | tee "$out"
"$go" test -p 1 -run '^$' -bench '^BenchmarkCommit$' -benchtime 2s -timeout 10m \
  ./internal/store/sqlite/ ./internal/store/postgres/ | tee -a "$out"
after=$(load)
awk -v before="$before" -v after="$after" '
  /^pkg: / { pkg = $2 }
  function metric(unit,   i) { for (i = 2; i <= NF; i++) if ($i == unit) return $(i-1); return "?" }
  /^BenchmarkSaturation\/store=sqlite/ { sqlite = metric("sustained-writes/s") }
  /^BenchmarkSaturation\/replicas=1/   { pg1 = metric("sustained-writes/s") }
  /^BenchmarkSaturation\/replicas=3/   { pg3 = metric("sustained-writes/s") }
  /^BenchmarkCommit\/sync=FULL/        { sqliteCommit = metric("commits/s") }
  /^BenchmarkCommit-/ && pkg ~ /postgres/ { pgCommit = metric("commits/s") }
  END {
    ratio = (pg1 > 0) ? sprintf("%.1fx one replica", pg3 / pg1) : "?"
    printf "\n== saturation: sustained sensor writes (each a decision starting a run) with p99 < 50 ms\n"
    printf "   machine load (1, 5, 15 min): %s before, %s after; 2 s steps, doubled from 250/s, then bisected\n\n", before, after
    printf "| %-36s | %-20s | %-48s | %-22s |\n", "store", "sustained writes/s", "commit ceiling (BenchmarkCommit)", "target"
    printf "|%s|%s|%s|%s|\n", "--------------------------------------", "----------------------", "--------------------------------------------------", "------------------------"
    printf "| %-36s | %-20s | %-48s | %-22s |\n", "SQLite, one process (durable)", sqlite, sqliteCommit " commits/s, one committer (fsync each)", ">= 2000"
    printf "| %-36s | %-20s | %-48s | %-22s |\n", "PostgreSQL, one replica", pg1, pgCommit " commits/s, 16 committers, one pool", ""
    printf "| %-36s | %-20s | %-48s | %-22s |\n", "PostgreSQL, three replicas", pg3 " (" ratio ")", "(the same server)", ">= 2x one replica"
  }' "$out"
