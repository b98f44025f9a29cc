#!/usr/bin/env bash
# The simulator's speed, so that a regression shows: each point's wall time and events per
# second (the median of ROUNDS runs, with the lowest and highest), then the rmr all-locks
# adversarial sweep's time. Not a test: times on a loaded machine move; compare two binaries
# in the same hour (BIN=old scripts/bench-sim.sh; BIN=new scripts/bench-sim.sh), and time a
# change by one point with both at once (scripts/pair-times.py OLD NEW sim ...).
#   scripts/bench-sim.sh [ROUNDS] [quick|full]   (default 3 rounds, quick)
# quick: n = 100 and 200 points, n = 500 with 100 requests, and RA2 at n = 500 with 30 requests
# (seconds), then the floors (scripts/lib/sim-floors.c, when cc is there): ns per RA2 merge in
# the first-level caches, from the last level and from memory as at n = 500, and ns per
# broadcast copy at n = 500: its logarithm alone, with an inbox record and its entry, and kept
# by blocks as the simulator now keeps them; full: also Fig. 6(f)'s n = 500 point
# alone and with RA2 beside it, and the rmr sweep (minutes). BIN defaults to
# target/release/lockbench.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
size=${2:-quick}
bin=${BIN:-target/release/lockbench}
[ -x "$bin" ] || { echo "no $bin: build it (cargo build --release) or set BIN" >&2; exit 2; }
points=(
    "token-gme n=100|--algo token-gme --n 100 --requests 500"
    "token-gme n=200|--algo token-gme --n 200 --requests 500"
    "token-gme n=500 100 requests|--algo token-gme --n 500 --requests 100 --seed 1"
    "ra2 n=100 m=50|--algo ra2 --n 100 --m 50 --requests 500"
    "token-gme n=40 m=2 crash|--algo token-gme --n 40 --m 2 --requests 500 --crash 3@5000"
    "ra2 n=500 m=50 30 requests|--algo ra2 --n 500 --m 50 --requests 30 --seed 1"
)
if [ "$size" = full ]; then
    points+=(
        "token-gme n=500|--algo token-gme --n 500 --requests 500"
        "token-gme,ra2 n=500 m=50|--algo token-gme,ra2 --n 500 --m 50 --requests 500 --seed 1"
    )
fi
printf '%-32s %10s %10s %10s %12s\n' point "wall s" "min s" "max s" "Mev/s"
for p in "${points[@]}"; do
    name=${p%%|*}
    read -r -a args <<<"${p#*|}"
    for _ in $(seq "$rounds"); do
        s=$(date +%s.%N)
        "$bin" sim "${args[@]}" --jobs 1 --format json >"${TMPDIR:-/tmp}/bench-sim.$$.json" || true
        e=$(date +%s.%N)
        python3 - "$s" "$e" "${TMPDIR:-/tmp}/bench-sim.$$.json" <<'PY'
import json, sys
rows = json.load(open(sys.argv[3]))
ev = sum(r["events"] for r in rows)
run = sum(r["wall_seconds"] for r in rows)
print(float(sys.argv[2]) - float(sys.argv[1]), ev / run / 1e6)
PY
    done | sort -n | awk -v name="$name" '
        { w[NR] = $1; r[NR] = $2 }
        END { m = int((NR + 1) / 2); printf "%-32s %10.2f %10.2f %10.2f %12.1f\n", name, w[m], w[1], w[NR], r[m] }'
done
rm -f "${TMPDIR:-/tmp}/bench-sim.$$.json"
# The floors under the two n = 500 points: each a C program of the work the simulator cannot
# skip, with nothing of the simulator around it (see their headers).
floors() {
    local dir=${TMPDIR:-/tmp}/bench-sim-floors.$$
    mkdir -p "$dir"
    if ! cc -O3 -march=native -o "$dir/floors" scripts/lib/sim-floors.c -lm 2>/dev/null; then
        echo "floors: skipped, no C compiler (cc) to build scripts/lib/sim-floors.c"
        rm -rf "$dir"
        return
    fi
    med() { sort -n -k"$2" | awk -v what="$1" -v col="$2" '{ t[NR] = $col } END { m = int((NR + 1) / 2);
        printf "%-32s %10.1f %10.1f %10.1f  %s\n", "floor", t[m], t[1], t[NR], what }'; }
    for sizes in "4 4 ns per ra2 merge, in the first-level caches" \
        "500 1000 ns per ra2 merge, from the last-level cache" \
        "500 20000 ns per ra2 merge, from memory, as at n = 500"; do
        read -r recv snaps what <<<"$sizes"
        for _ in $(seq "$rounds"); do "$dir/floors" merge "$recv" "$snaps" 1000000; done | med "$what" 1
    done
    for _ in $(seq "$rounds"); do "$dir/floors" copy 500 100000; done >"$dir/copies"
    med "ns per broadcast copy, its logarithm alone, n = 500" 1 <"$dir/copies"
    med "ns per broadcast copy, delivered one by one, n = 500" 2 <"$dir/copies"
    for _ in $(seq "$rounds"); do "$dir/floors" blocks 500 100000; done |
        med "ns per broadcast copy, kept by blocks as the simulator does, n = 500" 1
    rm -rf "$dir"
}
floors
if [ "$size" = full ]; then
    s=$(date +%s.%N)
    "$bin" rmr --lock all --schedule adversarial --threads 2,4,8,16,32 --model cc,dsm \
        --format json >/dev/null || true
    e=$(date +%s.%N)
    printf '%-32s %10.2f\n' "rmr all adversarial" "$(echo "$e - $s" | bc)"
fi
