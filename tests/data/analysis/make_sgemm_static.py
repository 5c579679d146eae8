#!/usr/bin/env python3
"""Turns the CSV of a full `tilescope-cli analyze` of kernels/sgemm into sgemm_static.csv: one row
per valid config (in space order) with the registers and spill bytes NVRTC reported for sm_90 and
sm_80. tst_rulesuggest learns the register-pressure rule from it and recompiles a few configs to check
that it is current. See README.md beside this file."""

import csv
import sys

PARAMS = ["BLOCK_M", "BLOCK_N", "BLOCK_K", "THREAD_M", "THREAD_N", "VEC", "STAGES"]
ARCHS = ["sm_90", "sm_80"]


def main(path):
    rows = {}
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            if r["status"] != "ok":
                sys.exit(f"index {r['index']} {r['arch']} did not compile: {r['message']}")
            key = int(r["index"])
            rows.setdefault(key, {"params": [r[p] for p in PARAMS]})[r["arch"]] = (
                r["registers"], r["spill_stores"], r["spill_loads"])
    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(PARAMS + [f"{a}_{field}" for a in ARCHS for field in ("registers", "spill_stores", "spill_loads")])
    for key in sorted(rows):
        row = rows[key]
        out.writerow(row["params"] + [v for a in ARCHS for v in row[a]])


if __name__ == "__main__":
    main(sys.argv[1])
