// Seed 002's tiled kernel without shared memory: 32x8 threads walk a 32x32
// tile, each thread 4 rows, reading coalesced and writing strided straight
// to global memory. The step between `naive-row` and `smem`.
#include "detail/common.cuh"
#include "detail/families.hpp"

namespace gt::kernels::detail {
namespace {

// Tile = bx x bx elements; thread (x, y) moves rows y, y+by, ... of column x.
template <class T>
__global__ void tiled_kernel(const T* __restrict__ in, T* __restrict__ out, Dims d, std::uint64_t ntr,
                             std::uint64_t ntc) {
  const unsigned side = blockDim.x;
  for (std::uint64_t b = blockIdx.x; b < ntr * ntc; b += gridDim.x) {
    const TileIdx t = linear_tile(b, ntc);
    const std::uint64_t c = t.c * side + threadIdx.x;
    if (c >= d.cols) continue;
    for (unsigned j = threadIdx.y; j < side; j += blockDim.y) {
      const std::uint64_t r = t.r * side + j;
      if (r < d.rows) out[c * d.ld_out + r] = in[r * d.ld_in + c];
    }
  }
}

bool tiled_supports(const Problem& p, std::string* why) {
  return check_problem("tiled", p, Limits{Kind::transpose, true, true, 1024}, why);
}

void launch_tiled(const void* in, void* out, const Problem& p, cudaStream_t stream) {
  require(tiled_info(), in, out, p);
  const Dims d = resolve(p, Kind::transpose);
  if (!d.rows || !d.cols) return;
  const dim3 block = block_or(p, 32, 8);
  const std::uint64_t ntr = ceil_div(d.rows, block.x), ntc = ceil_div(d.cols, block.x);
  with_elem_size(p.elem_size, [&](auto sz) {
    using T = carrier_t<decltype(sz)::value>;
    tiled_kernel<T><<<grid_1d(ntr * ntc), block, 0, stream>>>(static_cast<const T*>(in), static_cast<T*>(out), d, ntr,
                                                              ntc);
  });
  GT_CUDA_LAUNCHED("tiled");
}

}  // namespace

KernelInfo tiled_info() {
  return {"tiled", "32x32 tiles, 32x8 threads, global memory only: coalesced reads, strided writes", Kind::transpose,
          tiled_supports, launch_tiled, true};
}

}  // namespace gt::kernels::detail
