// Seed 002's serial kernels: one GPU thread for the whole matrix, and one
// thread per input row. They show what parallelism buys; neither is meant to
// be fast.
#include "detail/common.cuh"
#include "detail/families.hpp"

namespace gt::kernels::detail {
namespace {

// One thread walks every element: about a microsecond of latency each, so
// the size is capped to keep a call under a second or so.
constexpr std::uint64_t kSingleThreadMaxElems = 1ull << 20;

template <class T>
__global__ void single_thread_kernel(const T* __restrict__ in, T* __restrict__ out, Dims d) {
  for (std::uint64_t r = 0; r < d.rows; ++r)
    for (std::uint64_t c = 0; c < d.cols; ++c) out[c * d.ld_out + r] = in[r * d.ld_in + c];
}

// Thread r moves input row r; the lanes of a warp hold consecutive rows, so
// reads are strided and writes (out[c][r], consecutive r) are coalesced.
template <class T>
__global__ void row_per_thread_kernel(const T* __restrict__ in, T* __restrict__ out, Dims d) {
  for (std::uint64_t r = std::uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; r < d.rows;
       r += std::uint64_t(gridDim.x) * blockDim.x) {
    const T* src = in + r * d.ld_in;
    for (std::uint64_t c = 0; c < d.cols; ++c) out[c * d.ld_out + r] = src[c];
  }
}

bool single_thread_supports(const Problem& p, std::string* why) {
  if (!check_problem("single-thread", p, Limits{Kind::transpose, false, false, 1}, why)) return false;
  if (p.rows * p.cols > kSingleThreadMaxElems || (p.cols && p.rows > kSingleThreadMaxElems / p.cols)) {
    if (why)
      *why = "single-thread is limited to " + std::to_string(kSingleThreadMaxElems) +
             " elements (one GPU thread moves every element), not " + std::to_string(p.rows) + "x" +
             std::to_string(p.cols);
    return false;
  }
  return true;
}

bool row_per_thread_supports(const Problem& p, std::string* why) {
  if (!check_problem("row-per-thread", p, Limits{Kind::transpose, true, false, 1024}, why)) return false;
  if (p.block_y > 1) {
    if (why) *why = "row-per-thread uses one-dimensional blocks: block_y must be 0 or 1";
    return false;
  }
  return true;
}

void launch_single_thread(const void* in, void* out, const Problem& p, cudaStream_t stream) {
  require(single_thread_info(), in, out, p);
  const Dims d = resolve(p, Kind::transpose);
  if (!d.rows || !d.cols) return;
  with_elem_size(p.elem_size, [&](auto sz) {
    using T = carrier_t<decltype(sz)::value>;
    single_thread_kernel<T><<<1, 1, 0, stream>>>(static_cast<const T*>(in), static_cast<T*>(out), d);
  });
  GT_CUDA_LAUNCHED("single-thread");
}

void launch_row_per_thread(const void* in, void* out, const Problem& p, cudaStream_t stream) {
  require(row_per_thread_info(), in, out, p);
  const Dims d = resolve(p, Kind::transpose);
  if (!d.rows || !d.cols) return;
  const unsigned bx = p.block_x ? p.block_x : 256;
  with_elem_size(p.elem_size, [&](auto sz) {
    using T = carrier_t<decltype(sz)::value>;
    row_per_thread_kernel<T><<<grid_1d(ceil_div(d.rows, bx)), bx, 0, stream>>>(static_cast<const T*>(in),
                                                                               static_cast<T*>(out), d);
  });
  GT_CUDA_LAUNCHED("row-per-thread");
}

}  // namespace

KernelInfo single_thread_info() {
  return {"single-thread", "one GPU thread moves every element (at most 1M elements)", Kind::transpose,
          single_thread_supports, launch_single_thread, false};
}

KernelInfo row_per_thread_info() {
  return {"row-per-thread", "one thread per input row (256-thread blocks), coalesced writes", Kind::transpose,
          row_per_thread_supports, launch_row_per_thread, true};
}

}  // namespace gt::kernels::detail
