#!/usr/bin/env bash
# Do two lockbench binaries give the same outputs? For a restructuring that must not change
# behaviour: a fixed set of deterministic commands (list, rmr, verify and its mutants, sim, a
# small sim --paper, report/compare/correlate of the test fixtures, the refusals of bad input)
# is run with each binary and compared byte for byte, with wall-clock figures and output paths
# masked; the measured commands (run, sweep, fidelity) are compared by shape: the JSON field
# names in order, the table's header, the CSV columns, the files a sweep and its report write.
#   scripts/same-outputs.sh OLD_BINARY NEW_BINARY
# JSON outputs are compared field by field: a field the new binary adds (absent from the old
# binary's output at the same place) is listed, not a failure; a field both give is compared,
# and one the new binary drops is a difference.
# Exit 0 when everything matches; else each difference is shown and the exit code is 1.
set -u
[ $# -eq 2 ] || { echo "usage: $0 OLD_BINARY NEW_BINARY" >&2; exit 2; }
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Every figure of every algorithm on the simulator, as JSON (its timings dropped): small and
# large n (above 64 receipts are deferred and broadcasts bundled), several seeds, exponential
# and constant delays, FIFO channels or not, crashes, multi-type requests, and a paper suite.
sims() {
    local o=$1/sims
    mkdir -p "$o"
    sj() { local name=$1; shift; "$bin" sim --format json "$@" >"$o/$name.json" 2>"$o/$name.err"; echo $? >"$o/$name.rc"; }
    local algos=suzuki-kasami,ricart-agrawala,token-gme,token-gme-fifo,token-gme-bounded,ra1,ra2
    for seed in 1 2 3; do
        sj "all-small-$seed" --algo "$algos" --n 9 --m 4 --requests 40 --seed "$seed"
        sj "all-large-$seed" --algo "$algos" --n 80 --m 10 --requests 15 --seed "$seed"
        sj "const-large-$seed" --algo "$algos" --n 72 --m 6 --requests 12 --cd const:7 \
            --ncs const:30 --cs const:15 --seed "$seed"
    done
    sj tg-big --algo token-gme,ra2 --n 150 --m 50 --requests 20 --seed 4
    sj tg-hot0 --algo token-gme,token-gme-fifo,ra2 --n 100 --m 2 --ncs 0 --cs 0 --requests 25
    sj tg-cd0 --algo token-gme,ra2 --n 90 --m 10 --cd 0 --requests 15 --seed 5
    sj zipf --algo token-gme,ra2 --n 70 --mix zipf:8:1.2 --requests 15 --seed 6
    sj non-fifo --algo token-gme,ricart-agrawala,ra1,ra2 --n 70 --m 5 --requests 15 --non-fifo
    sj non-fifo-const --algo token-gme,ra2 --n 12 --m 3 --requests 30 --non-fifo --cd uniform:1,9
    sj local --algo lmutin,lkcs --n 12 --requests 30 --topology ring --l 1 --k 3
    sj local-grid --algo lmutin,lkcs --n 16 --requests 20 --topology grid --l 1 --k 3 --seed 2
    sj crash-small --algo token-gme,token-gme-fifo --n 10 --m 3 --requests 40 --crash 3@200 \
        --crash 7@900
    sj crash-large --algo token-gme --n 80 --m 5 --requests 10 --crash 5@100 --seed 2
    sj multi --algo token-gme,token-gme-fifo,token-gme-bounded --n 12 --m 6 --requests 30 \
        --types-per-request 3
    sj multi-large --algo token-gme --n 80 --m 8 --requests 10 --types-per-request 2 --seed 3
    sj seeds --algo token-gme,ra2 --n 66 --m 20 --requests 10 --seeds 3 --seed 9
    "$bin" sim --paper "$out/paper.toml" --format json --jobs 2 >"$o/paper-json.json" 2>"$o/paper-json.err"
    python3 - "$o" <<'PY'
import glob, json, sys
def strip(v):
    if isinstance(v, dict):
        return {k: strip(x) for k, x in v.items()
                if k not in ("wall_seconds", "elapsed_secs", "events_per_sec", "seconds")}
    if isinstance(v, list):
        return [strip(x) for x in v]
    return v
for f in glob.glob(sys.argv[1] + "/*.json"):
    try:
        v = json.load(open(f))
    except ValueError:
        continue
    json.dump(strip(v), open(f, "w"), indent=1, sort_keys=True)
PY
}

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
    sims "$out"
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
    with open(f"{out}/{f.replace('/', '-')}.fields", "w") as w:
        try:
            rows = json.load(open(f"{out}/{f}"))
        except (OSError, ValueError):
            # A measured command may refuse a busy host: no shape to compare.
            w.write("NO OUTPUT\n")
            continue
        for r in rows:
            w.write(" ".join(r.keys()) + "\n")
PY
    rm -rf "$out/runs" "$out/fid" "$out/quick" "$out/run.json" "$out/fid.json"
    # Outputs that are JSON: their timings masked, in one layout (fields in their order).
    python3 scripts/lib/mask-times.py "$out/*.out" elapsed_secs wall_seconds events_per_sec seconds
    # Wall-clock figures and the capture's own directory are not behaviour.
    sed -i -E -e "s#$out#OUT#g" -e 's/"(elapsed_secs|wall_seconds)": [0-9.e-]+/"\1": T/' \
        -e '/"events_per_sec": /d' \
        -e 's/ in [0-9.]+ s$/ in T s/' "$out"/*.out "$out"/*.err
    # The tables' timings and speeds (a later binary may add a speed column).
    sed -i -E -e 's/( +[0-9]+\.[0-9]+){2,3}(  paper:.*|  FAILURES)?$/ T\2/' \
        -e 's/  wall s   run s(  Mev\/s)?$/  TIMES/' "$out/sim-paper.out" "$out/sims/paper-json.err"
    sed -i -E -e 's/( ok| [0-9]+ VIOL| STUCK)( +[0-9]+\.[0-9]+){1,2}$/\1 T/' \
        -e 's/ safety  wall s(  Mev\/s)?$/ safety  TIMES/' -e '/^[- ]+$/d' "$out"/sim*.out
}

# Both binaries at once (their outputs are deterministic; the measured commands are compared
# by shape only).
capture "$1" "$work/old" &
capture "$2" "$work/new" &
wait
rm -rf "$work/old/rep" "$work/new/rep" "$work/old/corr" "$work/new/corr"
# A measured command that gave no output on either side (a busy host refused): not compared.
for f in "$work"/old/*.fields; do
    g="$work/new/${f##*/}"
    if grep -qx 'NO OUTPUT' "$f" "$g" 2>/dev/null; then
        echo "not compared (no output from one binary): ${f##*/}"
        rm -f "$f" "$g"
    fi
