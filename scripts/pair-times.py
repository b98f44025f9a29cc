#!/usr/bin/env python3
"""Two builds timed side by side: OLD ARGS and NEW ARGS run at once, one on each CPU, swapping
CPUs each round, and the user CPU of each is read from the kernel. Prints each pair and then
the median of NEW/OLD with its lowest and highest, and each build's median time. Both builds
share the machine's mood of those seconds, so the ratio holds where a time taken alone moves
with the hour (docs/message-passing.md, "Where the simulator stands").

  scripts/pair-times.py [--rounds N] OLD NEW ARGS...
  scripts/pair-times.py --rounds 8 /tmp/lockbench-before target/release/lockbench \\
      sim --algo token-gme --n 500 --requests 500

On a machine with one CPU the two run one after the other, in turn first. A run that fails
stops the pairing (exit 1); bad input, or a run under 0.05 s of user CPU, exits 2."""

import os
import statistics
import subprocess
import sys


def fail(msg):
    print(f"pair-times: {msg}", file=sys.stderr)
    sys.exit(2)


def parse(argv):
    rounds = 6
    if argv[:1] == ["--rounds"]:
        if len(argv) < 2 or not argv[1].isdigit() or int(argv[1]) < 1:
            fail("--rounds takes a positive count, e.g. --rounds 8")
        rounds, argv = int(argv[1]), argv[2:]
    if len(argv) < 3:
        fail("usage: scripts/pair-times.py [--rounds N] OLD NEW ARGS... (see its header)")
    for b in argv[:2]:
        if not (os.path.isfile(b) and os.access(b, os.X_OK)):
            fail(f"{b} is not an executable file: give the path of each build's binary")
    return rounds, argv[0], argv[1], argv[2:]


def start(binary, args, cpu):
    pin = (lambda: os.sched_setaffinity(0, {cpu})) if cpu is not None else None
    return subprocess.Popen(
        [binary, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, preexec_fn=pin
    )


def finish(proc, binary):
    """The user CPU seconds of a started run; exits 1 when it failed."""
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        last = err.decode(errors="replace").strip().splitlines()[-1:] or ["(no message)"]
        print(f"pair-times: {binary} exited {code}: {last[0]}", file=sys.stderr)
        sys.exit(1)
    return usage.ru_utime


def main():
    rounds, old, new, args = parse(sys.argv[1:])
    cpus = sorted(os.sched_getaffinity(0))
    together = len(cpus) >= 2
    if not together:
        print("one CPU: the two run one after the other, in turn first")
    pairs = []
    for i in range(rounds):
        if together:
            a, b = (cpus[0], cpus[1]) if i % 2 == 0 else (cpus[1], cpus[0])
            pa, pb = start(old, args, a), start(new, args, b)
            t_old, t_new = finish(pa, old), finish(pb, new)
        elif i % 2 == 0:
            t_old = finish(start(old, args, None), old)
            t_new = finish(start(new, args, None), new)
        else:
            t_new = finish(start(new, args, None), new)
            t_old = finish(start(old, args, None), old)
        if min(t_old, t_new) < 0.05:
            fail(f"a run took {min(t_old, t_new):.3f} s of user CPU, too little to time: give it more work")
        pairs.append((t_old, t_new))
        print(f"pair {i + 1}: old {t_old:.3f} s, new {t_new:.3f} s, new/old {t_new / t_old:.3f}")
    ratios = [n / o for o, n in pairs]
    print(
        f"new/old {statistics.median(ratios):.3f} (median; {min(ratios):.3f}-{max(ratios):.3f}, "
        f"{len(pairs)} pairs); user CPU medians: old {statistics.median(o for o, _ in pairs):.3f} s, "
        f"new {statistics.median(n for _, n in pairs):.3f} s"
    )


if __name__ == "__main__":
    main()
