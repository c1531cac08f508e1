// Engines: move a whole matrix from a Source to a Sink (or in place), tile by
// tile, within the memory budgets. `cpu` is the reference and the fallback;
// `cuda` streams tiles through the GPU (see cuda.hpp).
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

#include "gtranspose/format.hpp"
#include "gtranspose/report.hpp"

namespace gt {

class InplaceWriter;  // journal.hpp

struct RunOptions {
  std::uint64_t host_mem = 0;     // host budget in bytes (0: default_host_budget())
  std::uint64_t device_mem = 0;   // device budget in bytes (0: sized from the device)
  std::uint64_t chunk_elems = 0;  // --chunk, elements per tile (0: the planner's choice)
  int threads = 0;                // CPU threads (0: hardware concurrency)
  int streams = 0;                // CUDA streams (0: engine default)
  std::string kernel = "auto";    // CUDA kernel name
  // Called from the engine's thread after each tile: (bytes done, bytes total).
  std::function<void(std::uint64_t, std::uint64_t)> progress;
  // Polled between tiles; when it becomes true the engine stops and throws
  // gt::Error(cancelled).
  const std::atomic<bool>* cancel = nullptr;
  // In place: what the engine writes through (the crash-safety journal, see
  // journal.hpp). nullptr: straight to the matrix, then one flush.
  InplaceWriter* writer = nullptr;
};

// The CPU engine, out of place. Fills report stages "read", "transpose", "write".
RunReport run_cpu(Source& src, Sink& dst, const RunOptions& opts);
// The CPU engine, in place on a square matrix. In-place engines (this one and
// run_cuda_inplace) flush the matrix before they return: its data is durable.
RunReport run_cpu_inplace(InplaceMatrix& m, const RunOptions& opts);

}  // namespace gt
