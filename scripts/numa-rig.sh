#!/usr/bin/env bash
# Boots a many-core NUMA guest under QEMU and checks lockbench's placement end to end inside it:
#   scripts/numa-rig.sh [--no-validate] [OUTDIR]      (default OUTDIR: target/numa-rig)
# The guest has 16 vCPUs over 2 sockets and 4 NUMA nodes (CPUs 0-3, 4-7 on socket 0; 8-11,
# 12-15 on socket 1), under TCG (RIG_ACCEL=kvm where KVM works). Its initramfs holds busybox, bash, the release
# binary and their shared libraries. Inside, it copies the guest kernel's view of the topology
# (sysfs), runs 16 threads (std-mutex: it sleeps, so emulated CPUs do not stall it) under --pin
# physical, compact and scatter, and 4 scattered threads (one per node) of the Lamport bakery
# under --mem-policy local, interleave and node:3, then `validate-server.sh --quick` (yield waits, a few
# locks: timing under emulation means nothing, correctness does). The results come out over a
# second serial port; `cargo test --lib numa_rig` then checks each policy's CPUs against the
# guest's sysfs and that every page was on the node its policy names, and the validation
# report is written from the guest's results. Needs scripts/install-rig.sh (run here first).
# LOCKBENCH=PATH uses that binary instead of building the release one. About 2 minutes on 2
# host cores (CI runs it, with tighter bounds: RIG_STEP_TIMEOUT and RIG_VALIDATE_TIMEOUT bound
# each step in the guest, RIG_GUEST_TIMEOUT the whole guest, default 3600 s). The guest boots with no_timer_check: on a loaded host
# the emulated CPUs run too slowly for the kernel's boot-time check of the timer interrupt, which
# then panics ("IO-APIC + timer doesn't work!") before init runs.
set -euo pipefail
validate=1
work=""
for a in "$@"; do
  case "$a" in
    --no-validate) validate=0 ;;
    -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "unknown option $a: use --no-validate or --help" >&2; exit 2 ;;
    *) work="$a" ;;
  esac
done
here="$(cd "$(dirname "$0")/.." && pwd)"
work="${work:-$here/target/numa-rig}"
bash "$here/scripts/install-rig.sh"
kernel=$(ls -1 /boot/vmlinuz-* 2>/dev/null | sort -V | tail -n 1)
[ -n "$kernel" ] || { echo "numa-rig.sh: no kernel image in /boot (apt-get install linux-image-amd64)" >&2; exit 2; }
busybox=$(command -v busybox || echo /bin/busybox)
bin="${LOCKBENCH:-$here/target/release/lockbench}"
[ -n "${LOCKBENCH:-}" ] || (cd "$here" && cargo build --release --quiet)

# A guest still running from an earlier rig (its script killed, QEMU not) would take the host's
# cores from this one, and its files are about to be removed: say so rather than race it.
if other=$(pgrep -f -- "-initrd $work/initrd.gz" 2>/dev/null); then
  echo "numa-rig.sh: a guest of an earlier rig still runs on $work (pids $(echo $other)): wait for it or kill them" >&2
  exit 2
fi
rm -rf "$work"
mkdir -p "$work/root"/{bin,lib,lib64,proc,sys,dev,tmp,scripts}
root="$work/root"
cp "$busybox" "$root/bin/busybox"
cp "$bin" "$root/bin/lockbench"
cp "$(command -v bash)" "$root/bin/bash"
# The shared libraries of the binary and of bash, at the paths the loader looks for.
for b in "$bin" "$(command -v bash)"; do
  for lib in $(ldd "$b" | grep -o '/[^ ]*'); do
    mkdir -p "$root$(dirname "$lib")"
    cp -L "$lib" "$root$lib"
  done
