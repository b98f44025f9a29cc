#!/usr/bin/env bash
# Runs every suite in bench-configs/ (or the ones named) with the release binary, saving each
# under reports/<suite>/. Extra arguments after `--` go to every run (they override the file).
#   scripts/run-suite.sh                 # all suites
#   scripts/run-suite.sh gme-mixes kex   # some
#   scripts/run-suite.sh kex -- --repeat 5
set -euo pipefail
cd "$(dirname "$0")/.."
suites=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do suites+=("$1"); shift; done
[ "${1:-}" = "--" ] && shift
if [ ${#suites[@]} -eq 0 ]; then
  for f in bench-configs/*.toml; do suites+=("$(basename "$f" .toml)"); done
fi
cargo build --release --quiet
status=0
for s in "${suites[@]}"; do
  cfg="bench-configs/$s.toml"
  [ -f "$cfg" ] || { echo "no suite $cfg" >&2; exit 2; }
  echo "== $s"
  target/release/lockbench run --config "$cfg" --out "reports/$s" "$@" || status=$?
done
exit $status
