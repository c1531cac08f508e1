// Benchmarks: in-memory timings of transposers beside a copy of the same size
// measured in the same run. GB/s counts bytes read plus bytes written.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "gtranspose/types.hpp"

namespace gt {

struct BenchOptions {
  Shape shape{16384, 16384};
  // CUDA: false (no shape given) measures two matrices of about 1 GiB per
  // element size, an aligned one (16384 rows, rows of 16 KiB..64 KiB) and an
  // odd one (16383 rows, one column more): real data comes in every shape.
  bool shape_given = true;
  DType dtype = DType::f32;
  std::string kernel = "all";  // CUDA: a registry name, "all", or "auto"
  int reps = 50;               // timed repetitions (after warm-up)
  int warmup = 5;
  int threads = 0;             // CPU bench threads (0: hardware concurrency)
  std::uint64_t seed = 12345;
  bool peers = true;           // CUDA: include cuBLAS / cuBLASLt rows
  // CUDA sweeps (--sweep): square sizes 2^lo..2^hi per side, and block shapes.
  bool sweep = false;
  int sweep_lo = 8, sweep_hi = 15;
  // CUDA random-shape sweep: this many shapes, each side uniform in
  // 1..random_max (from `seed`); the table shows min, median and max of
  // each kernel's and peer's % of copy over them, the JSON every shape.
  int random_shapes = 0;
  std::uint64_t random_max = 20000;
  // --bench-host: the streaming engine host memory to host memory.
  std::uint64_t device_mem = 0;  // the engine's device budget (0: its default)
  std::uint64_t host_mem = 0;    // its staging budget (0: its default)
  int streams = 0;               // its lanes (0: its default)
  std::uint64_t tile_elems = 0;  // its cap on elements per tile (0: the plan's choice)
  // Which runs: any of "pinned", "pageable", "inplace-pinned", "inplace-pageable".
  std::vector<std::string> host_modes{"pinned", "pageable"};
};

// What became of a row: measured and verified; not run by design (a kernel
// that refuses the shape, a matrix too large for a sweep's device); or
// failed (wrong result, a CUDA error, or not run because an earlier row
// broke the context).
enum class RowStatus { ok, skipped, failed };
const char* row_status_name(RowStatus s);  // "ok", "skipped", "failed"

struct BenchRow {
  std::string name;       // kernel or peer ("copy", "padded", "cublasSgeam", "memcpy", "cpu-blocked")
  std::string dtype;      // "f32" ...
  Shape shape;            // input shape
  std::string config;     // e.g. block shape "32x8" in sweeps; "" otherwise
  double median_ms = 0, min_ms = 0, max_ms = 0;
  double gbps = 0;        // (read + write bytes) / median time
  double pct_of_copy = 0; // gbps / reference copy's gbps * 100
  bool verified = false;
  RowStatus status = RowStatus::failed;
  std::string note;       // why a row was skipped or failed verification
};

struct BenchResult {
  std::string device;     // "NVIDIA H100 80GB HBM3" or "CPU, 16 threads"
  std::string reference;  // the name of the row that pct_of_copy divides by
  std::uint64_t seed = 0;
  std::vector<BenchRow> rows;
  // The random-shape sweep's rows, one per kernel and shape (the table shows
  // their summary in `rows`; bench_json writes both).
  std::vector<BenchRow> shape_rows;
};

// The CPU transposer beside a multithreaded memcpy. Throws gt::Error(usage)
// for what it cannot time: a CUDA kernel named in opts.kernel, a sweep.
BenchResult run_cpu_bench(const BenchOptions& opts);
// Throws gt::Error(no_device) without a GPU, gt::Error(usage) without CUDA support.
BenchResult run_cuda_bench(const BenchOptions& opts);
// The streaming engine from host memory to host memory beside the link's
// pinned H2D / D2H rates measured in the same run (opts.shape, dtype, reps,
// warmup, seed, device_mem, host_mem, streams, host_modes). Throws
// gt::Error(no_device) without a GPU.
BenchResult run_host_bench(const BenchOptions& opts);

std::string format_bench(const BenchResult& r);  // a fixed-width table
std::string bench_json(const BenchResult& r);

}  // namespace gt