done
cp "$here/scripts/validate-server.sh" "$here/scripts/check-server.sh" "$root/scripts/"
cat >"$root/init" <<INIT
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin HOME=/tmp
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev; mount -t tmpfs tmp /tmp
hostname numa-rig
out=/tmp/out; mkdir -p \$out/sysfs
echo "rig: \$(nproc) CPUs, nodes \$(cat /sys/devices/system/node/online)"
# The guest kernel's view of the topology, as Topology::read reads it.
cd /sys/devices/system
for f in cpu/online node/online node/node*/cpulist cpu/cpu*/topology/physical_package_id \
    cpu/cpu*/topology/core_id cpu/cpu*/topology/core_cpus_list cpu/cpu*/topology/thread_siblings_list \
    cpu/cpu*/cache/index3/level cpu/cpu*/cache/index3/shared_cpu_list; do
  [ -r "\$f" ] || continue
  mkdir -p "\$out/sysfs/\$(dirname \$f)"; cat "\$f" >"\$out/sysfs/\$f"
done
cd /
# A step that hangs is ended (its log still comes out) rather than holding up the rest, and
# where each of its threads was is kept beside its log (NAME.stuck: kernel stack, wchan, state).
# bounded NAME STDOUT SECONDS COMMAND...: stderr goes to NAME.log.
bounded() {
  name=\$1 stdout=\$2 limit=\$3; shift 3
  "\$@" >\$stdout 2>\$out/\$name.log &
  pid=\$!; waited=0
  while kill -0 \$pid 2>/dev/null && [ \$waited -lt \$limit ]; do sleep 1; waited=\$((waited + 1)); done
  if kill -0 \$pid 2>/dev/null; then
    for t in /proc/\$pid/task/*; do
      echo "== \$(cat \$t/comm) wchan \$(cat \$t/wchan) state \$(cut -d' ' -f3 \$t/stat)"; cat \$t/stack
    done >\$out/\$name.stuck 2>&1
    # The kernel's own view (soft lockups and RCU stalls with their stacks; the console is quiet).
    dmesg >\$out/\$name.dmesg 2>&1
    # Not waited for: a process stuck in the kernel may never go.
    kill -9 \$pid
    echo "rig: \$name hung after \$limit s (threads' stacks in \$name.stuck)"
  else
    wait \$pid; rc=\$?
    echo "rig: \$name exit \$rc in \$waited s"
  fi
}
step=${RIG_STEP_TIMEOUT:-600}
common="--passages 50 --repeat 1 --warmup 0s --wait yield --no-check --format json --out /tmp/runs"
for pin in physical compact scatter; do
  bounded pin-\$pin \$out/pin-\$pin.json \$step lockbench run --lock std-mutex --baseline std-mutex --pin \$pin --threads 16 \$common
done
for pol in local interleave node:3; do
  bounded mem-\${pol%%:*} \$out/mem-\${pol%%:*}.json \$step lockbench run --lock lamport-bakery --baseline lamport-bakery --pin scatter --mem-policy \$pol \$common --threads 4 --stall-timeout 60s
done
if [ $validate = 1 ]; then
  echo "rig: validate-server.sh --quick"
  export LOCKBENCH=/bin/lockbench VALIDATE_RUN_ARGS="--wait yield" VALIDATE_LOCKS="ticket,std-mutex,mcs,lamport-bakery" VALIDATE_CALIBRATE="--cpus 0,4,8,12" VALIDATE_FIDELITY_ARGS="--wait yield --lock ticket,std-mutex" VALIDATE_PROGRESS=/dev/ttyS0
  bounded validate \$out/validate.out ${RIG_VALIDATE_TIMEOUT:-2400} bash /scripts/validate-server.sh --quick \$out/validate
fi
dmesg >\$out/dmesg.txt 2>&1
tar -C /tmp -cf - out | gzip | base64 >/dev/ttyS1
echo "rig: done"
poweroff -f
INIT
chmod +x "$root/init"
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) >"$work/initrd.gz"

# KVM where it works (RIG_ACCEL=kvm); TCG by default, since /dev/kvm can exist without working.
# TCG runs every vCPU on one host thread in turn (RIG_TCG_THREAD=single, the default): with one
# host thread per vCPU (multi), 16 vCPU threads on a busy 2-core host left a vCPU unscheduled
# for minutes, and the guest kernel then reported a soft lockup of the CPU waiting on it and an
# RCU stall ("timer wakeup didn't happen"), and the step never ended. In turn, every vCPU moves.
accel=${RIG_ACCEL:-tcg}
[ "$accel" != tcg ] || accel="tcg,thread=${RIG_TCG_THREAD:-single}"
numa=()
for n in 0 1 2 3; do
  numa+=(-object "memory-backend-ram,id=m$n,size=512M" -numa "node,nodeid=$n,cpus=$((n * 4))-$((n * 4 + 3)),memdev=m$n")
done
echo "numa-rig.sh: booting $(basename "$kernel") with 16 vCPUs, 2 sockets, 4 nodes ($accel); console in $work/console.log" >&2
start=$(date +%s)
# QEMU goes when this script does (Ctrl-C, a kill), not left running on the host's cores.
trap 'kill $qemu 2>/dev/null || true' EXIT
trap 'exit 130' INT TERM
timeout "${RIG_GUEST_TIMEOUT:-3600}" qemu-system-x86_64 -accel $accel -cpu max -m 2048 -smp 16,sockets=2,cores=8,threads=1 "${numa[@]}" \
  -kernel "$kernel" -initrd "$work/initrd.gz" -append "console=ttyS0 panic=-1 quiet no_timer_check" \
  -display none -monitor none -no-reboot \
  -serial "file:$work/console.log" -serial "file:$work/data.b64" &
qemu=$!
# The guest bounds each step itself, but its bound counts `sleep 1`s, which never return when
# its timers stop: from here, a guest whose console shows no new step for that step's bound
# (and 5 minutes more) has stopped making progress and is stopped.
step_limit=${RIG_STEP_TIMEOUT:-600} validate_limit=${RIG_VALIDATE_TIMEOUT:-2400}
lines=0 quiet=0
while kill -0 $qemu 2>/dev/null; do
  sleep 5
  now=$(grep -c '^rig:' "$work/console.log" 2>/dev/null || true)
  if [ "${now:-0}" != "$lines" ]; then lines=${now:-0} quiet=0; else quiet=$((quiet + 5)); fi
  limit=$step_limit
  grep '^rig:' "$work/console.log" 2>/dev/null | tail -n 1 | grep -q '^rig: validate-server' && limit=$validate_limit
  if [ $quiet -gt $((limit + 300)) ]; then
    echo "numa-rig.sh: no step of the guest ended in $quiet s: it stopped making progress; stopping it (see $work/console.log)" >&2
    kill $qemu 2>/dev/null || true
    break
  fi
done
wait $qemu || true
echo "numa-rig.sh: guest finished in $(( $(date +%s) - start )) s" >&2
grep '^rig:' "$work/console.log" >&2 || true
if [ ! -s "$work/data.b64" ]; then
  # Say what the guest kernel said when it failed (a panic at boot, a soft lockup, an RCU stall).
  grep -m 3 -E 'Kernel panic|soft lockup|rcu.*stall' "$work/console.log" | sed 's/^/numa-rig.sh: guest: /' >&2 || true
  echo "numa-rig.sh: the guest sent no results; see $work/console.log" >&2
  exit 1
fi
tr -d '\r' <"$work/data.b64" | base64 -d | tar -C "$work" -xzf -
if [ $validate = 1 ] && [ -s "$work/out/validate/validate.args" ]; then
  python3 "$here/scripts/validate-report.py" "$work/out/validate" $(cat "$work/out/validate/validate.args")
fi
(cd "$here" && LOCKBENCH_RIG_OUT="$work/out" cargo test --quiet --lib numa_rig -- --nocapture)
echo "numa-rig.sh: ok; results in $work/out"
