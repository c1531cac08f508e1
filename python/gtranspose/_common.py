"""What the array, device and file entry points share: option values turned
into the library's, and the element types gtranspose moves."""

import numpy as np

from . import _core

# A transpose moves elements as opaque bytes: every engine and kernel moves
# elements of these sizes, whatever their type.
ITEMSIZES = (1, 2, 4, 8, 16)


def size_arg(name, value):
    """Bytes from an int or a size string ("512M", "8GiB", binary like the
    CLI's); None gives 0, the run plan's own choice."""
    if value is None:
        return 0
    if isinstance(value, str):
        try:
            return _core.parse_size(value)
        except _core.GtValueError as e:
            raise _core.GtValueError(f"{name}: {e}") from None
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        if value < 0:
            raise _core.GtValueError(f"{name} {value} is negative: give a size in bytes, or a string such as '8G'")
        return int(value)
    raise _core.GtValueError(f"{name} takes an int or a string such as '8G', not {type(value).__name__}")


def count_arg(name, value):
    """A thread or stream count; None gives 0, the run plan's own choice."""
    if value is None:
        return 0
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value >= 0:
        return int(value)
    raise _core.GtValueError(f"{name} takes an int >= 0 (or None for the default), not {value!r}")


def run_args(host_mem=None, device_mem=None, tile=None, threads=None, streams=None, kernel="auto"):
    """The library's RunOptions, from the keywords every entry point takes."""
    if not isinstance(kernel, str):
        raise _core.GtValueError(f"kernel takes a kernel's name or 'auto', not {kernel!r}")
    return _core.RunArgs(host_mem=size_arg("host_mem", host_mem), device_mem=size_arg("device_mem", device_mem),
                         tile=size_arg("tile", tile), threads=count_arg("threads", threads),
                         streams=count_arg("streams", streams), kernel=kernel)


def check_engine(engine):
    if engine not in ("auto", "cuda", "gpu", "cpu"):
        raise _core.GtValueError(f"unknown engine '{engine}': use auto, cuda or cpu")
    return "cuda" if engine == "gpu" else engine


def element_size(dtype):
    """The bytes per element of an array gtranspose can move, or GtValueError.

    Any dtype moves as long as its elements are plain bytes of a supported
    size: the 14 numeric types of the CLI (and ml_dtypes' bfloat16), bool,
    datetimes, fixed-size strings and void or structured types of 1, 2, 4, 8
    or 16 bytes, in either byte order (the bytes move unchanged)."""
    dtype = np.dtype(dtype)
    if dtype.hasobject:
        raise _core.GtValueError(f"dtype {dtype} holds Python objects: gtranspose moves plain bytes "
                                 "(use np.ascontiguousarray(a.T))")
    if dtype.itemsize not in ITEMSIZES:
        raise _core.GtValueError(f"dtype {dtype} has {dtype.itemsize}-byte elements: gtranspose moves elements of "
                                 "1, 2, 4, 8 or 16 bytes (use np.ascontiguousarray(a.T))")
    return dtype.itemsize


# NumPy kinds and sizes to the CLI's dtype names, for raw files.
_GT_NAMES = {("i", 1): "i8", ("u", 1): "u8", ("i", 2): "i16", ("u", 2): "u16", ("f", 2): "f16",
             ("i", 4): "i32", ("u", 4): "u32", ("f", 4): "f32", ("i", 8): "i64", ("u", 8): "u64",
             ("f", 8): "f64", ("c", 8): "c64", ("c", 16): "c128"}


def gt_dtype_name(dtype):
    """The CLI's name ("f32") for a dtype given as that name or as anything
    np.dtype() takes; "" for None."""
    if dtype is None:
        return ""
    if isinstance(dtype, str) and dtype.lower() in _core.dtype_names().split() + ["bf16", "bfloat16"]:
        return dtype
    try:
        d = np.dtype(dtype)
    except TypeError:
        return str(dtype)  # the library names the valid ones
    if d.name == "bfloat16":  # ml_dtypes
        return "bf16"
    if d.byteorder == ">":
        raise _core.GtValueError(f"dtype {d} is big-endian: a raw file has no byte order, and gtranspose reads it as "
                                 "the machine's; give the little-endian dtype")
    name = _GT_NAMES.get((d.kind, d.itemsize))
    if name is None:
        raise _core.GtValueError(f"dtype {d} has no raw-file name: use one of {_core.dtype_names()}")
    return name
