#!/usr/bin/env python3
"""One line per profiled kernel from gpu-check.sh's profile.log (ncu text output):
time, DRAM bytes and % of peak, warp instructions, registers, occupancy, cycles per
issued instruction, shared-memory bank conflicts.

  scripts/ncu-summary.py profile.log
"""
import re
import sys

FIELDS = [("time", "gpu__time_duration.sum"), ("dram_rd", "dram__bytes_read.sum"),
          ("dram_wr", "dram__bytes_write.sum"), ("dram_%", "DRAM Throughput"),
          ("inst", "smsp__inst_executed.sum"), ("regs", "launch__registers_per_thread"),
          ("occ_%", "Achieved Occupancy"), ("cpi", "Warp Cycles Per Issued Instruction"),
          ("bank", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum")]


def main(path):
    spec, cur, rows = None, None, []
    for line in open(path, errors="replace"):
        if line.startswith("==="):
            spec = line.strip("= \n")
            continue
        if "Context" in line and "Device" in line and "(" in line:
            name = line.strip().split("(const")[0].split("(T")[0]
            cur = {"spec": spec, "name": re.sub(r"\s+", " ", name)[-80:]}
            rows.append(cur)
            continue
        if cur is None:
            continue
        s = line.strip()
        for key, pat in FIELDS:
            if s.startswith(pat) and key not in cur:
                unit_val = s[len(pat):].split()
                # "Metric Unit Value": time and bytes keep their unit, after the value.
                cur[key] = f"{unit_val[-1]} {unit_val[-2]}" if key in ("time", "dram_rd", "dram_wr") else unit_val[-1]
    seen = set()
    for r in rows:
        k = (r["spec"], r["name"])
        if k in seen:
            continue
        seen.add(k)
        print(f'{r["spec"]} | {r["name"]}')
        print("   " + "  ".join(f"{key} {r.get(key, '-')}" for key, _ in FIELDS))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "profile.log")
