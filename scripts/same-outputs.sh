#!/usr/bin/env bash
# Do two lockbench binaries give the same outputs? For a restructuring that must not change
# behaviour: a fixed set of deterministic commands (list, rmr, verify and its mutants, sim, a
# small sim --paper, report/compare/correlate of the test fixtures, the refusals of bad input)
# is run with each binary and compared byte for byte, with wall-clock figures and output paths
# masked; the measured commands (run, sweep, fidelity) are compared by shape: the JSON field
# names in order, the table's header, the CSV columns, the files a sweep and its report write.
#   scripts/same-outputs.sh OLD_BINARY NEW_BINARY
# Exit 0 when everything matches; else each difference is shown and the exit code is 1.
set -u
[ $# -eq 2 ] || { echo "usage: $0 OLD_BINARY NEW_BINARY" >&2; exit 2; }
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

capture() {
    local bin=$1 out=$2
    mkdir -p "$out"
    run() { local name=$1; shift; "$bin" "$@" >"$out/$name.out" 2>"$out/$name.err"; echo $? >"$out/$name.rc"; }
    run list list
    run list-json list --format json
    run rmr rmr --lock all --threads 2,4 --model cc,dsm
    run rmr-adv rmr --lock bw-bakery,glb,bwb-gme,burns-lamport,zehavi-kex --threads 4 \
        --model cc,cc-wb,dsm --schedule adversarial,round-robin --format json
    run verify verify --lock lamport-bakery --threads 3 --schedules 300
    run verify-gme verify --lock bwb-gme --threads 3 --schedules 300 --seed 7
    run verify-naive verify --lock naive-bwb-gme --threads 3 --schedules 2000
    run mutants verify --mutants all --schedules 200 --format json
    run sim sim --algo all --n 6 --m 3 --requests 30 --seed 3
    run sim-json sim --algo token-gme,ra2,lkcs --n 8 --m 3 --requests 20 --seed 2 --format json
    cat >"$out/paper.toml" <<'T'
requests = 20
seeds = 1
[base]
n = 8
m = 4
ncs = 50.0
cs = 20.0
cd = 10.0
hot = [20.0, 80.0]
[[figure]]
name = "6a"
vary = "m"
values = [2, 4]
compare = ["token-gme", "ra2"]
paper = "a"
T
    run sim-paper sim --paper "$out/paper.toml" --jobs 1
    run report report tests/fixtures/compare/a --out "$out/rep"
    run compare compare tests/fixtures/compare/a tests/fixtures/compare/b
    run compare-json compare tests/fixtures/compare/a tests/fixtures/compare/b --format json
    run correlate correlate tests/fixtures/rmr-sample/no-pmu --svg "$out/corr"
    run bad-threads run --threads 0
    run bad-lock run --lock nosuch
    run bad-verify verify --lock nosuch
    # Measured: compared by shape only.
    "$bin" run --lock ticket,glb,zehavi-kex --threads 1 --duration 20ms --warmup 5ms --repeat 2 \
        --format json --out "$out/runs" >"$out/run.json" 2>/dev/null
    "$bin" run --lock ticket --threads 1 --duration 20ms --warmup 5ms --repeat 2 --format csv \
        --out "$out/runs" 2>/dev/null | head -1 >"$out/run-csv.head"
    "$bin" sweep bench-configs/quick.toml --out "$out/quick" >/dev/null 2>&1
    "$bin" report "$out/quick" >/dev/null 2>&1
    (cd "$out/quick" && find . -type f | sed 's/[0-9]\{8\}-[0-9]\{6\}/STAMP/g' | sort) >"$out/sweep-files.list"
    "$bin" fidelity --lock ticket --threads 1 --rounds 2 --duration 20ms --warmup 5ms \
        --out "$out/fid" --format json >"$out/fid.json" 2>/dev/null
    python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
for f in ["run.json", "quick/results.json", "fid.json"]:
    rows = json.load(open(f"{out}/{f}"))
    with open(f"{out}/{f.replace('/', '-')}.fields", "w") as w:
        for r in rows:
            w.write(" ".join(r.keys()) + "\n")
PY
    rm -rf "$out/runs" "$out/fid" "$out/quick" "$out/run.json" "$out/fid.json"
    # Wall-clock figures and the capture's own directory are not behaviour.
    sed -i -E -e "s#$out#OUT#g" -e 's/"(elapsed_secs|wall_seconds)": [0-9.e-]+/"\1": T/' \
        -e 's/ in [0-9.]+ s$/ in T s/' "$out"/*.out "$out"/*.err
    sed -i -E 's/( +[0-9]+\.[0-9]) +[0-9]+\.[0-9]$/ T T/' "$out/sim-paper.out"
}

capture "$1" "$work/old"
capture "$2" "$work/new"
rm -rf "$work/old/rep" "$work/new/rep" "$work/old/corr" "$work/new/corr"
if diff -r "$work/old" "$work/new"; then
    echo "same outputs"
else
    exit 1
fi
