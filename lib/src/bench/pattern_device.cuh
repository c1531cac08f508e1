// The position pattern (gtranspose/pattern.hpp) on the device: fill a buffer
// with pattern matrices and check one on the device, copying back three
// numbers, never the matrix. One implementation for the bench, which checks
// every timed candidate, and the device tests, which check every kernel;
// built as gt_bench_device, which needs the kernels' headers and gt_core only.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace gt::bench {

// How a verification compares bytes. Byte movers must be bit-exact. The
// vendor peers compute alpha * x in floating point, and the GPU returns a
// canonical NaN for any NaN input, so their NaN payloads may change: those
// elements are counted apart ("NaN-only") rather than as wrong positions.
enum class FloatLanes : std::uint8_t { none, f16, bf16, f32, f64 };

struct VerifySpec {
  std::uint64_t rows = 0, cols = 0;  // the INPUT's shape
  std::size_t elem_size = 0;
  std::uint64_t seed = 0;
  bool transposed = true;            // false: out(r, c) must equal pattern(r, c)
  FloatLanes lanes = FloatLanes::none;
  std::uint64_t matrices = 1;        // consecutive outputs to check
  std::uint64_t ld = 0;              // the OUTPUT's leading dimension in elements; 0: packed
  unsigned char pad = 0;             // what every byte past the output's columns must hold
};

struct VerifyResult {
  std::uint64_t mismatches = 0;  // elements wrong at their position (or in the padding)
  std::uint64_t nan_only = 0;    // differ only in NaN payloads (see FloatLanes)
  std::uint64_t first_row = 0, first_col = 0;  // output coordinates of the first mismatch (col >= columns: padding)
  std::uint64_t first_matrix = 0;
};

// Writes `matrices` consecutive rows x cols pattern matrices (seed) at dst,
// asynchronously on stream. Each row is `ld` elements (0: cols, packed);
// the elements past `cols` get `pad` in every byte. Element sizes 1, 2, 4,
// 8 and 16; throws gt::Error otherwise or when the launch fails.
void fill_pattern(void* dst, std::uint64_t rows, std::uint64_t cols, std::size_t elem_size, std::uint64_t seed,
                  std::uint64_t matrices, cudaStream_t stream, std::uint64_t ld = 0, unsigned char pad = 0);

// Checks `out` on the device, counting mismatches there; synchronises the
// stream to read back the three counters.
VerifyResult verify_pattern(const void* out, const VerifySpec& spec, cudaStream_t stream);

}  // namespace gt::bench
