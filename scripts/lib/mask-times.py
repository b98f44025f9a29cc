#!/usr/bin/env python3
"""Masks wall-clock fields in JSON outputs, so that two binaries' outputs compare equal when
only their timings differ (scripts/same-outputs.sh, scripts/same-rmr.sh):
    python3 scripts/lib/mask-times.py 'DIR/*.out' KEY...
Every file the pattern matches that is JSON is rewritten with each KEY's value, at any depth,
replaced by "T", in one layout (fields in their order); other files are left as they are."""
import glob
import json
import sys

keys = set(sys.argv[2:])


def mask(v):
    if isinstance(v, dict):
        return {k: ("T" if k in keys else mask(x)) for k, x in v.items()}
    if isinstance(v, list):
        return [mask(x) for x in v]
    return v


for f in glob.glob(sys.argv[1]):
    try:
        v = json.load(open(f))
    except ValueError:
        continue
    json.dump(mask(v), open(f, "w"), indent=1)
