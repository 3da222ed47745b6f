#!/usr/bin/env python3
"""Prints one markdown row of a `marquee bench -baseline -json` report:
the given cells, then the target's req/s, the hello-world's, the ratio of
each round (target ÷ the hello-world of the same round), their median
(the report's ratio) and the target's cache hit ratio.

    scripts/throughput-row.py REPORT.json CELL...
"""
import json
import sys

rep = json.load(open(sys.argv[1]))
cells = sys.argv[2:]
per = [r["reqPerSec"] / h["reqPerSec"] for r in rep["runs"] if r["kind"] == "measure" and r["server"] == "target"
       for h in rep["runs"] if h["kind"] == "measure" and h["server"] == "hello" and h["round"] == r["round"]]
cells += [f'{rep["reqPerSec"]:,.0f}', f'{rep["baselineReqPerSec"]:,.0f}', ", ".join(f"{x:.2f}" for x in per),
          f'**{rep["ratio"]:.3f}**', f'{rep["cache"]["hitRatio"]:.3f}']
print("| " + " | ".join(cells) + " |")
