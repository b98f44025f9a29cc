#!/usr/bin/env bash
# Runs suites of bench-configs/ as sweeps with the release binary and renders each one's report:
# reports/<suite>/ holds the sweep (manifest.json, points.jsonl, results.json) and report.md with
# plots/ and hlog/. Running a suite again resumes it where it stopped (an interrupted suite loses
# only the point it was measuring) and renders the report anew.
#   scripts/run-suite.sh                     # every suite
#   scripts/run-suite.sh quick gme-mixes     # some
#   scripts/run-suite.sh --out /data/lb kex  # results under another root
# message-passing-paper is a simulator suite: it runs `lockbench sim --paper` and saves the
# tables as reports/message-passing-paper/sim.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
root=reports
suites=()
while [ $# -gt 0 ]; do
  case "$1" in
    --out) root="$2"; shift 2 ;;
    -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) suites+=("$1"); shift ;;
  esac
done
if [ ${#suites[@]} -eq 0 ]; then
  for f in bench-configs/*.toml; do suites+=("$(basename "$f" .toml)"); done
fi
for s in "${suites[@]}"; do
  [ -f "bench-configs/$s.toml" ] || { echo "no suite bench-configs/$s.toml (ls bench-configs/)" >&2; exit 2; }
done
cargo build --profile figures --quiet
bin=target/figures/lockbench
status=0
for s in "${suites[@]}"; do
  cfg="bench-configs/$s.toml"
  out="$root/$s"
  echo "== $s"
  if grep -q '^\[\[figure\]\]' "$cfg"; then
    mkdir -p "$out"
    "$bin" sim --paper "$cfg" | tee "$out/sim.txt" || status=$?
    continue
  fi
  if [ -f "$out/manifest.json" ]; then
    "$bin" sweep "$cfg" --resume "$out" || {
      code=$?
      [ $code = 2 ] && echo "$out holds a sweep of another version of $cfg: move it away to start anew" >&2
      status=$code
      continue
    }
  else
    "$bin" sweep "$cfg" --out "$out" || status=$?
  fi
  "$bin" report "$out" || status=$?
done
exit $status
