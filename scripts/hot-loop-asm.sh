#!/usr/bin/env bash
# Shows machine code of the timed path on native memory: by default a lock's entry, to check
# that the register abstraction costs nothing (the wait loop should be a load, a compare and a
# `pause`); with a second argument, the functions of that name, e.g. the passage loops of
# src/runner/hot_loop.rs (`passages`, `timed_passage`, `closing_passage`, `checked_passage`,
# `traced_passages`, `bare`; one instance per lock and checker).
#   scripts/hot-loop-asm.sh [symbol-substring] [function]   (default: TicketLock, enter)
#   BIN=path/to/lockbench scripts/hot-loop-asm.sh ...        (that binary, not a fresh build)
# Passage loops are named without their type parameters, so `function` alone selects them:
#   scripts/hot-loop-asm.sh '' passages
set -euo pipefail
cd "$(dirname "$0")/.."
pat=${1-TicketLock}
fn=${2-}
bin=${BIN-}
if [ -z "$bin" ]; then
  cargo build --profile figures --quiet
  bin=target/figures/lockbench
fi
# The same generic code is also built for the scheduled memory (it calls into shuttle): print
# only the native instances.
objdump -d --no-show-raw-insn -C "$bin" |
  awk -v pat="$pat" -v fn="$fn" '
    function flush() { if (keep && buf !~ /shuttle/) printf "%s\n", buf; buf = "" }
    /^[0-9a-f]+ <.*>:$/ {
      flush()
      if (fn == "") keep = index($0, pat) > 0 && index($0, "enter") > 0
      else keep = index($0, pat) > 0 && $0 ~ ("::" fn ">:$")
    }
    keep { buf = buf $0 "\n" }
    END { flush() }'
