#!/usr/bin/env bash
# Every mutant of every lock (and of seed 004's lkcs and lmutin) against the quick ledger: `lockbench claims --quick --mutant
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
    rows=$("$bin" claims --quick --mutant "$name" --format json </dev/null 2>/dev/null || true)
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
done < <(
    "$bin" verify --mutants "$which" --schedules 1 --format json 2>/dev/null | python3 -c '
import json, sys
try:
    mutants = json.load(sys.stdin)
except ValueError:
    mutants = []
for m in mutants:
    print(m["lock"] + "/" + m["mutant"] + "\t" + str(bool(m.get("equivalent"))).lower())
'
    # Seed 004's mutants run in the simulator (`sim --lkcs-rules mutant-*`), not in `verify`.
    for m in lkcs/k-plus-one lkcs/l-minus-one lmutin/l-minus-one; do
        case "$which" in all | "${m%%/*}" | "$m") printf '%s\tfalse\n' "$m" ;; esac
    done
)
echo "$survivors mutant(s) turn no quick row"
[ "$survivors" -eq 0 ]
