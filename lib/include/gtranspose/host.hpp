// The host-memory API: transpose a matrix a program already holds in RAM
// (pinned or not), through the GPU when there is one, else on the CPU.
//
//   std::vector<float> a(rows * cols), b(rows * cols);
//   gt::RunReport r = gt::transpose(a.data(), b.data(), rows, cols, sizeof(float));
//   gt::transpose_inplace(a.data(), n, sizeof(float));   // square n x n
//   gt::transpose_inplace(a.data(), 2 * n, n, sizeof(float));  // 2n x n becomes n x 2n
//
// Memory registered with cudaHostRegister or allocated by cudaMallocHost goes
// to and from the GPU by DMA directly; pageable memory is staged through the
// engine's pinned buffers by several threads, so it does not fall to the
// pageable copy rate. On the CPU engine the arrays are transposed where they
// lie, with no buffers (in place: each pair of tiles swapped in the array).
// Throws gt::Error like every other entry point.
//
// The free functions make an engine for each call, so each call pins its
// staging anew. A program that transposes many times keeps a Transposer,
// whose engine keeps its pinned staging from one call to the next:
//
//   gt::Transposer t;                       // cuda where a GPU exists, else cpu
//   for (...) t.transpose(a, b, rows, cols, 4);
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "gtranspose/engine.hpp"
#include "gtranspose/job.hpp"
#include "gtranspose/report.hpp"

namespace gt {

struct HostOptions {
  EngineChoice engine = EngineChoice::automatic;  // the free functions' engine (a Transposer has its own)
  RunOptions run;           // budgets, streams, kernel, threads, progress, cancel
  std::uint64_t ld_in = 0;  // leading dimension of the input in elements (0: cols)
  std::uint64_t ld_out = 0; // leading dimension of the output in elements (0: rows)
};

// out (cols x rows) = transpose of in (rows x cols). in and out must not overlap.
RunReport transpose(const void* in, void* out, std::uint64_t rows, std::uint64_t cols, std::size_t elem_size,
                    const HostOptions& opts = {});
// data (n x n, leading dimension opts.ld_in or n) becomes its transpose.
RunReport transpose_inplace(void* data, std::uint64_t n, std::size_t elem_size, const HostOptions& opts = {});
// data (rows x cols, no gaps between rows) becomes its cols x rows transpose,
// in the same memory. One side a multiple of the other (rows = k*cols or
// cols = k*rows): k square blocks through the engine, then (or first) a
// permutation of rows; any other shape by the gcd decomposition in memory
// (inplace/general.cpp: threads and scratch within host_mem).
RunReport transpose_inplace(void* data, std::uint64_t rows, std::uint64_t cols, std::size_t elem_size,
                            const HostOptions& opts = {});

// Faults in the pages of [data, data + bytes) for writing, on several
// threads (plan_prefault_threads: the machine's cores for a large range),
// leaving their contents as they are. A new array's first touch costs the
// kernel's page faults and the zeroing of its pages: done here at once on
// every core, before a transpose writes it, they no longer stall the run's
// writer threads one page at a time. Returns the threads used. Throws
// gt::Error(usage) for a null data with bytes > 0, gt::Error(io) when the
// memory cannot be made present (not mapped, or out of memory).
int prefault_host(void* data, std::uint64_t bytes);

// One engine, reused call after call (plan once per call, execute many).
// Not safe to call from several threads at once.
class Transposer {
 public:
  // Throws gt::Error(no_device) for EngineChoice::cuda without a usable GPU.
  explicit Transposer(EngineChoice engine = EngineChoice::automatic);
  ~Transposer();
  Transposer(Transposer&&) noexcept;
  Transposer& operator=(Transposer&&) noexcept;

  // As the free functions; opts.engine is not used.
  RunReport transpose(const void* in, void* out, std::uint64_t rows, std::uint64_t cols, std::size_t elem_size,
                      const HostOptions& opts = {});
  RunReport transpose_inplace(void* data, std::uint64_t n, std::size_t elem_size, const HostOptions& opts = {});
  RunReport transpose_inplace(void* data, std::uint64_t rows, std::uint64_t cols, std::size_t elem_size,
                              const HostOptions& opts = {});

  EngineKind kind() const;
  // Frees the pinned staging kept since the last call (the next call pins again).
  void release();

 private:
  std::unique_ptr<Engine> engine_;
  std::string note_;  // why automatic fell back to the CPU
};

}  // namespace gt
