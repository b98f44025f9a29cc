#!/usr/bin/env bash
# Builds the C plug-ins of examples/c/ (and, with --tests, the bad plug-ins of tests/c-plugins/)
# with the system C compiler into target/c-examples/lib<name>.so. Installs gcc with apt-get when
# no compiler is found. Prints the directory it built into.
set -euo pipefail
cd "$(dirname "$0")/.."

CC=${CC:-cc}
if ! command -v "$CC" >/dev/null 2>&1; then
    if command -v gcc >/dev/null 2>&1; then
        CC=gcc
    elif command -v apt-get >/dev/null 2>&1; then
        echo "no C compiler found: installing gcc with apt-get" >&2
        sudo_cmd=""
        [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
        $sudo_cmd apt-get update -qq >&2
        $sudo_cmd apt-get install -y -qq gcc >&2
        CC=gcc
    else
        echo "error: no C compiler (cc or gcc) and no apt-get to install one: set CC to a C11 compiler" >&2
        exit 2
    fi
fi

out=target/c-examples
mkdir -p "$out"
sources=(examples/c/*.c)
if [ "${1:-}" = "--tests" ]; then
    sources+=(tests/c-plugins/*.c)
fi
for src in "${sources[@]}"; do
    name=$(basename "$src" .c)
    lib="$out/lib$name.so"
    # Rebuild only what changed (the tests call this script once per test binary).
    stale=0
    for dep in "$src" include/lockbench.h "$(dirname "$src")"/*.h; do
        if [ -e "$dep" ] && [ "$dep" -nt "$lib" ]; then stale=1; fi
    done
    if [ ! -e "$lib" ] || [ "$stale" -eq 1 ]; then
        tmp="$lib.tmp.$$"
        "$CC" -std=c11 -O2 -Wall -Wextra -Werror -fPIC -shared -Iinclude -o "$tmp" "$src"
        mv -f "$tmp" "$lib"
    fi
done
echo "$out"
