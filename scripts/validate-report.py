#!/usr/bin/env python3
"""Writes OUTDIR/report.md and OUTDIR/report.html from what scripts/validate-server.sh left in
OUTDIR: the machine, what check-server said, fidelity, every lock under compact and scatter
(throughput per node where threads spanned several), counters, calibrate, correlate, predict.

usage: validate-report.py OUTDIR CORES THREADS QUICK SECONDS
"""
import html
import json
import os
import sys
from collections import defaultdict

out, cores, threads, quick, seconds = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == "1", sys.argv[5]


def load(name, default):
    try:
        with open(os.path.join(out, name)) as f:
            return json.load(f)
    except (OSError, ValueError):
        return default


def text(name):
    try:
        with open(os.path.join(out, name)) as f:
            return f.read().rstrip()
    except OSError:
        return ""


def rate(v):
    if v is None or v != v:
        return "-"
    for div, unit in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if v >= div:
            return f"{v / div:.2f} {unit}"
    return f"{v:.0f}"


runs = {pin: load(f"{pin}.json", []) for pin in ("compact", "scatter")}
first = next((r for rs in runs.values() for r in rs), None)
md = []
host = (first or {}).get("host", {})
md.append(f"# Server validation: {host.get('hostname') or 'this machine'}\n")
md.append(
    f"{'Quick' if quick else 'Full'} validation in {seconds} s; every physical core = {cores}; "
    f"thread counts {threads}.\n"
)
md.append("## The machine\n")
if host:
    rows = [
        ("CPU", host.get("cpu_model")),
        ("packages (sockets)", host.get("packages")),
        ("physical cores", host.get("physical_cores")),
        ("logical CPUs", host.get("logical_cpus")),
        ("NUMA nodes", host.get("numa_nodes")),
        ("SMT", host.get("smt")),
        ("kernel", host.get("kernel")),
        ("governor", host.get("governor")),
        ("boost", host.get("boost")),
        ("clock source", host.get("clocksource")),
    ]
    md.append("| | |\n|---|---|")
    md += [f"| {k} | {'unknown' if v is None else v} |" for k, v in rows]
    md.append("")
else:
    md.append("No run finished, so the machine is not described; see compact.log.\n")

check = text("check-server.txt")
warnings = [l for l in check.splitlines() if l.startswith("warning:")]
md.append(f"## Settings (scripts/check-server.sh): {len(warnings)} warning(s)\n")
md.append("```\n" + (check or "not run") + "\n```\n")

md.append("## Fidelity: harness against a bare loop\n")
fid = load("fidelity.json", [])
if fid:
    md.append("| lock | threads | harness/bare throughput (median) |\n|---|---|---|")
    for p in fid:
        ratio = (p.get("ratio") or {}).get("median")
        md.append(f"| {p.get('lock')} | {p.get('threads')} | {'-' if ratio is None else f'{ratio:.3f}'} |")
    md.append("")
else:
    md.append("fidelity gave no figure:\n")
    md.append("```\n" + (text("fidelity.log") or "not run") + "\n```\n")

unsafe, stalled = [], []
unavailable = {}
for pin, rs in runs.items():
    for r in rs:
        if r.get("safety_violations"):
            unsafe.append(f"{r['lock']} t={r['threads']} ({pin})")
        if r.get("stalled"):
            stalled.append(f"{r['lock']} t={r['threads']} ({pin})")
        for c in r.get("counters", []):
            if c.get("per_passage") is None and c.get("unavailable"):
                unavailable.setdefault(c.get("name"), c.get("unavailable"))
md.append("## Safety and progress\n")
md.append(f"- safety violations: {', '.join(unsafe) if unsafe else 'none'}")
md.append(f"- stalled runs: {', '.join(stalled) if stalled else 'none'}\n")