done
# Fields only the new binary gives: listed, and left out of the comparison.
python3 - "$work/old" "$work/new" <<'PY'
import json, os, sys
old_root, new_root = sys.argv[1], sys.argv[2]
added = {}
def prune(o, n, where):
    if isinstance(o, dict) and isinstance(n, dict):
        for k in [k for k in n if k not in o]:
            added.setdefault(f"{where}.{k}", None)
            del n[k]
        for k in n:
            prune(o[k], n[k], f"{where}.{k}")
    elif isinstance(o, list) and isinstance(n, list):
        for a, b in zip(o, n):
            prune(a, b, f"{where}[]")
for d, _, files in os.walk(new_root):
    for name in files:
        nf = os.path.join(d, name)
        of = os.path.join(old_root, os.path.relpath(nf, new_root))
        try:
            o, n = json.load(open(of)), json.load(open(nf))
        except (OSError, ValueError):
            continue
        before = json.dumps(n)
        prune(o, n, "")
        if json.dumps(n) != before:
            indent = 1 if open(of).read(3).startswith(("[\n ", "{\n ")) else None
            json.dump(n, open(nf, "w"), indent=indent, sort_keys=name.endswith(".json"))
for f in added:
    print(f"new field (not compared): {f.lstrip('.')}")
PY
if diff -r "$work/old" "$work/new"; then
    echo "same outputs"
else
    exit 1
fi
