#!/usr/bin/env bash
# Validates a machine before its lock figures are trusted, and writes OUTDIR/report.md and
# OUTDIR/report.html describing the machine and what was found:
#   scripts/validate-server.sh [--quick] OUTDIR
# Steps: scripts/check-server.sh; `lockbench list`; `fidelity` at 1 thread and at every physical
# core; every lock at the powers of two up to every physical core under --pin compact and
# --pin scatter (one report each, OUTDIR/compact and OUTDIR/scatter); hardware counters where the
# PMU is there (cycles, instructions, cache and LLC misses; "unavailable" with the kernel's reason
# otherwise); `calibrate`; the model's RMRs beside coherence counters for `correlate` and
# `predict`; `report`.
# --quick: 50 ms windows, two rounds (a few minutes on 2 cores). LOCKBENCH=PATH picks the
# binary (default target/release/lockbench, built when missing); VALIDATE_RUN_ARGS adds options
# to every run (e.g. "--wait yield" on emulated CPUs); VALIDATE_LOCKS narrows "every lock" (a
# comma-separated list; default all), VALIDATE_FIDELITY_ARGS adds options to `fidelity` ("--wait
# yield --lock ticket"), VALIDATE_CALIBRATE adds calibrate options ("--cpus 0,8"),
# VALIDATE_PROGRESS=FILE also appends each step, with the seconds since the start, to FILE (a
# console). The report needs python3 (scripts/validate-report.py).
set -euo pipefail
quick=0
out=""
for a in "$@"; do
  case "$a" in
    --quick) quick=1 ;;
    -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "unknown option $a: use --quick or --help" >&2; exit 2 ;;
    *) [ -z "$out" ] || { echo "one OUTDIR only (got $out and $a)" >&2; exit 2; }; out="$a" ;;
  esac
done
[ -n "$out" ] || { echo "usage: scripts/validate-server.sh [--quick] OUTDIR" >&2; exit 2; }
here="$(cd "$(dirname "$0")/.." && pwd)"
bin="${LOCKBENCH:-$here/target/release/lockbench}"
if [ ! -x "$bin" ]; then
  (cd "$here" && cargo build --release --quiet)
fi
mkdir -p "$out"
out="$(cd "$out" && pwd)"
extra=(${VALIDATE_RUN_ARGS:-})
fextra=(${VALIDATE_FIDELITY_ARGS:-})
started=$(date +%s)
step() {
  echo "== $*" >&2
  [ -z "${VALIDATE_PROGRESS:-}" ] || echo "validate: $(( $(date +%s) - started )) s: $*" >>"$VALIDATE_PROGRESS"
}

if [ $quick = 1 ]; then
  timing=(--duration 50ms --warmup 10ms --repeat 2)
  fid=(--rounds 3 --duration 50ms --warmup 10ms)
  cal=(--rounds 3 --lines 16)
  rmr_locks="ticket,mcs,lamport-bakery,tas"
else
  timing=(--duration 200ms --warmup 50ms --repeat 5)
  fid=(--rounds 5)
  cal=()
  rmr_locks="ticket,mcs,clh,lamport-bakery,bw-bakery,tas,ttas"
fi

# Physical cores this process may use (its affinity, by taskset or cgroup): the "all cores" of
# every step.
allowed=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)
cores=0
seen=" "
for part in ${allowed//,/ }; do
  lo=${part%-*}; hi=${part#*-}
  for ((c = lo; c <= hi; c++)); do
    f=/sys/devices/system/cpu/cpu$c/topology/core_cpus_list
    [ -r "$f" ] || f=/sys/devices/system/cpu/cpu$c/topology/thread_siblings_list
    key=$(cat "$f" 2>/dev/null || echo "cpu$c")
    case "$seen" in *" $key "*) ;; *) seen="$seen$key "; cores=$((cores + 1)) ;; esac
  done
done
[ "$cores" -ge 1 ] || cores=$(nproc)
threads=1
t=2
while [ $t -le "$cores" ]; do threads="$threads,$t"; t=$((t * 2)); done
case ",$threads," in *",$cores,"*) ;; *) threads="$threads,$cores" ;; esac

step "check-server"
bash "$here/scripts/check-server.sh" >"$out/check-server.txt" 2>&1 || true
step "list"
"$bin" list >"$out/list.txt"
step "fidelity at 1 and $cores threads"
fthreads=1
[ "$cores" -gt 1 ] && fthreads="1,$cores"
"$bin" fidelity --threads "$fthreads" "${fid[@]}" "${fextra[@]}" --out "$out/fidelity" --format json >"$out/fidelity.json" 2>"$out/fidelity.log" \
  || { echo "fidelity failed (exit $?): $(tail -n 1 "$out/fidelity.log")" >>"$out/fidelity.log"; echo '[]' >"$out/fidelity.json"; }

# Counters: ask for the hardware ones; a run says "unavailable" with the reason where there is
# no PMU, and the software ones count everywhere.
counters="cycles,instructions,cache-misses,llc-load-misses,context-switches,task-clock"
for pin in compact scatter; do
  step "every lock at $threads threads, --pin $pin"
  rm -rf "$out/runs-$pin"
  "$bin" run --lock "${VALIDATE_LOCKS:-all}" --threads "$threads" --pin "$pin" --counters "$counters" \
    "${timing[@]}" "${extra[@]}" --out "$out/runs-$pin" --format json >"$out/$pin.json" 2>"$out/$pin.log" \
    || { rc=$?; [ $rc -ne 2 ] || { cat "$out/$pin.log" >&2; exit $rc; }; echo "run exit $rc (a lock failed: see the report)" >>"$out/$pin.log"; }
  "$bin" report "$out/runs-$pin" --out "$out/$pin" >/dev/null
done

step "calibrate"
"$bin" calibrate "${cal[@]}" ${VALIDATE_CALIBRATE:-} --out "$out/calibration.json" >"$out/calibrate.txt" 2>&1 || echo "calibrate failed: see calibrate.txt" >>"$out/calibrate.txt"
step "model RMRs and coherence counters ($rmr_locks)"
rm -rf "$out/rmr"
"$bin" run --lock "$rmr_locks" --threads "$threads" --counters coherence "${timing[@]}" "${extra[@]}" --out "$out/rmr" >/dev/null 2>&1 || true
"$bin" run --lock "$rmr_locks" --threads "$threads" --rmr cc --counters coherence "${timing[@]}" "${extra[@]}" --out "$out/rmr" >/dev/null 2>&1 || true
"$bin" correlate "$out/rmr" --no-svg >"$out/correlate.txt" 2>&1 || true
calib=()
[ -s "$out/calibration.json" ] && calib=(--calibration "$out/calibration.json")
"$bin" predict "$out/rmr" "${calib[@]}" >"$out/predict.txt" 2>&1 || true
step "report"
"$bin" report "$out/rmr" --out "$out/model" "${calib[@]}" >/dev/null 2>&1 || true

secs=$(( $(date +%s) - started ))
echo "$cores $threads $quick $secs" >"$out/validate.args"
if command -v python3 >/dev/null; then
  python3 "$here/scripts/validate-report.py" "$out" $cores "$threads" $quick $secs
  echo "$out/report.md and $out/report.html written ($secs s)"
else
  echo "no python3 here: every result is in $out; write report.md and report.html elsewhere with scripts/validate-report.py $out $cores $threads $quick $secs"
fi
