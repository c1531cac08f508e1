// The element tile for rows that are not 16-byte aligned (an odd side, an odd
// leading dimension): TR x TC elements per block, every access one element
// wide, as cuBLAS's geam does, but with the tile's shape known at compile
// time, so a thread issues all its TR*TC/THREADS loads back to back (no
// index division, no bound checks) before its first shared store.
//
// Why: the general element path (edge_load/edge_store, ~32 KiB tiles whose
// width is known only at run time) ran 62-65% of a copy at 4 bytes and
// 80-84% at 8 where cublasSgeam/Dgeam ran 74%/89% (docs/PERF.md, runs 45-49);
// Nsight showed it latency-bound (too few reads in flight per SM, index
// maths between them). The last tile row and column follow last_origin's
// rule (detail/common.cuh): a full tile moved back to overlap the one
// before it, or a partial tile on that general path.
//
// Layout: a warp reads 32 consecutive elements of one input row (a unit);
// units are spread over the warps, each thread holding TR*TC/THREADS
// elements. The shared tile is TR rows of PITCH elements, PITCH chosen so
// that a warp reading 32 consecutive rows of one column hits 32 different
// banks: a row pitch of an odd number of 4-byte words for 1-, 2- and 4-byte
// elements (8- and 16-byte elements take 2 and 4 banks each and are served
// per half and quarter warp, for which an odd pitch in elements suffices).
#pragma once
#include <cstdint>

#include "common.cuh"
#include "super.cuh"

