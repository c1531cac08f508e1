"""gtranspose: fast transposes of NumPy arrays, GPU arrays and matrix files.

    import gtranspose as gt

    b = gt.transpose(a)                      # NumPy: b = a.T, C-contiguous, through the GPU where there is one
    gt.transpose(a, out=b)                   # into an array you hold
    gt.transpose(sq, inplace=True)           # a square array, in place
    c = gt.transpose(cupy_array)             # on the GPU, on the array's stream: a CuPy array back
    r = gt.transpose_file("in.h5:/x", "out.h5", host_mem="8G")   # files larger than RAM; r: the report

Every exception raised is a gtranspose.Error, and also the Python exception
it corresponds to: GtValueError (ValueError) for a bad argument,
GtFileNotFoundError (FileNotFoundError) and the other GtOSError (OSError)
classes for files, NoDeviceError and CudaError (RuntimeError) for the GPU.
"""

from . import _core
from ._core import (CudaError, Error, GtFileExistsError, GtFileNotFoundError, GtIsADirectoryError,
                    GtNotADirectoryError, GtOSError, GtPermissionError, GtRuntimeError, GtValueError, NoDeviceError)
from ._common import check_engine as _check_engine
from ._device import is_device_array
from ._device import transpose as _transpose_device
from ._files import transpose_file
from ._host import Transposer, empty_pinned, release, transposer

__version__ = "0.1.0"

__all__ = ["transpose", "transpose_file", "Transposer", "release", "empty_pinned", "transposer", "is_device_array",
           "built_with_cuda", "gpu_count", "kernels", "Error", "GtValueError", "GtOSError", "GtFileNotFoundError",
           "GtPermissionError", "GtFileExistsError", "GtIsADirectoryError", "GtNotADirectoryError", "GtRuntimeError",
           "NoDeviceError", "CudaError"]


def transpose(a, out=None, *, inplace=False, engine="auto", kernel="auto", host_mem=None, device_mem=None,
              tile=None, threads=None, streams=None, register=False, stream=None):
    """Returns a.T as a new C-contiguous array, or fills `out` with it.

    A new NumPy output's pages are faulted in on every core before the run
    (the kernel zeroes each page on its first touch); an `out` you reuse
    has paid for that already and is the faster way for repeated calls.

    a: a 2-D array. A NumPy array (or anything np.asarray takes) is
        transposed in host memory by the library's engine: the GPU where
        there is one (staged through pinned buffers by several threads, or
        by DMA directly for pinned memory, see empty_pinned), else the
        multithreaded CPU engine. A GPU array (CuPy, anything with
        __cuda_array_interface__, or a CUDA DLPack tensor) is transposed in
        its own memory by the registry's kernel, asynchronously on its stream
        (CuPy's current stream for a CuPy array), and the result is an array
        of the same kind.
        Any element type of 1, 2, 4, 8 or 16 bytes moves (the 14 numeric
        types, bool, void and structured types; either byte order: bytes
        move unchanged, the dtype is kept). Strided views are read where they
        lie when one axis has unit stride, and staged through a contiguous
        copy otherwise.
    out: an array of shape (cols, rows) and a's dtype, with one axis of unit
        stride, not overlapping a (for GPU arrays, on the same GPU).
    inplace: transpose a where it lies. A square array is returned itself
        (for a NumPy array, through the GPU too); a contiguous NumPy
        rectangle (C or Fortran order) returns a new view of its memory,
        shape (cols, rows), while a keeps its old shape over the moved bytes.
        A contiguous GPU rectangle likewise (kernel inplace-rect, queued on
        the stream; CuPy arrays in either order, other kinds C-ordered with
        a reshape()); it may allocate up to 64 MiB of scratch on the GPU.
    engine: "auto", "cuda" or "cpu", for NumPy arrays.
    kernel: a CUDA kernel's name (gtranspose.kernels()), or "auto".
    host_mem, device_mem: budgets in bytes or as "8G"; tile: elements per
        tile; threads, streams: as the CLI's flags (NumPy arrays only).
    register: for NumPy arrays on the GPU, register a's and out's pages with
        CUDA for the call (cudaHostRegister) and DMA them instead of staging
        them. It costs about as much as writing the memory once; the report
        (Transposer.last_report) notes the time it took.
    stream: for GPU arrays, a stream (an int handle, or an object with .ptr)
        to run on instead of the array's.

    The GIL is released while a NumPy array is transposed; Ctrl-C stops a
    long call within a tile (KeyboardInterrupt), leaving `out` partly written.
    """
    if is_device_array(a):
        for name, value in (("host_mem", host_mem), ("device_mem", device_mem), ("tile", tile),
                            ("threads", threads), ("streams", streams)):
            if value is not None:
                raise GtValueError(f"{name} applies to host arrays: a GPU array is transposed in its own memory")
        if register:
            raise GtValueError("register applies to host arrays: a GPU array is already in device memory")
        if engine == "cpu":
            raise GtValueError("engine cpu cannot take a GPU array: copy it to the host first, or use engine auto")
        _check_engine(engine)
        return _transpose_device(a, out, inplace=inplace, kernel=kernel, stream=stream)
    if stream is not None:
        raise GtValueError("stream applies to GPU arrays: a NumPy array is transposed by the engine's own streams")
    return transposer(engine).transpose(a, out, inplace=inplace, kernel=kernel, host_mem=host_mem,
                                        device_mem=device_mem, tile=tile, threads=threads, streams=streams,
                                        register=register)


def built_with_cuda():
    """True when this gtranspose was built with the CUDA engine and kernels."""
    return _core.built_with_cuda()


def gpu_count():
    """(number of usable GPUs, why there are none: "" when there are some)."""
    return _core.cuda_device_count()


def kernels():
    """The CUDA kernel catalogue: a list of (name, kind, description); empty
    in a CPU-only build."""
    return _core.list_kernels()
