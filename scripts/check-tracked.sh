#!/usr/bin/env bash
# make lint: no build output in the repository. Fails when a tracked file is
# an executable binary (ELF, Mach-O, PE, wasm) anywhere, or is larger than
# 1 MiB outside a testdata/ folder. Build outputs belong in .gitignore.
set -euo pipefail
cd "$(dirname "$0")/.."
limit=$((1024 * 1024))
bad=0
while IFS= read -r -d '' f; do
  [ -f "$f" ] || continue # deleted in the working tree
  magic=$(head -c 4 "$f" | od -An -tx1 | tr -d ' \n')
  case "$magic" in
  7f454c46 | cffaedfe | cefaedfe | feedface | feedfacf | cafebabe | 0061736d | 4d5a*)
    echo "tracked executable binary: $f (remove it with git rm --cached and ignore it)"
    bad=1
    continue
    ;;
  esac
  case "$f" in testdata/* | */testdata/*) continue ;; esac
  size=$(wc -c <"$f")
  if [ "$size" -gt "$limit" ]; then
    echo "tracked file over 1 MiB outside testdata/: $f ($size bytes)"
    bad=1
  fi
done < <(git ls-files -z)
exit "$bad"
