#!/usr/bin/env bash
# Regenerates what the documentation says about the papers from `lockbench claims --quick`:
#   docs/claims-quick.json   the quick ledger as data (also the baseline CI checks against:
#                            `claims --quick --baseline docs/claims-quick.json` exits 1 when a
#                            claim that held here no longer does)
#   docs/claims.md           the quick ledger as a Markdown table, between its markers
#   README.md                the counts per paper and the ids of the rows that do not hold, between
#                            its markers
# Run it after a change that moves a verdict, and commit the three files together.
#   scripts/claims-readme.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
bin=target/release/lockbench
json=$(mktemp)
md=$(mktemp)
trap 'rm -f "$json" "$md"' EXIT
"$bin" claims --quick --format json >"$json"
"$bin" claims --quick --format md >"$md"
cp "$json" docs/claims-quick.json
python3 - "$json" "$md" <<'EOF'
import json, sys

rows = json.load(open(sys.argv[1]))
table = open(sys.argv[2]).read().rstrip("\n")

def replace(path, begin, end, text):
    s = open(path).read()
    i, j = s.index(begin), s.index(end)
    open(path, "w").write(s[: i + len(begin)] + "\n" + text + "\n" + s[j:])

replace("docs/claims.md", "<!-- claims-quick:begin -->", "<!-- claims-quick:end -->", table)

papers = {"000": "GME in linear time and space", "001": "Zehavi k-exclusion",
          "002": "bounded Bakery", "003": "TokenGME", "004": "LKCS"}
words = ["holds", "differs", "open", "not checkable here"]
lines = ["| paper | " + " | ".join(words) + " |", "|---|" + "---|" * len(words)]
for p, name in papers.items():
    mine = [r for r in rows if r["paper_id"] == p]
    counts = [str(sum(r["verdict"] == w for r in mine)) for w in words]
    lines.append(f"| {p} {name} | " + " | ".join(counts) + " |")
lines.append("")
others = [f"`{r['id']}` ({r['verdict']})" for r in rows if r["verdict"] != "holds"]
lines.append("The claims that do not hold at the quick level, each with the ledger's reason in "
             "[docs/claims.md](docs/claims.md): " + ", ".join(others) + ".")
replace("README.md", "<!-- claims-summary:begin -->", "<!-- claims-summary:end -->", "\n".join(lines))
EOF
echo "docs/claims-quick.json, docs/claims.md and README.md regenerated from lockbench claims --quick"
