#!/usr/bin/env bash
# Explores schedules on a fresh seed, where the tests use fixed ones (tests/verify.rs: seed 1):
# tests/verify.rs with LOCKBENCH_SEED set, then every mutant (`lockbench verify --mutants all`).
# The seed is printed first, so a failure replays with the same command:
#   scripts/explore-seeds.sh          # a seed drawn now
#   scripts/explore-seeds.sh 476888   # that seed
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in
  -h|--help) sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  "") seed=$(( ($(date +%s%N) / 1000) % 1000000 )) ;;
  *[!0-9]*) echo "seed $1: give a whole number, or nothing for a fresh one" >&2; exit 2 ;;
  *) seed=$1 ;;
esac
echo "seed $seed (replay: scripts/explore-seeds.sh $seed)"
status=0
LOCKBENCH_SEED=$seed cargo test --quiet --test verify || status=1
cargo run --quiet --release -- verify --mutants all --seed "$seed" || status=1
echo "seed $seed: $([ $status -eq 0 ] && echo 'nothing found' || echo 'a failure above')"
exit $status
