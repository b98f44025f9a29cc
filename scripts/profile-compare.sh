#!/usr/bin/env bash
# The release profile against the figures' profile (thin LTO, one codegen unit), side by side:
# builds both from this checkout, timing each build, then runs `lockbench fidelity` with each
# binary in turn, ROUNDS times (default 3), so load drifting over the session hits both alike.
# Usage: scripts/profile-compare.sh [OUT_DIR] [ROUNDS]   (default reports/profiles, 3)
# Run it on an idle machine (scripts/check-server.sh says what else runs).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-reports/profiles}
rounds=${2:-3}
mkdir -p "$out"
for profile in release figures; do
  start=$(date +%s)
  cargo build --profile "$profile" --quiet
  echo "$profile: built in $(( $(date +%s) - start )) s (incremental when its target existed)" | tee -a "$out/builds.txt"
done
for i in $(seq 1 "$rounds"); do
  for profile in release figures; do
    echo "== $profile, round $i"
    "target/$profile/lockbench" fidelity --lock ticket,mcs,parking-lot-mutex --threads 1,2 \
      --rounds 5 --duration 200ms --out "$out/$profile-$i"
  done
done | tee "$out/fidelity.txt"
