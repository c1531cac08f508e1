// Running a library call from Python: the GIL released while it works, the
// calling thread left free to notice Ctrl-C and to hand progress to a Python
// callable.
#pragma once
#include <pybind11/pybind11.h>

#include <functional>

#include "gtranspose/engine.hpp"
#include "gtranspose/report.hpp"

namespace gtpy {

// Runs work(opts) on a worker thread while the calling thread, GIL released,
// waits for it. Every 100 ms, and when the work ends, the calling thread
// takes the GIL back to run Python's signal handlers (PyErr_CheckSignals
// does anything only on the main thread, which is why the work is not run
// there) and, when `progress` is a callable, to call it with (bytes done,
// bytes total) if progress was made since the last call. A Python exception
// from either (KeyboardInterrupt, or whatever the callable raised) raises
// opts.cancel: the engine stops between tiles, the library removes what it
// had begun at the output, and that exception is raised here once the
// worker has returned. gt::Error is raised as the package's exception.
gt::RunReport run_released(const std::function<gt::RunReport(const gt::RunOptions&)>& work, gt::RunOptions opts,
                           const pybind11::object& progress);

}  // namespace gtpy
