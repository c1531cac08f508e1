"""Files: the CLI's job (raw, .npy and HDF5, out of place or in place) as a
function that returns the report."""

import json
import os

from . import _core
from ._common import check_engine, gt_dtype_name, run_args


def _shape_text(shape):
    if shape is None:
        return ""
    if isinstance(shape, str):
        return shape
    try:
        rows, cols = (int(n) for n in shape)
    except (TypeError, ValueError):
        raise _core.GtValueError(f"shape takes (rows, cols) or 'ROWSxCOLS', not {shape!r}") from None
    return f"{rows}x{cols}"


def _flag(name, value):
    if not isinstance(value, bool):
        raise _core.GtValueError(f"{name} takes True or False, not {value!r}")
    return value


def transpose_file(src, dst=None, *, in_place=False, resume=False, shape=None, dtype=None, force=False,
                   engine="auto", kernel="auto", host_mem=None, device_mem=None, tile=None, threads=None,
                   streams=None, progress=None):
    """Transposes a matrix file into another, or a square one in place, as the
    gtranspose command line does, and returns the run's report as a dict.

    src, dst: paths (str or os.PathLike). The format comes from the
        extension: .h5/.hdf5 HDF5 ("file.h5:/group/dataset" names a dataset;
        without one, the file's only 2-D dataset), .npy NumPy, anything else
        raw row-major bytes, which need `shape` and `dtype`. The output is
        written under a temporary name beside dst and renamed only when
        complete; an existing dst needs force=True.
    in_place: transpose src inside itself (no dst): any raw or C-order
        .npy matrix, an HDF5 dataset if square (a raw file is then C x R;
        shapes with no block route take a slower pass-by-pass route,
        README "Rectangles"). It writes a journal beside the
        file; a run stopped by a crash or Ctrl-C is finished by the same
        call with resume=True.
    shape: (rows, cols) or "ROWSxCOLS", for raw files.
    dtype: "f32", "bf16", ... or a NumPy dtype of those sizes, for raw files.
    engine: "auto" (the GPU where there is one, except compressed HDF5 chunks and files in place,
        which the CPU engine runs faster: the report's notes say so), "cuda" or "cpu".
    kernel: a CUDA kernel's name, or "auto".
    host_mem, device_mem: budgets in bytes, or strings such as "8G"
        (binary: 1G = 2**30); peak memory stays within them.
    tile: elements per tile (the run plan's choice by default).
    threads, streams: CPU threads, CUDA streams.
    progress: a callable, called as progress(bytes_done, bytes_total) from
        this thread, at most 10 times a second, while the run goes on. An
        exception it raises stops the run (as Ctrl-C does) and is raised here.

    The GIL is released while the run works. Ctrl-C (KeyboardInterrupt)
    stops it within a tile: out of place nothing is left at dst, in place
    the journal lets resume=True finish the file.

    Returns the CLI's --json report as a dict (schema 1, README "The JSON
    report"): schema, version, mode, engine, kernel, input and output (path,
    format, dataset, shape, dtype, byte_order, chunks, filters), plan, bytes,
    wall_s, rate_bytes_per_s, stages, notes, ...
    Raises GtValueError for bad arguments, GtFileNotFoundError and the other
    GtOSError classes for files, NoDeviceError for engine="cuda" without a GPU.
    """
    src = os.fspath(src)
    dst = "" if dst is None else os.fspath(dst)
    if progress is not None and not callable(progress):
        raise _core.GtValueError(f"progress takes a callable (bytes_done, bytes_total), not {progress!r}")
    args = run_args(host_mem, device_mem, tile, threads, streams, kernel)
    report = _core.run_job(src, dst, _flag("in_place", in_place), _flag("resume", resume), _shape_text(shape),
                           gt_dtype_name(dtype), _flag("force", force), check_engine(engine), args, progress)
    return json.loads(report)
