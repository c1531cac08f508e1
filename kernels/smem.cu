// The seeds' shared-memory family, one element per access: `smem` (tile
// without padding: bank conflicts on the column reads), `unrolled` (32x33
// padded tile with the row loops unrolled at compile time), `diagonal`
// (padded tile, diagonal block order), and `smem-unroll-pad-dyn` (seed 004:
// dynamic shared memory, padding, two tiles per block). The tuned padded
// kernel lives in padded.cu.
#include "detail/common.cuh"
#include "detail/element_tile.cuh"
#include "detail/families.hpp"

namespace gt::kernels::detail {
namespace {

const Limits kTileLimits{Kind::transpose, true, true, 1024};

bool smem_supports(const Problem& p, std::string* why) {
  return check_problem("smem", p, kTileLimits, why) &&
         check_tile_smem("smem", p.block_x ? p.block_x : 32, 0, p.elem_size, why);
}

void launch_smem(const void* in, void* out, const Problem& p, cudaStream_t stream) {
  require(smem_info(), in, out, p);
  launch_element_tile<Order::linear, 0, 0>("smem", in, out, resolve(p, Kind::transpose), p.elem_size,
                                           block_or(p, 32, 8), 0, stream);
}

bool unrolled_supports(const Problem& p, std::string* why) {
  return check_problem("unrolled", p, Limits{Kind::transpose, false, false, 1024}, why);
}

void launch_unrolled(const void* in, void* out, const Problem& p, cudaStream_t stream) {
  require(unrolled_info(), in, out, p);
  launch_element_tile<Order::linear, 32, 8>("unrolled", in, out, resolve(p, Kind::transpose), p.elem_size,
                                            dim3(32, 8), 1, stream);
}

bool diagonal_supports(const Problem& p, std::string* why) {
  return check_problem("diagonal", p, kTileLimits, why) &&
         check_tile_smem("diagonal", p.block_x ? p.block_x : 32, 1, p.elem_size, why);
}

void launch_diagonal(const void* in, void* out, const Problem& p, cudaStream_t stream) {
  require(diagonal_info(), in, out, p);
  launch_element_tile<Order::diagonal, 0, 0>("diagonal", in, out, resolve(p, Kind::transpose), p.elem_size,
                                             block_or(p, 32, 8), 1, stream);
}

// Seed 004's transposeSmemUnrollPadDyn, generalised to any block bx x by: a
// block moves a by x 2bx tile (two bx-wide tiles side by side), each thread
// two elements, through a dynamically sized by x (2bx + 1) shared array. The
// write side re-numbers the threads (irow, icol) so that consecutive threads
// write consecutive output elements; the odd pitch keeps those column reads
// of the shared array free of bank conflicts.
template <class T>
__global__ void smem_unroll_pad_dyn_kernel(const T* __restrict__ in, T* __restrict__ out, Dims d,
                                           std::uint64_t ntr, std::uint64_t ntc) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* tile = reinterpret_cast<T*>(smem_raw);
  const unsigned bx = blockDim.x, by = blockDim.y, pitch = 2 * bx + 1;
  const unsigned bidx = threadIdx.y * bx + threadIdx.x;
  const unsigned irow = bidx / by, icol = bidx % by;
  for (std::uint64_t b = blockIdx.x; b < ntr * ntc; b += gridDim.x) {
    const TileIdx t = linear_tile(b, ntc);
    const std::uint64_t r0 = t.r * by, c0 = t.c * 2 * bx;
    const std::uint64_t r = r0 + threadIdx.y, c = c0 + threadIdx.x;
    if (r < d.rows) {
      const T* src = in + r * d.ld_in;
      if (c < d.cols) tile[threadIdx.y * pitch + threadIdx.x] = src[c];
      if (c + bx < d.cols) tile[threadIdx.y * pitch + threadIdx.x + bx] = src[c + bx];
    }
    __syncthreads();
    const std::uint64_t orow = c0 + irow, ocol = r0 + icol;
    if (ocol < d.rows) {
      if (orow < d.cols) out[orow * d.ld_out + ocol] = tile[icol * pitch + irow];
      if (orow + bx < d.cols) out[(orow + bx) * d.ld_out + ocol] = tile[icol * pitch + irow + bx];
    }
    __syncthreads();
  }
}

bool dyn_supports(const Problem& p, std::string* why) {
  if (!check_problem("smem-unroll-pad-dyn", p, Limits{Kind::transpose, true, false, 1024}, why)) return false;
  const std::size_t bx = p.block_x ? p.block_x : 32, by = p.block_x ? (p.block_y ? p.block_y : 1) : 16;
  const std::size_t bytes = by * (2 * bx + 1) * p.elem_size;
  if (bytes > kDefaultSmem) {
    if (why)
      *why = "smem-unroll-pad-dyn: block " + std::to_string(bx) + "x" + std::to_string(by) + " needs " +
             std::to_string(bytes) + " bytes of shared memory; at most " + std::to_string(kDefaultSmem);
    return false;
  }
  return true;
}

void launch_dyn(const void* in, void* out, const Problem& p, cudaStream_t stream) {
  require(smem_unroll_pad_dyn_info(), in, out, p);
  const Dims d = resolve(p, Kind::transpose);
  if (!d.rows || !d.cols) return;
  const dim3 block = block_or(p, 32, 16);
  const std::uint64_t ntr = ceil_div(d.rows, block.y), ntc = ceil_div(d.cols, 2 * block.x);
  with_elem_size(p.elem_size, [&](auto sz) {
    constexpr std::size_t S = decltype(sz)::value;
    using T = carrier_t<S>;
    const std::size_t smem = std::size_t(block.y) * (2 * block.x + 1) * S;
    smem_unroll_pad_dyn_kernel<T><<<grid_1d(ntr * ntc), block, smem, stream>>>(static_cast<const T*>(in),
                                                                               static_cast<T*>(out), d, ntr, ntc);
  });
  GT_CUDA_LAUNCHED("smem-unroll-pad-dyn");
}

}  // namespace

KernelInfo smem_info() {
  return {"smem", "32x32 shared-memory tile without padding (bank conflicts), 32x8 threads", Kind::transpose,
          smem_supports, launch_smem, true};
}

KernelInfo unrolled_info() {
  return {"unrolled", "32x33 padded shared-memory tile, row loops unrolled at compile time, 32x8 threads",
          Kind::transpose, unrolled_supports, launch_unrolled, false};
}

KernelInfo diagonal_info() {
  return {"diagonal", "32x33 padded shared-memory tile taken in diagonal block order, 32x8 threads",
          Kind::transpose, diagonal_supports, launch_diagonal, true};
}

KernelInfo smem_unroll_pad_dyn_info() {
  return {"smem-unroll-pad-dyn", "dynamic padded shared memory, two 32-wide tiles per block, 32x16 threads",
          Kind::transpose, dyn_supports, launch_dyn, true};
}

}  // namespace gt::kernels::detail