for pin, rs in runs.items():
    md.append(f"## Every lock, --pin {pin}\n")
    if not rs:
        md.append(f"No result: see {pin}.log.\n")
        continue
    counts = sorted({r["threads"] for r in rs})
    table = defaultdict(dict)
    for r in rs:
        table[(r["lock"], r["mix"])][r["threads"]] = r.get("throughput_per_sec")
    md.append("Passages per second (median of rounds). Full report: "
              f"[{pin}/report.md]({pin}/report.md).\n")
    md.append("| lock | mix | " + " | ".join(f"t={t}" for t in counts) + " |")
    md.append("|---|---|" + "---|" * len(counts))
    for (lock, mix), row in table.items():
        md.append(f"| {lock} | {mix} | " + " | ".join(rate(row.get(t)) for t in counts) + " |")
    md.append("")
    nodes = []
    for r in rs:
        per = defaultdict(lambda: [0, 0.0])
        for t in r.get("per_thread", []):
            if t.get("node") is not None:
                per[t["node"]][0] += 1
                per[t["node"]][1] += t.get("rate_per_sec") or 0.0
        if len(per) > 1:
            parts = " · ".join(f"node {n} {c} threads {rate(v)}/s" for n, (c, v) in sorted(per.items()))
            nodes.append(f"- {r['lock']} t={r['threads']}: {parts}")
    if nodes:
        md.append("Throughput per NUMA node:\n")
        md += nodes
        md.append("")
    else:
        md.append("Every run's threads were on one NUMA node (no per-node breakdown).\n")

md.append("## Hardware counters\n")
if first:
    counted = sorted({c.get("name") for r in first and runs["compact"] for c in r.get("counters", [])
                      if c.get("per_passage") is not None})
    md.append(f"- counted: {', '.join(counted) if counted else 'none'}")
    for name, why in sorted(unavailable.items()):
        md.append(f"- {name}: unavailable ({why})")
    md.append("")
for name, title in (("calibrate.txt", "calibrate"), ("correlate.txt", "correlate"), ("predict.txt", "predict")):
    md.append(f"## {title}\n")
    md.append("```\n" + (text(name) or "no output") + "\n```\n")
if os.path.exists(os.path.join(out, "model", "report.md")):
    md.append("The model's RMRs beside the hardware: [model/report.md](model/report.md).\n")

body = "\n".join(md) + "\n"
with open(os.path.join(out, "report.md"), "w") as f:
    f.write(body)


def to_html(lines):
    """A small Markdown subset: headings, tables, code blocks, lists, links, paragraphs."""
    res, i = [], 0
    while i < len(lines):
        l = lines[i]
        if l.startswith("```"):
            j = i + 1
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            res.append("<pre>" + html.escape("\n".join(lines[i + 1:j])) + "</pre>")
            i = j + 1
            continue
        if l.startswith("#"):
            n = len(l) - len(l.lstrip("#"))
            res.append(f"<h{n}>{html.escape(l[n:].strip())}</h{n}>")
        elif l.startswith("|"):
            rows = []
            while i < len(lines) and lines[i].startswith("|"):
                cells = [c.strip() for c in lines[i].strip().strip("|").split("|")]
                if not all(set(c) <= {"-"} for c in cells):
                    rows.append("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in cells) + "</tr>")
                i += 1
            res.append("<table>" + "".join(rows) + "</table>")
            continue
        elif l.startswith("- "):
            res.append(f"<li>{html.escape(l[2:])}</li>")
        elif l.strip():
            res.append(f"<p>{html.escape(l)}</p>")
        i += 1
    return "\n".join(res)


page = (
    "<!doctype html><html><head><meta charset='utf-8'><title>Server validation</title>"
    "<style>body{font-family:sans-serif;max-width:70em;margin:auto}td{padding:2px 8px;border-bottom:1px solid #ddd}"
    "pre{background:#f6f6f6;padding:6px;overflow-x:auto}</style></head><body>\n"
    + to_html(body.splitlines())
    + "\n</body></html>\n"
)
with open(os.path.join(out, "report.html"), "w") as f:
    f.write(page)
