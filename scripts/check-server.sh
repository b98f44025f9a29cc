#!/usr/bin/env bash
# Prints warnings about the settings that move lock benchmark figures on this machine: frequency
# scaling (governor, boost/turbo), SMT, the clock source and TSC, isolated CPUs, load, a
# hypervisor. It reads sysfs and procfs and changes nothing, unless asked:
#   scripts/check-server.sh            # report only (exit 0; the number of warnings is printed)
#   scripts/check-server.sh --strict   # exit 1 when there is any warning
#   sudo scripts/check-server.sh --fix # also set the governor to performance and turn boost off
#                                      # (until reboot; prints every file it writes)
set -uo pipefail
fix=0
strict=0
for a in "$@"; do
  case "$a" in
    --fix) fix=1 ;;
    --strict) strict=1 ;;
    -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "unknown option $a: use --fix, --strict or --help" >&2; exit 2 ;;
  esac
done
root="${LOCKBENCH_SYSROOT:-}"
cpu="$root/sys/devices/system/cpu"
warnings=0
warn() { echo "warning: $*"; warnings=$((warnings + 1)); }
ok() { echo "ok: $*"; }
read1() { [ -r "$1" ] && tr -d '\n' < "$1"; }
write() { # path value
  if [ -w "$1" ]; then echo "$2" > "$1" && echo "set: $1 = $2"; else echo "cannot write $1 (run as root)"; fi
}

# Frequency scaling.
govs=$(for g in "$cpu"/cpu[0-9]*/cpufreq/scaling_governor; do read1 "$g" && echo; done 2>/dev/null | sort -u | tr '\n' ' ')
if [ -z "${govs// /}" ]; then
  echo "note: no cpufreq governor exposed (a VM or a fixed-frequency machine)"
elif [ "${govs% }" != "performance" ]; then
  warn "cpufreq governor is '${govs% }': frequency moves with load; set performance (--fix, or cpupower frequency-set -g performance)"
  if [ $fix = 1 ]; then for g in "$cpu"/cpu[0-9]*/cpufreq/scaling_governor; do write "$g" performance; done; fi
else
  ok "governor performance"
fi
if [ -r "$cpu/cpufreq/boost" ]; then
  if [ "$(read1 "$cpu/cpufreq/boost")" = 1 ]; then
    warn "frequency boost is on: clocks depend on temperature and how many cores are busy; turn it off (--fix)"
    [ $fix = 1 ] && write "$cpu/cpufreq/boost" 0
  else ok "boost off"; fi
elif [ -r "$cpu/intel_pstate/no_turbo" ]; then
  if [ "$(read1 "$cpu/intel_pstate/no_turbo")" = 0 ]; then
    warn "turbo is on: clocks depend on temperature and how many cores are busy; turn it off (--fix)"
    [ $fix = 1 ] && write "$cpu/intel_pstate/no_turbo" 1
  else ok "turbo off"; fi
else
  echo "note: boost/turbo state not exposed"
fi

# SMT.
smt=$(read1 "$cpu/smt/control" || true)
case "$smt" in
  on) warn "SMT is on: lockbench pins to distinct physical cores first, but a sibling's other thread (another process) shares the core; consider echo off > $cpu/smt/control" ;;
  "") echo "note: SMT control not exposed" ;;
  *) ok "SMT $smt" ;;
esac

# Clock source and TSC.
cs=$(read1 "$root/sys/devices/system/clocksource/clocksource0/current_clocksource" || true)
if [ -n "$cs" ] && [ "$cs" != tsc ]; then
  warn "clock source is $cs, not tsc: timestamps cost more and may be coarser"
elif [ -n "$cs" ]; then ok "clocksource tsc"; fi
flags=$(grep -m1 '^flags' "$root/proc/cpuinfo" 2>/dev/null || true)
if [ -n "$flags" ]; then
  for f in constant_tsc nonstop_tsc; do
    if ! grep -qw "$f" <<< "$flags"; then warn "the CPU does not report $f: TSC-based latencies may drift with frequency or sleep states"; fi
  done
  if grep -qw hypervisor <<< "$flags"; then
    warn "running under a hypervisor: vCPUs can be descheduled and cache-line transfers are not the host's; prefer bare metal for figures you publish"
  fi
fi
mc=$(grep -m1 '^microcode' "$root/proc/cpuinfo" 2>/dev/null | sed 's/.*: *//')
[ -n "$mc" ] && echo "note: microcode $mc (recorded in every result)"

# Isolation and load.
iso=$(read1 "$cpu/isolated" || true)
if [ -z "$iso" ]; then
  warn "no isolated CPUs: other tasks share the cores the threads are pinned to (isolcpus= or a cpuset helps)"
else ok "isolated CPUs $iso"; fi
if [ -r "$root/proc/loadavg" ]; then
  load=$(cut -d' ' -f1 "$root/proc/loadavg")
  ncpu=$(getconf _NPROCESSORS_ONLN 2>/dev/null || nproc 2>/dev/null || echo 1)
  if awk -v l="$load" -v n="$ncpu" 'BEGIN { exit !(l > n * 0.25) }'; then
    warn "load average $load on $ncpu CPUs: something else is running; figures will be noisy"
  else ok "load average $load"; fi
fi

echo "$warnings warning(s)"
[ $strict = 1 ] && [ $warnings -gt 0 ] && exit 1
exit 0
