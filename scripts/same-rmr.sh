#!/usr/bin/env bash
# Do two lockbench binaries count the same RMRs? For a change to the gated counting memory or to
# the `rmr` runner that must not move a figure: every lock `rmr --lock all` takes (and
# naive-bwb-gme), each alone, under round-robin, random and PCT (N = 2, 4, 8; CC, CC write-back
# and DSM) and the adversarial search (N = 2, 4, 8, 16, 32; CC and DSM), plus a few other
# options, as JSON; compared byte for byte with `elapsed_secs` (wall-clock) masked, and the exit
# codes and stderr beside them. The two binaries run one after the other, not at once.
#   scripts/same-rmr.sh OLD_BINARY NEW_BINARY [ADVERSARIAL_THREADS]
# ADVERSARIAL_THREADS (default 2,4,8,16,32) is the adversarial search's list of N; 2,4,8 takes
# seconds, while N = 16 and 32 are the whole all-locks sweep of docs/rmr.md (about a minute or two
# per binary). Exit 0 when everything matches; else each difference is shown and the exit code
# is 1.
set -u
[ $# -ge 2 ] && [ $# -le 3 ] || {
    echo "usage: $0 OLD_BINARY NEW_BINARY [ADVERSARIAL_THREADS]" >&2
    exit 2
}
adv_threads=${3:-2,4,8,16,32}
mask="$(cd "$(dirname "$0")" && pwd)/lib/mask-times.py"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

locks=$("$1" rmr --lock all --threads 2 --format json |
    python3 -c 'import json, sys; print(" ".join(dict.fromkeys(r["lock"] for r in json.load(sys.stdin))))')
[ -n "$locks" ] || { echo "no locks from $1 rmr --lock all" >&2; exit 2; }

capture() {
    local bin=$1 out=$2
    mkdir -p "$out"
    run() { local name=$1; shift; "$bin" rmr --format json "$@" >"$out/$name.json" 2>"$out/$name.err"; echo $? >"$out/$name.rc"; }
    for lock in $locks naive-bwb-gme; do
        run "$lock-plain" --lock "$lock" --threads 2,4,8 --model cc,cc-wb,dsm \
            --schedule round-robin,random,pct
        run "$lock-adversarial" --lock "$lock" --threads "$adv_threads" --model cc,dsm \
            --schedule adversarial
    done
    run other-seed --lock all --threads 3,5 --model cc,dsm --schedule random,pct,adversarial \
        --seed 5 --passages 2 --cs-steps 0 --search 6
    run k2 --lock zehavi-kex,zehavi-kex-bounded,spin-semaphore --threads 4,6 --k 2 \
        --model cc,dsm --schedule round-robin,adversarial
    run bakeries --lock lamport-bakery,ub-bakery --threads 2 --schedule adversarial --passages 9
    run jobs1 --lock zehavi-kex,glb,bw-bakery --threads 8 --model cc,dsm \
        --schedule adversarial --jobs 1
    python3 "$mask" "$out/*.json" elapsed_secs
}

capture "$1" "$work/old"
capture "$2" "$work/new"
echo "$(ls "$work/old"/*.json | wc -l) JSON outputs per binary ($(echo $locks naive-bwb-gme | wc -w) locks)"
if diff -r "$work/old" "$work/new"; then
    echo "same outputs"
else
    exit 1
fi
