// The seeds' shared-memory tile transpose, one element per access: a block of
// side x by threads loads a side x side tile row by row (coalesced), and
// after a barrier writes it column by column (coalesced in the output).
// `pad` extra elements per shared row move successive rows to different
// banks (pad 0 is the bank-conflicted `smem`, pad 1 the classic 32x33).
// Used by smem.cu (smem, unrolled, diagonal) and by padded.cu for its
// block-shape sweep.
#pragma once
#include "common.cuh"

namespace gt::kernels::detail {

enum class Order { linear, diagonal };

// Diagonal block ordering (the CUDA SDK transpose white paper): successive
// blocks take tiles along diagonals so that concurrently running blocks do
// not all hit the same DRAM partition. A bijection on the ntr x ntc tiles.
__device__ __forceinline__ TileIdx diagonal_tile(std::uint64_t b, std::uint64_t ntr, std::uint64_t ntc) {
  if (ntr == ntc) {
    const std::uint64_t bx = b % ntc, by = b / ntc;
    return {bx, (bx + by) % ntc};
  }
  const std::uint64_t r = b % ntr, q = b / ntr;
  return {r, (q + r) % ntc};
}

// SIDE/BY = 0: taken from blockDim at run time (sweeps); non-zero: compile-time
// constants, so the row loops unroll fully (the seeds' `unrolled`). BY must
// divide SIDE (check_problem's square_tile_block rule).
template <class T, Order O, unsigned SIDE, unsigned BY>
__global__ void element_tile_kernel(const T* __restrict__ in, T* __restrict__ out, Dims d, std::uint64_t ntr,
                                    std::uint64_t ntc, unsigned pad) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* tile = reinterpret_cast<T*>(smem_raw);
  const unsigned side = SIDE ? SIDE : blockDim.x, by = BY ? BY : blockDim.y;
  const unsigned pitch = side + pad;
  const unsigned tx = threadIdx.x, ty = threadIdx.y;
  for (std::uint64_t b = blockIdx.x; b < ntr * ntc; b += gridDim.x) {
    const TileIdx t = O == Order::diagonal ? diagonal_tile(b, ntr, ntc) : linear_tile(b, ntc);
    const std::uint64_t r0 = t.r * side, c0 = t.c * side;
    {
      const std::uint64_t c = c0 + tx;
      const T* src = in + r0 * d.ld_in + c;
#pragma unroll
      for (unsigned j0 = 0; j0 < side; j0 += by) {
        const unsigned j = j0 + ty;
        if (r0 + j < d.rows && c < d.cols) tile[j * pitch + tx] = src[j * d.ld_in];
      }
    }
    __syncthreads();
    {
      const std::uint64_t r = r0 + tx;
      T* dst = out + c0 * d.ld_out + r;
#pragma unroll
      for (unsigned j0 = 0; j0 < side; j0 += by) {
        const unsigned j = j0 + ty;
        if (c0 + j < d.cols && r < d.rows) dst[j * d.ld_out] = tile[tx * pitch + j];
      }
    }
    // The next tile reuses the shared buffer.
    __syncthreads();
  }
}

// Largest shared memory a kernel gets without opting in.
constexpr std::size_t kDefaultSmem = 48 * 1024;

inline bool check_tile_smem(const char* name, unsigned side, unsigned pad, std::size_t elem, std::string* why) {
  const std::size_t bytes = std::size_t(side) * (side + pad) * elem;
  if (bytes <= kDefaultSmem) return true;
  if (why)
    *why = std::string(name) + ": a " + std::to_string(side) + "x" + std::to_string(side) + " tile of " +
           std::to_string(elem) + "-byte elements needs " + std::to_string(bytes) +
           " bytes of shared memory; at most " + std::to_string(kDefaultSmem);
  return false;
}

// Launches element_tile_kernel over the whole matrix.
template <Order O, unsigned SIDE, unsigned BY>
void launch_element_tile(const char* name, const void* in, void* out, const Dims& d, std::size_t elem, dim3 block,
                         unsigned pad, cudaStream_t stream) {
  if (!d.rows || !d.cols) return;
  const std::uint64_t ntr = ceil_div(d.rows, block.x), ntc = ceil_div(d.cols, block.x);
  with_elem_size(elem, [&](auto sz) {
    constexpr std::size_t S = decltype(sz)::value;
    using T = carrier_t<S>;
    const std::size_t smem = std::size_t(block.x) * (block.x + pad) * S;
    element_tile_kernel<T, O, SIDE, BY><<<grid_1d(ntr * ntc), block, smem, stream>>>(
        static_cast<const T*>(in), static_cast<T*>(out), d, ntr, ntc, pad);
  });
  GT_CUDA_LAUNCHED(name);
}

}  // namespace gt::kernels::detail