namespace gt::kernels::detail {

// MINB_: blocks an SM asked of the compiler (__launch_bounds__'s second
// argument), which caps the registers a thread holds; 0 asks nothing, and
// ptxas then keeps these kernels at 40-48 registers (six or five 256-thread
// blocks an SM), where an explicit 1 let it take 80-88 (run 227).
// DOWN_: consecutive blocks take the tiles down a tile column (tile rows
// fastest, as cuBLAS's geam grid does), else along a tile row.
template <std::size_t S, int TR_, int TC_, int THREADS_, int MINB_ = 0, bool DOWN_ = false>
struct ElemTileCfg {
  static constexpr std::size_t ES = S;
  static constexpr int TR = TR_, TC = TC_, THREADS = THREADS_, WARPS = THREADS_ / 32, MINB = MINB_;
  static constexpr bool DOWN = DOWN_;
  static_assert(TR % 32 == 0 && TC % 32 == 0, "units of 32 elements on both sides");
  // The row pitch in elements: in 4-byte words odd for S <= 4 (TC + 4 or
  // TC + 8 for bytes, TC + 2 or TC + 4 for halves, TC + 1 for words), in
  // elements odd for S = 8.
  static constexpr int PITCH = S == 1   ? TC + 4 * (((TC / 4) % 2) ? 2 : 1)
                               : S == 2 ? TC + 2 * (((TC / 2) % 2) ? 2 : 1)
                                        : TC + 1;
  static_assert(S <= 8, "16-byte elements keep every row 16-byte aligned: the tile kernel takes them");
  // Units of 32 elements a warp moves, the same count on the input side
  // (TR rows of TC / 32) and the output side (TC rows of TR / 32).
  static constexpr int UNITS = TR * TC / 32 / WARPS;
  static_assert(UNITS * WARPS * 32 == TR * TC, "units divide among the warps");
  static constexpr std::size_t SMEM = std::size_t(TR) * PITCH * S;
};

// One full TR x TC tile: rows r0.., columns c0.. of the input to rows c0..,
// columns r0.. of the output. `sm` holds at least TR * PITCH elements.
// Unit u = warp + i * WARPS is input row u / UC, columns (u % UC) * 32 +
// lane; as WARPS is a multiple of UC (and of UR), a thread's units share
// their columns and step WARPS / UC rows, so its global addresses are one
// base and a fixed stride on both sides: no 64-bit multiply per access
// (run 227: cublasDgeam's kernel of the same tile issued two thirds of this
// kernel's instructions when the store side still multiplied per element).
template <class Cfg>
__device__ __forceinline__ void element_full_tile(carrier_t<Cfg::ES>* sm, const carrier_t<Cfg::ES>* in,
                                                  carrier_t<Cfg::ES>* out, std::uint64_t ld_in, std::uint64_t ld_out,
                                                  std::uint64_t r0, std::uint64_t c0) {
  using T = carrier_t<Cfg::ES>;
  constexpr int UC = Cfg::TC / 32;  // units per input row
  constexpr int UR = Cfg::TR / 32;  // units per output row
  static_assert(Cfg::WARPS % UC == 0 && Cfg::WARPS % UR == 0, "a thread's units share their columns");
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  T x[Cfg::UNITS];
  {
    const int r = warp / UC, c = (warp % UC) * 32 + lane;
    const T* p = in + (r0 + r) * ld_in + c0 + c;
    const std::uint64_t step = std::uint64_t(Cfg::WARPS / UC) * ld_in;
#pragma unroll
    for (int i = 0; i < Cfg::UNITS; ++i) x[i] = p[i * step];
#pragma unroll
    for (int i = 0; i < Cfg::UNITS; ++i) sm[(r + i * (Cfg::WARPS / UC)) * Cfg::PITCH + c] = x[i];
  }
  __syncthreads();
  {
    // Output row (input column) c + i * WARPS / UR, its columns r.
    const int c = warp / UR, r = (warp % UR) * 32 + lane;
#pragma unroll
    for (int i = 0; i < Cfg::UNITS; ++i) x[i] = sm[r * Cfg::PITCH + c + i * (Cfg::WARPS / UR)];
    T* q = out + (c0 + c) * ld_out + r0 + r;
    const std::uint64_t step = std::uint64_t(Cfg::WARPS / UR) * ld_out;
#pragma unroll
    for (int i = 0; i < Cfg::UNITS; ++i) q[i * step] = x[i];
  }
}

// Full tiles on element_full_tile, partial ones (right and bottom edges) on
// the general element path, in one grid-stride loop over tiles. The last
// tile row and column start where `last` says (last_origin's rule, shared
// with the tile kernels). Run 220 (H100, % of a copy, same process, f32,
// partial last tiles on the general path -> the rule): 3665x1135 95.3 ->
// 97.4, 1693x1273 103.9 -> 111.0, 10058x296 92.3 -> 95.7; u8 and f16 +0.2 to
// +15 at four small shapes. Cfg::DOWN (every default since run 229) takes
// the tiles down each tile column, as cuBLAS's geam grid does: the blocks
// running at once write adjacent pieces of the same output rows, and a
// partial last tile row is spread over the grid rather than left to its end.
template <class Cfg>
__global__ void __launch_bounds__(Cfg::THREADS, Cfg::MINB)
    element_tile_kernel(const unsigned char* __restrict__ in_b, unsigned char* __restrict__ out_b, Dims d,
                        std::uint64_t ntr, std::uint64_t ntc, LastTile last) {
  using T = carrier_t<Cfg::ES>;
  // The edge path's pitch (vc | 1) never exceeds TC + 1 <= PITCH.
  __shared__ T sm[Cfg::TR * Cfg::PITCH];
  const T* in = reinterpret_cast<const T*>(in_b);
  T* out = reinterpret_cast<T*>(out_b);
  const std::uint64_t ntiles = ntr * ntc;
  for (std::uint64_t b = blockIdx.x; b < ntiles; b += gridDim.x) {
    const TileIdx t = Cfg::DOWN ? down_tile(b, ntr) : linear_tile(b, ntc);
    std::uint64_t r0, c0;
    tile_origin<Cfg>(t, ntr, ntc, last, r0, c0);
    if (r0 + Cfg::TR <= d.rows && c0 + Cfg::TC <= d.cols) {
      element_full_tile<Cfg>(sm, in, out, d.ld_in, d.ld_out, r0, c0);
    } else {
      const unsigned vr = unsigned(d.rows - r0 < Cfg::TR ? d.rows - r0 : Cfg::TR);
      const unsigned vc = unsigned(d.cols - c0 < Cfg::TC ? d.cols - c0 : Cfg::TC);
      edge_load<T, Cfg::THREADS, kEdgeBatch>(sm, in, d.ld_in, r0, c0, vr, vc);
      __syncthreads();
      edge_store<T, Cfg::THREADS>(sm, out, d.ld_out, r0, c0, vr, vc);
    }
    if (b + gridDim.x < ntiles) __syncthreads();
  }
}

// ORIGIN: last_origin's rule for the last tile row and column (0 the rule,
// 1 where they fall, 2 moved back whenever the side is at least a tile).
template <class Cfg>
void launch_element_tiles(const void* in, void* out, const Dims& d, cudaStream_t stream, int origin) {
  const std::uint64_t ntr = ceil_div(d.rows, Cfg::TR), ntc = ceil_div(d.cols, Cfg::TC);
  element_tile_kernel<Cfg><<<grid_1d(ntr * ntc), Cfg::THREADS, 0, stream>>>(
      static_cast<const unsigned char*>(in), static_cast<unsigned char*>(out), d, ntr, ntc,
      last_tile(d, Cfg::TR, Cfg::TC, 1, origin));
}

}  // namespace gt::kernels::detail
