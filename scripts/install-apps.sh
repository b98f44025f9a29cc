#!/usr/bin/env bash
# The real programs `lockbench app` is tested and benchmarked on, from the distribution's
# packages: sysbench (its mutex and threads tests), pigz (mutexes and condition variables),
# memcached with libmemcached-tools (memcslap drives it over loopback) and rocksdb-tools
# (db_bench: a key-value store's mutexes and condition variables).
# Quiet when everything is installed; runs `apt-get update` once when a package is missing.
# Exits 0 even when a package cannot be had: the tests that need it skip and say so.
set -uo pipefail

want=(sysbench pigz memcached libmemcached-tools rocksdb-tools)
missing=()
for p in "${want[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if ! command -v apt-get >/dev/null; then
    echo "install-apps: no apt-get here; install ${missing[*]} by hand (the app tests skip without them)" >&2
    exit 0
fi
sudo=""
[ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null && sudo="sudo"
echo "install-apps: installing ${missing[*]}" >&2
$sudo apt-get update -qq >/dev/null 2>&1 || true
if ! DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null 2>&1; then
    # One by one, so one missing package does not keep the others out.
    for p in "${missing[@]}"; do
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "$p" >/dev/null 2>&1 \
            || echo "install-apps: $p could not be installed; its tests will skip" >&2
    done
fi
# memcached's package starts a system service on port 11211: the tests start their own.
if command -v systemctl >/dev/null && systemctl is-active --quiet memcached 2>/dev/null; then
    $sudo systemctl stop memcached >/dev/null 2>&1 || true
fi
exit 0
