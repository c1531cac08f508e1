// The package's exceptions: gt::Error, raised as Python's own kinds.
//
//   gtranspose.Error                         every exception the package raises
//   ├── GtValueError (ValueError)            a bad argument (ErrorKind::usage)
//   ├── GtOSError (OSError)                  input, output, io; with .errno when a system call failed
//   │   ├── GtFileNotFoundError (FileNotFoundError)   ENOENT
//   │   ├── GtPermissionError (PermissionError)       EACCES, EPERM
//   │   ├── GtFileExistsError (FileExistsError)       EEXIST
//   │   ├── GtIsADirectoryError (IsADirectoryError)   EISDIR
//   │   └── GtNotADirectoryError (NotADirectoryError) ENOTDIR
//   └── GtRuntimeError (RuntimeError)        internal errors
//       ├── NoDeviceError                    no usable GPU for what was asked
//       └── CudaError                        a CUDA call failed
//
// Messages are the CLI's, with parameters spelled as the Python keywords
// (host_mem, force=True) instead of its flags (--host-mem, --force).
#pragma once
#include <pybind11/pybind11.h>

#include <string>
#include <string_view>

#include "gtranspose/error.hpp"

namespace gtpy {

// How a library parameter ({host_mem}) reads in a Python message.
std::string python_spelling(std::string_view param);

// Creates the classes in `m` and registers the translator of gt::Error.
void register_errors(pybind11::module_& m);

}  // namespace gtpy
