// One thread per element (or per 4 elements), straight from global memory to
// global memory: the seeds' naive transposes. Lanes of a warp walk along input
// columns (`-row`: coalesced reads, strided writes) or along input rows
// (`-col`: strided reads that the L1 cache partly absorbs, coalesced writes).
#include "detail/common.cuh"
#include "detail/families.hpp"

namespace gt::kernels::detail {
namespace {

// LANES_ON_COLS: threadIdx.x walks input columns. U: elements per thread,
// spaced blockDim.x apart along the lane direction (seed 004's Unroll4).
// Tile = (U*bx along the lane direction) x (by across it).
template <class T, bool LANES_ON_COLS, unsigned U>
__global__ void naive_kernel(const T* __restrict__ in, T* __restrict__ out, Dims d, std::uint64_t ntr,
                             std::uint64_t ntc) {
  const unsigned bx = blockDim.x, by = blockDim.y;
  for (std::uint64_t b = blockIdx.x; b < ntr * ntc; b += gridDim.x) {
    const TileIdx t = linear_tile(b, ntc);
    if (LANES_ON_COLS) {
      const std::uint64_t r = t.r * by + threadIdx.y;
      if (r >= d.rows) continue;
#pragma unroll
      for (unsigned j = 0; j < U; ++j) {
        const std::uint64_t c = t.c * (U * bx) + threadIdx.x + j * bx;
        if (c < d.cols) out[c * d.ld_out + r] = in[r * d.ld_in + c];
      }
    } else {
      const std::uint64_t c = t.c * by + threadIdx.y;
      if (c >= d.cols) continue;
#pragma unroll
      for (unsigned j = 0; j < U; ++j) {
        const std::uint64_t r = t.r * (U * bx) + threadIdx.x + j * bx;
        if (r < d.rows) out[c * d.ld_out + r] = in[r * d.ld_in + c];
      }
    }
  }
}

const Limits kLimits{Kind::transpose, true, false, 1024};

template <bool LANES_ON_COLS, unsigned U>
struct Naive {
  static const char* name() {
    return U == 1 ? (LANES_ON_COLS ? "naive-row" : "naive-col") : (LANES_ON_COLS ? "unroll4-row" : "unroll4-col");
  }
  static KernelInfo info() {
    if (U == 1 && LANES_ON_COLS) return naive_row_info();
    if (U == 1) return naive_col_info();
    return LANES_ON_COLS ? unroll4_row_info() : unroll4_col_info();
  }
  static bool supports(const Problem& p, std::string* why) { return check_problem(name(), p, kLimits, why); }
  static void launch(const void* in, void* out, const Problem& p, cudaStream_t stream) {
    require(info(), in, out, p);
    const Dims d = resolve(p, Kind::transpose);
    if (!d.rows || !d.cols) return;
    // Seeds' shapes: naive kernels were measured at 16x16 (ANCHORS.md), the
    // unrolled ones at 32x8 like the copy kernels.
    const dim3 block = U == 1 ? block_or(p, 16, 16) : block_or(p, 32, 8);
    const std::uint64_t n_lane = ceil_div(LANES_ON_COLS ? d.cols : d.rows, U * block.x);
    const std::uint64_t n_cross = ceil_div(LANES_ON_COLS ? d.rows : d.cols, block.y);
    const std::uint64_t ntr = LANES_ON_COLS ? n_cross : n_lane, ntc = LANES_ON_COLS ? n_lane : n_cross;
    with_elem_size(p.elem_size, [&](auto sz) {
      using T = carrier_t<decltype(sz)::value>;
      naive_kernel<T, LANES_ON_COLS, U><<<grid_1d(ntr * ntc), block, 0, stream>>>(
          static_cast<const T*>(in), static_cast<T*>(out), d, ntr, ntc);
    });
    GT_CUDA_LAUNCHED(name());
  }
};

}  // namespace

KernelInfo naive_row_info() {
  using K = Naive<true, 1>;
  return {"naive-row", "one thread per element, coalesced reads, strided writes (16x16 threads)", Kind::transpose,
          K::supports, K::launch, true};
}
KernelInfo naive_col_info() {
  using K = Naive<false, 1>;
  return {"naive-col", "one thread per element, strided reads, coalesced writes (16x16 threads)", Kind::transpose,
          K::supports, K::launch, true};
}
KernelInfo unroll4_row_info() {
  using K = Naive<true, 4>;
  return {"unroll4-row", "4 elements per thread along rows, coalesced reads, strided writes (32x8 threads)",
          Kind::transpose, K::supports, K::launch, true};
}
KernelInfo unroll4_col_info() {
  using K = Naive<false, 4>;
  return {"unroll4-col", "4 elements per thread down columns, strided reads, coalesced writes (32x8 threads)",
          Kind::transpose, K::supports, K::launch, true};
}

}  // namespace gt::kernels::detail
