// The bounds of any transpose (seed 004's copyRow / copyCol): `copy` reads and
// writes rows, coalesced both ways (the upper bound for an element-wise
// kernel); `copy-col` walks columns, strided both ways (the lower bound).
// Output is rows x cols with leading dimension ld_out: a copy, not a transpose.
#include "detail/common.cuh"
#include "detail/families.hpp"

namespace gt::kernels::detail {
namespace {

// Each thread moves this many elements, one per block_y rows (or columns),
// as the seeds' 32x8 copy does over 32x32 tiles.
constexpr unsigned kPerThread = 4;

// ROWS: lanes walk along a row (tile = kPerThread*by rows x bx cols).
// !ROWS: lanes walk down a column (tile = bx rows x kPerThread*by cols).
template <class T, bool ROWS>
__global__ void copy_kernel(const T* __restrict__ in, T* __restrict__ out, Dims d, std::uint64_t ntr,
                            std::uint64_t ntc) {
  const unsigned bx = blockDim.x, by = blockDim.y;
  for (std::uint64_t b = blockIdx.x; b < ntr * ntc; b += gridDim.x) {
    const TileIdx t = linear_tile(b, ntc);
    if (ROWS) {
      const std::uint64_t c = t.c * bx + threadIdx.x;
      if (c >= d.cols) continue;
      const std::uint64_t r0 = t.r * (kPerThread * by) + threadIdx.y;
#pragma unroll
      for (unsigned j = 0; j < kPerThread; ++j) {
        const std::uint64_t r = r0 + j * by;
        if (r < d.rows) out[r * d.ld_out + c] = in[r * d.ld_in + c];
      }
    } else {
      const std::uint64_t r = t.r * bx + threadIdx.x;
      if (r >= d.rows) continue;
      const std::uint64_t c0 = t.c * (kPerThread * by) + threadIdx.y;
#pragma unroll
      for (unsigned j = 0; j < kPerThread; ++j) {
        const std::uint64_t c = c0 + j * by;
        if (c < d.cols) out[r * d.ld_out + c] = in[r * d.ld_in + c];
      }
    }
  }
}

const Limits kLimits{Kind::copy, true, false, 1024};

bool copy_supports(const Problem& p, std::string* why) { return check_problem("copy", p, kLimits, why); }
bool copy_col_supports(const Problem& p, std::string* why) { return check_problem("copy-col", p, kLimits, why); }

template <bool ROWS>
void launch_copy(const void* in, void* out, const Problem& p, cudaStream_t stream) {
  require(ROWS ? copy_info() : copy_col_info(), in, out, p);
  const Dims d = resolve(p, Kind::copy);
  if (!d.rows || !d.cols) return;
  const dim3 block = block_or(p, 32, 8);
  const std::uint64_t along = ROWS ? d.cols : d.rows, across = ROWS ? d.rows : d.cols;
  const std::uint64_t n_along = ceil_div(along, block.x), n_across = ceil_div(across, kPerThread * block.y);
  const std::uint64_t ntr = ROWS ? n_across : n_along, ntc = ROWS ? n_along : n_across;
  with_elem_size(p.elem_size, [&](auto sz) {
    using T = carrier_t<decltype(sz)::value>;
    copy_kernel<T, ROWS><<<grid_1d(ntr * ntc), block, 0, stream>>>(static_cast<const T*>(in), static_cast<T*>(out), d,
                                                                   ntr, ntc);
  });
  GT_CUDA_LAUNCHED(ROWS ? "copy" : "copy-col");
}

}  // namespace

KernelInfo copy_info() {
  return {"copy", "row copy, coalesced reads and writes: the upper bound (32x8 threads, 4 rows each)", Kind::copy,
          copy_supports, launch_copy<true>, true};
}

KernelInfo copy_col_info() {
  return {"copy-col", "column copy, strided reads and writes: the lower bound (32x8 threads, 4 columns each)",
          Kind::copy, copy_col_supports, launch_copy<false>, true};
}

}  // namespace gt::kernels::detail
