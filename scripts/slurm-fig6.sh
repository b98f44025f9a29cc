#!/usr/bin/env bash
# Seed 003's Fig. 6 (TokenGME against RA2, six sweeps from the base point n = 100, m = 50,
# ncs 50 ms, cs 20 ms, cd 10 ms, hot (20, 80)) across nodes, on the MPI runtime: one MPI rank
# per algorithm process. Each point is one `mp-run --runtime mpi` of both algorithms, saved as
# JSON, over seeds 1..SEEDS as `sim --paper` runs them; a table of TokenGME / RA2 ratios
# (messages, size, waiting time, throughput) closes the run, each the median of every
# TokenGME-seed / RA2-seed ratio with the range of those ratios beside it (`sim --paper`
# prints Moses' interval, inside that range).
#
# Build first, on a node with MPI (scripts/install-mpi.sh on Debian/Ubuntu, or the cluster's
# module): cargo build --release --features mpi. Then, from the repository's root:
#   sbatch scripts/slurm-fig6.sh                                    # slurm: srun in the allocation
#   LAUNCH="mpirun -f scripts/hostfile" scripts/slurm-fig6.sh       # MPICH with a hostfile
#   LAUNCH="mpirun --hostfile scripts/hostfile" scripts/slurm-fig6.sh   # Open MPI
#   RANKS=20 REQUESTS=100 SEEDS=2 FIGURES="6a 6d" scripts/slurm-fig6.sh   # smaller
# Environment: LAUNCH (default srun), RANKS (most ranks a point may use; default SLURM_NTASKS
# or 100), REQUESTS (per process, default 500 as in the paper), SEEDS (default 5, as the
# suite), FIGURES (default 6a ... 6f),
# OUT (default reports/fig6-<UTC time>), BIN (default target/release/lockbench).
# A point with n processes runs on n / k ranks with --procs-per-rank k, the smallest k that fits
# RANKS. --cd adds the paper's channel delay on top of the network's own (6d varies it; 0 is
# the network alone). At 500 requests, Fig. 6(b)'s ncs = 4000 ms point alone takes over half an
# hour per seed.
#
#SBATCH --job-name=lockbench-fig6
#SBATCH --nodes=4
#SBATCH --ntasks=100
#SBATCH --time=06:00:00
#SBATCH --output=fig6-%j.out
set -euo pipefail
cd "${SLURM_SUBMIT_DIR:-$(dirname "$0")/..}"

launch=${LAUNCH:-srun}
ranks=${RANKS:-${SLURM_NTASKS:-100}}
requests=${REQUESTS:-500}
seeds=${SEEDS:-5}
figures=${FIGURES:-6a 6b 6c 6d 6e 6f}
bin=${BIN:-target/release/lockbench}
out=${OUT:-reports/fig6-$(date -u +%Y%m%dT%H%M%SZ)}
[ -x "$bin" ] || { echo "no $bin: cargo build --release --features mpi" >&2; exit 2; }
mkdir -p "$out"

# One point: the base with one parameter changed.
point() {
  local fig=$1 name=$2 value=$3
  local n=100 m=50 ncs=50 cs=20 cd=10 hot=20,80
  case $name in
    m) m=$value ;; ncs) ncs=$value ;; cs) cs=$value ;; cd) cd=$value ;;
    hot) hot=$value,$((100 - value)) ;; n) n=$value ;;
  esac
  local k=1
  while [ $((n % k)) -ne 0 ] || [ $((n / k)) -gt "$ranks" ]; do k=$((k + 1)); done
  local seed
  for seed in $(seq 1 "$seeds"); do
    echo "== $fig $name=$value seed $seed: $((n / k)) ranks x $k"
    $launch -n $((n / k)) "$bin" mp-run --runtime mpi --procs-per-rank "$k" \
      --algo token-gme,ra2 --n "$n" --m "$m" --ncs "$ncs" --cs "$cs" --cd "$cd" --hot "$hot" \
      --requests "$requests" --seed "$seed" --watchdog 600 --format json \
      >"$out/$fig-$name-$value-seed$seed.json"
  done
}

for fig in $figures; do
  case $fig in
    6a) for v in 2 10 50 100 150; do point 6a m $v; done ;;
    6b) for v in 0 50 500 4000; do point 6b ncs $v; done ;;
    6c) for v in 0 10 20 50; do point 6c cs $v; done ;;
    6d) for v in 0 10 25 50; do point 6d cd $v; done ;;
    6e) for v in 50 30 20 10; do point 6e hot $v; done ;;
    6f) for v in 5 50 100 500; do point 6f n $v; done ;;
    *) echo "unknown figure $fig: use 6a 6b 6c 6d 6e 6f" >&2; exit 2 ;;
  esac
done

python3 - "$out" <<'EOF'
import glob, json, os, statistics, sys
points = {}
for path in sorted(glob.glob(os.path.join(sys.argv[1], "6*-seed*.json"))):
    key = os.path.basename(path)[:-5].rsplit("-seed", 1)[0]
    points.setdefault(key, []).append({r["algo"]: r for r in json.load(open(path))})
def ratio(runs, k):
    pairs = [a["token-gme"][k] / b["ra2"][k] for a in runs for b in runs if b["ra2"][k]]
    if not pairs:
        return f"{'nan':>16}"
    return f"{statistics.median(pairs):5.2f} [{min(pairs):.2f}-{max(pairs):.2f}]"
print("TokenGME / RA2 ratios per point: median over seed pairs [range]; clock error in ms")
print("figure  point        seeds  msgs              size              wait"
      "              thrpt             clock err")
for key, runs in sorted(points.items()):
    fig, name, value = key.split("-", 2)
    err = max(max(r["clock_sync_error_ms"] for r in s.values()) for s in runs)
    cols = "  ".join(ratio(runs, k) for k in ["messages_per_request_mean", "message_size_mean",
                                              "waiting_time_mean", "throughput"])
    print(f"{fig:<7} {name + '=' + value:<12} {len(runs):5}  {cols}  {err:9.4f}")
EOF
echo "results in $out"
