// The CUDA kernel catalogue: one registry of named transposes.
//
// Layout conventions (all extents and offsets 64-bit):
//   out of place: `in` is rows x cols, row-major, leading dimension ld_in >= cols
//                 (elements); `out` is cols x rows, leading dimension ld_out >= rows.
//   in place:     `inout` is n x n (rows == cols == n), leading dimension ld_in >= n
//                 (ld_out ignored); `inplace-rect` also takes rows != cols with packed
//                 rows (ld_in 0 or cols), and leaves the cols x rows transpose.
//   copy kernels: `out` is rows x cols with leading dimension ld_out >= cols; they
//                 are the bandwidth bounds of a transpose, not transposes.
// Elements are opaque blobs of elem_size bytes: 1, 2, 4, 8 or 16. Pointers must
// be aligned to the element size (16-byte elements: 16 bytes). Kernels that can
// use 16-byte vector accesses do so when both pointers and both leading
// dimensions (in bytes) are multiples of 16, and fall back to element accesses
// otherwise; the result is the same.
// Launches are asynchronous on `stream`. A problem the kernel does not support
// throws gt::Error(usage) with supports()'s reason; launch errors throw
// gt::Error(cuda).
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gt::kernels {

enum class Kind { transpose, inplace, copy };
const char* kind_name(Kind k);

struct Problem {
  std::uint64_t rows = 0, cols = 0;
  std::size_t elem_size = 0;
  std::uint64_t ld_in = 0, ld_out = 0;  // 0 means "packed" (cols / rows)
  // Optional block shape for sweeps ({0,0} = the kernel's tuned default).
  unsigned block_x = 0, block_y = 0;
};

struct KernelInfo {
  const char* name;
  const char* description;  // one line
  Kind kind;
  // True when the kernel can run this problem; otherwise `why` (if given)
  // gets a one-line reason ("single-thread is limited to 1M elements").
  bool (*supports)(const Problem& p, std::string* why);
  // out is ignored (may be null) for Kind::inplace; `in` is then the matrix.
  void (*launch)(const void* in, void* out, const Problem& p, cudaStream_t stream);
  // True when the kernel honours Problem::block_x/block_y (the block-shape
  // sweep); kernels with a fixed shape reject a non-zero one in supports().
  bool block_shape = false;
};

const std::vector<KernelInfo>& registry();
// nullptr when no kernel has that name.
const KernelInfo* find(std::string_view name);
// The fastest out-of-place (or in-place) kernel for an element size, from
// the tuning table in registry.cu (with the run that chose it).
const KernelInfo& best(std::size_t elem_size, Kind kind = Kind::transpose);
// The same choice with the measurement behind it ("H100, 2026-11-23, ...").
struct Choice {
  const KernelInfo* kernel;
  const char* chosen_by;
};
Choice best_choice(std::size_t elem_size, Kind kind = Kind::transpose);
// The most device memory `inplace-rect` allocates beside a rows x cols
// matrix of elem_size-byte elements (scratch and tables; on the blocked
// route the shape's kept plan): what a caller's device budget must hold
// beside the matrix.
std::uint64_t inplace_rect_device_bytes(std::uint64_t rows, std::uint64_t cols, std::size_t elem_size);
// "copy, copy-col, naive-row, ..." for help texts.
std::string names(Kind kind);
std::string names();

}  // namespace gt::kernels
