#!/usr/bin/env bash
# Every mutant of every lock against the quick ledger: `lockbench claims --quick --mutant
# LOCK/NAME` must turn at least one row it reaches from `holds` (tests/claims_mutants.rs runs a
# representative few; this is the whole sweep). Mutants argued equivalent in their lock's file
# are listed and skipped (the catalogue comes from `verify --mutants` at one schedule each).
# Prints one line per mutant and exits 1 when one turns no row.
#   scripts/claims-mutants.sh            every mutant
#   scripts/claims-mutants.sh glb        the mutants of one lock
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
bin=target/release/lockbench
which=${1:-all}
survivors=0
while IFS=$'\t' read -r name equivalent; do
    if [ "$equivalent" = "true" ]; then
        echo "equivalent  $name (argued in its lock's file)"
        continue
    fi
    rows=$("$bin" claims --quick --mutant "$name" --format json 2>/dev/null || true)
    verdicts=$(printf '%s' "$rows" | python3 -c '
import json, sys
try:
    rows = json.load(sys.stdin)
except ValueError:
    rows = []
turned = [r["id"] + " " + r["verdict"] for r in rows if r["verdict"] != "holds"]
print(("turned  " + ", ".join(turned)) if turned else ("SURVIVES " + str(len(rows)) + " rows hold"))
')
    echo "$verdicts  $name"
    case "$verdicts" in SURVIVES*) survivors=$((survivors + 1)) ;; esac
done < <("$bin" verify --mutants "$which" --schedules 1 --format json 2>/dev/null | python3 -c '
import json, sys
for m in json.load(sys.stdin):
    print(m["lock"] + "/" + m["mutant"] + "\t" + str(bool(m.get("equivalent"))).lower())
')
echo "$survivors mutant(s) turn no quick row"
[ "$survivors" -eq 0 ]
