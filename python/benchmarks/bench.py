#!/usr/bin/env python3
"""Benchmarks of the gtranspose package, each beside its reference measured in
the same run, each result verified against the reference's:

  host    transpose(a) of a NumPy array against np.ascontiguousarray(a.T):
          a new output (as a user calls it), a preallocated one, and on the
          GPU register=True and pinned arrays (empty_pinned), with the CLI's
          --bench-host pinned and pageable rates for the same shape;
  cupy    transpose(a) of a CuPy array against cupy.ascontiguousarray(a.T),
          a device-to-device copy, and the CLI's --bench figure for the kernel;
  files   transpose_file() against the CLI on the same .npy file.

  PYTHONPATH=build/python python3 python/benchmarks/bench.py --cases host --engine cpu --size 1G        # the 2-core target
  PYTHONPATH=build/python python3 python/benchmarks/bench.py --size 4G --json bench-python.json          # H100: every case

Sizes are the matrix's bytes (K/M/G binary); the matrix is square where the
size allows. GB/s is matrix bytes over wall time for host and file rows (the
CLI's end-to-end figure) and bytes read + written over time for device rows
(--bench's). Exits 1 if a result does not match its reference.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import gtranspose as gt

ROWS = []  # every measurement, for the table and --json


def row(case, name, seconds, nbytes, ref=None, note="", rw=1):
    """Records one measurement: median seconds over reps, its GB/s, and its
    speed relative to `ref` (another row's name in the same case)."""
    med = statistics.median(seconds)
    r = {"case": case, "name": name, "median_s": med, "min_s": min(seconds), "reps": len(seconds),
         "gbps": rw * nbytes / med / 1e9, "note": note}
    if ref is not None:
        base = next(x for x in ROWS if x["case"] == case and x["name"] == ref)
        r["vs"] = ref
        r["speedup"] = base["median_s"] / med
    ROWS.append(r)
    vs = f"  {r['speedup']:7.2f}x {ref}" if ref is not None else ""
    print(f"  {name:34s} {med * 1e3:10.2f} ms  {r['gbps']:8.2f} GB/s{vs}  {note}", flush=True)
    return r


def timed(fn, reps, warmup=1):
    for _ in range(warmup):
        fn()
    out = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def verify(name, got, want):
    if not (got.shape == want.shape and got.dtype == want.dtype and
            np.array_equal(got.view(np.uint8), want.view(np.uint8))):
        print(f"FAILED: {name} does not match the reference", file=sys.stderr)
        sys.exit(1)


def square_shape(nbytes, itemsize):
    n = int((nbytes // itemsize) ** 0.5)
    return n, (nbytes // itemsize) // n


def cli_json(cli, *args):
    """Runs the CLI with --json and returns its JSON (None, and a note, when it fails)."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "out.json")
        r = subprocess.run([cli, *args, "--json", path, "-q"], capture_output=True, text=True)
        if r.returncode != 0:
            print(f"  (the CLI failed: {r.stderr.strip()})")
            return None
        with open(path) as f:
            return json.load(f)


def bench_host(o, cli):
    dtype = np.dtype(o.dtype)
    shape = square_shape(o.size, dtype.itemsize)
    nbytes = shape[0] * shape[1] * dtype.itemsize
    t = gt.Transposer(o.engine)
    print(f"host: {shape[0]}x{shape[1]} {dtype} ({nbytes / 2**30:.2f} GiB), engine {t.kind}, {o.reps} reps")
    # Random bytes (NaNs included for floats: results are compared as bytes).
    a = np.frombuffer(np.random.default_rng(1).bytes(nbytes), dtype=dtype).reshape(shape)
    want = np.ascontiguousarray(a.T)
    row("host", "np.ascontiguousarray(a.T)", timed(lambda: np.ascontiguousarray(a.T), o.ref_reps, 0), nbytes)
    got = t.transpose(a)
    verify("transpose(a)", got, want)
    del got
    row("host", "transpose(a) (new output)", timed(lambda: t.transpose(a), o.reps), nbytes,
        "np.ascontiguousarray(a.T)", "page faults of the new array included (faulted in on every core first)")
    # The same with the new array's pages faulted in by the run's writer
    # threads as they first write them (np.empty alone): the reference for
    # new_array's prefault, in the same run.
    prefaulting = gt._host.new_array
    gt._host.new_array = lambda shape, dtype: np.empty(shape, dtype=dtype)
    try:
        row("host", "transpose(a) (new output, no prefault)", timed(lambda: t.transpose(a), o.reps), nbytes,
            "np.ascontiguousarray(a.T)", "first touch in the run's writer threads")
    finally:
        gt._host.new_array = prefaulting
    out = np.empty_like(want)
    out.fill(0)  # its pages touched once, as a reused buffer's are
    t.transpose(a, out=out)
    verify("transpose(a, out=b)", out, want)
    rep = row("host", "transpose(a, out=b)", timed(lambda: t.transpose(a, out=out), o.reps), nbytes,
              "np.ascontiguousarray(a.T)")
    rep["report"] = t.last_report
    if t.kind != "cuda":
        return
    out.fill(0)
    t.transpose(a, out=out, register=True)
    verify("register=True", out, want)
    row("host", "transpose(a, out=b, register=True)", timed(lambda: t.transpose(a, out=out, register=True), o.reps),
        nbytes, "np.ascontiguousarray(a.T)", t.last_report["notes"][-1])
    pa = gt.empty_pinned(shape, dtype)
    pa[...] = a
    po = gt.empty_pinned(want.shape, dtype)
    t.transpose(pa, out=po)
    verify("pinned", po, want)
    pinned = row("host", "transpose(pinned, out=pinned)", timed(lambda: t.transpose(pa, out=po), o.reps), nbytes,
                 "np.ascontiguousarray(a.T)")
    for name in ("transpose(a) (new output)", "transpose(a) (new output, no prefault)", "transpose(a, out=b)",
                 "transpose(a, out=b, register=True)"):
        r = next(x for x in ROWS if x["case"] == "host" and x["name"] == name)
        r["pct_of_pinned"] = 100 * r["gbps"] / pinned["gbps"]
        print(f"  {name}: {r['pct_of_pinned']:.1f}% of the pinned rate")
    pa = po = None  # the pinned memory back before the CLI pins its own
    t.release()
    if cli:
        res = cli_json(cli, "--bench-host", "--shape", f"{shape[0]}x{shape[1]}", "--dtype", o.gt_dtype)
        for r in (res or {}).get("rows", []):
            if not r.get("ran"):
                continue
            ROWS.append({"case": "host", "name": f"CLI --bench-host {r['name']}", "gbps": r["gbps"],
                         "median_s": r["median_ms"] / 1e3, "note": r.get("note", "")})
            print(f"  {'CLI --bench-host ' + r['name']:34s} {r['median_ms']:10.2f} ms  {r['gbps']:8.2f} GB/s "
                  f"(the CLI's own rate, bytes as it counts them)")


def bench_cupy(o, cli):
    try:
        import cupy
    except ImportError:
        print("cupy: CuPy is not installed: skipped")
        return
    dtype = np.dtype(o.dtype)
    shape = (o.cupy_n, o.cupy_n)
    nbytes = shape[0] * shape[1] * dtype.itemsize
    print(f"cupy: {shape[0]}x{shape[1]} {dtype}, {o.reps * 2} reps of 10 calls, GB/s as bytes read + written")
    a = cupy.random.random(shape).astype(dtype) if dtype.kind in "fc" else \
        cupy.random.randint(0, 2**15, size=shape).astype(dtype)
    want = cupy.ascontiguousarray(a.T)
    got = gt.transpose(a, kernel=o.kernel)
    if not bool(cupy.array_equal(got.view(cupy.uint8), want.view(cupy.uint8))):
        print("FAILED: transpose(cupy) does not match cupy.ascontiguousarray(a.T)", file=sys.stderr)
        sys.exit(1)
    out = cupy.empty_like(want)

    def device_times(fn, reps, batch=10):
        """Seconds per call, from CUDA events around `batch` calls queued back
        to back: the GPU stays busy while Python queues the next call, as in a
        pipeline, so the figure is the device's and not Python's call overhead."""
        start, stop = cupy.cuda.Event(), cupy.cuda.Event()
        for _ in range(3):
            fn()
        ts = []
        for _ in range(reps):
            start.record()
            for _ in range(batch):
                fn()
            stop.record()
            stop.synchronize()
            ts.append(cupy.cuda.get_elapsed_time(start, stop) / 1e3 / batch)
        return ts

    reps = o.reps * 2
    row("cupy", "D2D copy", device_times(lambda: cupy.copyto(out, a), reps), nbytes, rw=2)
    row("cupy", "cupy.ascontiguousarray(a.T)", device_times(lambda: cupy.ascontiguousarray(a.T), reps), nbytes,
        "D2D copy", rw=2)
    row("cupy", "transpose(a)", device_times(lambda: gt.transpose(a, kernel=o.kernel), reps), nbytes,
        "cupy.ascontiguousarray(a.T)", rw=2)
    row("cupy", "transpose(a, out=b)", device_times(lambda: gt.transpose(a, out=out, kernel=o.kernel), reps), nbytes,
        "cupy.ascontiguousarray(a.T)", rw=2)
    if cli:
        kernel = "padded" if o.kernel == "auto" else o.kernel
        res = cli_json(cli, "--bench", "--shape", f"{shape[0]}x{shape[1]}", "--dtype", o.gt_dtype, "--kernel", kernel,
                       "--no-peers")
        for r in (res or {}).get("rows", []):
            if r["name"] == kernel and r.get("ran"):
                ours = next(x for x in ROWS if x["case"] == "cupy" and x["name"] == "transpose(a, out=b)")
                ROWS.append({"case": "cupy", "name": f"CLI --bench {kernel}", "gbps": r["gbps"],
                             "median_s": r["median_ms"] / 1e3, "binding_pct": 100 * ours["gbps"] / r["gbps"]})
                print(f"  {'CLI --bench ' + kernel:34s} {r['median_ms']:10.2f} ms  {r['gbps']:8.2f} GB/s  "
                      f"transpose(a, out=b) at {100 * ours['gbps'] / r['gbps']:.1f}% of it")


def bench_files(o, cli):
    if not cli:
        print("files: the CLI was not found (--cli): skipped")
        return
    dtype = np.dtype(o.dtype)
    shape = square_shape(o.file_size, dtype.itemsize)
    nbytes = shape[0] * shape[1] * dtype.itemsize
    folder = tempfile.mkdtemp(prefix="gt-bench-", dir=o.dir)
    try:
        src = os.path.join(folder, "in.npy")
        a = np.lib.format.open_memmap(src, mode="w+", dtype=dtype, shape=shape)
        a[...] = np.arange(shape[1], dtype=dtype)
        a.flush()
        del a
        print(f"files: {shape[0]}x{shape[1]} {dtype} .npy ({nbytes / 2**30:.2f} GiB) in {folder}, {o.reps} reps each, "
              "alternating; page cache as the runs leave it (the input cached after the first)")
        extra = ["--engine", o.engine] if o.engine != "auto" else []
        report_json = os.path.join(folder, "cli.json")
        cli_times, py_times, cli_walls, py_walls = [], [], [], []
        for i in range(o.reps + 1):  # the first of each is a warm-up
            t0 = time.perf_counter()
            r = subprocess.run([cli, src, os.path.join(folder, "cli.npy"), "--force", "-q", "--json", report_json,
                                *extra])
            t_cli = time.perf_counter() - t0
            if r.returncode != 0:
                sys.exit(1)
            t0 = time.perf_counter()
            rep = gt.transpose_file(src, os.path.join(folder, "py.npy"), force=True, engine=o.engine)
            t_py = time.perf_counter() - t0
            if i:
                cli_times.append(t_cli)
                py_times.append(t_py)
                with open(report_json) as f:
                    cli_walls.append(json.load(f)["wall_s"])
                py_walls.append(rep["wall_s"])
        with open(os.path.join(folder, "cli.npy"), "rb") as f1, open(os.path.join(folder, "py.npy"), "rb") as f2:
            while True:
                b1, b2 = f1.read(1 << 24), f2.read(1 << 24)
                if b1 != b2:
                    print("FAILED: transpose_file's output differs from the CLI's", file=sys.stderr)
                    sys.exit(1)
                if not b1:
                    break
        row("files", "CLI (process, wall)", cli_times, nbytes)
        r = row("files", "transpose_file", py_times, nbytes, "CLI (process, wall)")
        row("files", "CLI (its report's wall_s)", cli_walls, nbytes)
        r2 = row("files", "transpose_file (report's wall_s)", py_walls, nbytes, "CLI (its report's wall_s)")
        for x in (r, r2):
            x["pct_slower"] = 100 * (1 / x["speedup"] - 1)
        print(f"  transpose_file against the CLI: {r['pct_slower']:+.1f}% by the clock (the CLI's time includes "
              f"starting it), {r2['pct_slower']:+.1f}% by the reports' wall_s (the job alone)")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def parse_size(text):
    return gt._core.parse_size(text)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cases", default="host,cupy,files", help="host, cupy, files (comma-separated)")
    p.add_argument("--size", type=parse_size, default=parse_size("4G"), help="host matrix bytes (default 4G)")
    p.add_argument("--file-size", type=parse_size, default=parse_size("2G"), help="file matrix bytes (default 2G)")
    p.add_argument("--cupy-n", type=int, default=16384, help="CuPy matrix side (default 16384)")
    p.add_argument("--dtype", default="float32", help="NumPy dtype (default float32)")
    p.add_argument("--engine", default="auto", help="engine for host arrays and files: auto, cuda, cpu")
    p.add_argument("--kernel", default="auto", help="CUDA kernel for CuPy arrays")
    p.add_argument("--reps", type=int, default=5, help="timed repetitions of gtranspose's rows (median)")
    p.add_argument("--ref-reps", type=int, default=3, help="timed repetitions of NumPy's (slow) reference")
    p.add_argument("--cli", default=None, help="the gtranspose CLI (default: beside the package, or on PATH)")
    p.add_argument("--dir", default=None, help="folder for the file bench (default: the system's temp folder)")
    p.add_argument("--json", default=None, help="write every row as JSON to this file")
    o = p.parse_args()
    o.gt_dtype = gt._common.gt_dtype_name(o.dtype)
    cli = o.cli or os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(gt.__file__)))),
                                "gtranspose")
    cli = cli if os.access(cli, os.X_OK) else shutil.which("gtranspose")
    n, why = gt.gpu_count()
    print(f"gtranspose {gt.__version__} ({'CUDA' if gt.built_with_cuda() else 'CPU-only'} build; "
          f"{n} GPU{'s' if n != 1 else ''}{': ' + why if why else ''}), NumPy {np.__version__}, "
          f"{os.cpu_count()} CPUs, CLI {cli or 'not found'}")
    cases = o.cases.split(",")
    if "host" in cases:
        bench_host(o, cli)
    if "cupy" in cases:
        if n == 0:
            print(f"cupy: no GPU ({why}): skipped")
        else:
            bench_cupy(o, cli)
    if "files" in cases:
        bench_files(o, cli)
    if o.json:
        with open(o.json, "w") as f:
            json.dump({"rows": ROWS}, f, indent=1)


if __name__ == "__main__":
    main()
