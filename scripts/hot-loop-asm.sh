#!/usr/bin/env bash
# Shows the machine code of a lock's entry on native memory, to check that the register
# abstraction costs nothing: the wait loop should be a load, a compare and a `pause`.
#   scripts/hot-loop-asm.sh [symbol-substring]   (default: TicketLock)
set -euo pipefail
cd "$(dirname "$0")/.."
pat=${1:-TicketLock}
cargo build --release --quiet
# The same generic code is also built for the scheduled memory (it calls into shuttle): print
# only the native instances.
objdump -d --no-show-raw-insn -C target/release/lockbench |
  awk -v pat="$pat" '
    function flush() { if (keep && buf !~ /shuttle/) printf "%s\n", buf; buf = "" }
    /^[0-9a-f]+ <.*>:$/ { flush(); keep = index($0, pat) > 0 && index($0, "enter") > 0 }
    keep { buf = buf $0 "\n" }
    END { flush() }'
