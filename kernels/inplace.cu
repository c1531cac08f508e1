// In-place transposes of a square n x n matrix (leading dimension ld >= n).
// `inplace-swap` (seed 003): thread (x, y) with x < y swaps a[y][x] and
// a[x][y]; half the threads idle and both accesses of a pair are strided on
// one side. `inplace-tiled`: one block per tile pair (I, J), I <= J, of the
// upper triangle: it reads tiles (I, J) and (J, I) into two padded shared
// buffers and, after a barrier, writes each transposed into the other's
// place; a diagonal tile (I, I) goes alone. (Seed 003's blog version
// transposes every tile in its own place, which is right only on the
// diagonal.) Full aligned tiles use the 16-byte super-element path of
// `padded`; full misaligned ones the skew tiles (4- and 8-byte elements) or
// the super tiles' misaligned path; the rest the element-wise path.
#include <string>
#include <tuple>
#include <type_traits>

#include "detail/common.cuh"
#include "detail/families.hpp"
#include "detail/skew_tile.cuh"
#include "detail/super.cuh"
#include "gtranspose/kernel_tuning.hpp"

namespace gt::kernels::detail {
namespace {

template <class T>
__global__ void inplace_swap_kernel(T* a, std::uint64_t n, std::uint64_t ld, std::uint64_t ntr, std::uint64_t ntc) {
  for (std::uint64_t b = blockIdx.x; b < ntr * ntc; b += gridDim.x) {
    const TileIdx t = linear_tile(b, ntc);
    const std::uint64_t x = t.c * blockDim.x + threadIdx.x, y = t.r * blockDim.y + threadIdx.y;
    if (x < y && y < n) {
      const T lower = a[y * ld + x];
      a[y * ld + x] = a[x * ld + y];
      a[x * ld + y] = lower;
    }
  }
}

bool inplace_swap_supports(const Problem& p, std::string* why) {
  return check_problem("inplace-swap", p, Limits{Kind::inplace, true, false, 1024}, why);
}

void launch_inplace_swap(const void* in, void*, const Problem& p, cudaStream_t stream) {
  require(inplace_swap_info(), in, nullptr, p);
  const Dims d = resolve(p, Kind::inplace);
  if (!d.rows) return;
  const dim3 block = block_or(p, 32, 8);
  const std::uint64_t ntr = ceil_div(d.rows, block.y), ntc = ceil_div(d.cols, block.x);
  with_elem_size(p.elem_size, [&](auto sz) {
    using T = carrier_t<decltype(sz)::value>;
    inplace_swap_kernel<T><<<grid_1d(ntr * ntc), block, 0, stream>>>(
        static_cast<T*>(const_cast<void*>(in)), d.rows, d.ld_in, ntr, ntc);
  });
  GT_CUDA_LAUNCHED("inplace-swap");
}

// Pair p of the upper triangle (row-major: row I holds pairs (I, I..nt-1))
// -> (I, J). Row I starts at pair I*(2nt - I + 1)/2; the square root gives
// the row to within one, the loops settle it exactly.
__device__ __forceinline__ void pair_coords(std::uint64_t p, std::uint64_t nt, std::uint64_t& I, std::uint64_t& J) {
  auto start = [nt](std::uint64_t k) { return k * (2 * nt - k + 1) / 2; };
  const double b = 2.0 * double(nt) + 1.0;
  const double x = (b - sqrt(b * b - 8.0 * double(p))) / 2.0;
  std::uint64_t i = x > 0 ? std::uint64_t(x) : 0;
  if (i >= nt) i = nt - 1;
  while (i > 0 && start(i) > p) --i;
  while (start(i + 1) <= p) ++i;
  I = i;
  J = i + (p - start(i));
}

// Step p of the pairs' order (inplace_tiled_kernel's GROUP, below) -> the
// pair (I, J); false for a place the order skips (below the diagonal or past
// the matrix: the whole block skips, and the last pair it ran already
// waited, a step followed it).
template <unsigned GROUP>
__device__ __forceinline__ bool pair_at(std::uint64_t p, std::uint64_t nt, std::uint64_t& I, std::uint64_t& J) {
  if constexpr (GROUP > 0) {
    constexpr std::uint64_t g2 = std::uint64_t(GROUP) * GROUP;
    const std::uint64_t blk = p / g2, k = p - blk * g2;
    std::uint64_t BI, BJ;
    pair_coords(blk, (nt + GROUP - 1) / GROUP, BI, BJ);
    I = BI * GROUP + k / GROUP;
    J = BJ * GROUP + k % GROUP;
    return J < nt && J >= I;
  } else {
    pair_coords(p, nt, I, J);
    return true;
  }
}

// A pair of tiles of side T, partial at the matrix's edge, element by
// element through the shared buffers eA and eB (tiles (I, J) at rI, rJ and
// (J, I)), BATCH loads in flight a thread (edge_load).
template <class E, int THREADS, int BATCH = 1>
__device__ __forceinline__ void edge_pair(E* m, E* eA, E* eB, std::uint64_t n, std::uint64_t ld, std::uint64_t rI,
                                          std::uint64_t rJ, unsigned T, bool diagonal) {
  const unsigned vi = unsigned(n - rI < T ? n - rI : T), vj = unsigned(n - rJ < T ? n - rJ : T);
  edge_load<E, THREADS, BATCH>(eA, m, ld, rI, rJ, vi, vj);
  if (!diagonal) edge_load<E, THREADS, BATCH>(eB, m, ld, rJ, rI, vj, vi);
  __syncthreads();
  edge_store<E, THREADS>(eA, m, ld, rI, rJ, vi, vj);
  if (!diagonal) edge_store<E, THREADS>(eB, m, ld, rJ, rI, vj, vi);
}

// Both pair kernels' loop: step p of the pairs' order (pair_at) -> the pair
// (I, J), I <= J; a pair of full tiles goes to full(pa, pb, diagonal) (tiles
// (I, J) and (J, I); full waits between its loads and its stores), a pair
// with a partial tile element by element through the shared buffers eA and
// eB (edge_pair), and a barrier before the next pair reuses them.
template <class Cfg, unsigned GROUP, class Full>
__device__ __forceinline__ void pair_loop(unsigned char* a, std::uint64_t n, std::uint64_t ld, std::uint64_t nt,
                                          std::uint64_t steps, void* eA, void* eB, Full&& full) {
  constexpr std::size_t S = Cfg::S;
  constexpr unsigned T = Cfg::TR;
  static_assert(Cfg::TR == Cfg::TC, "in-place tiles are square");
  using E = carrier_t<S>;
  for (std::uint64_t p = blockIdx.x; p < steps; p += gridDim.x) {
    std::uint64_t I, J;
    if (!pair_at<GROUP>(p, nt, I, J)) continue;
    const std::uint64_t rI = I * T, rJ = J * T;
    unsigned char* pa = a + (rI * ld + rJ) * S;  // tile (I, J)
    unsigned char* pb = a + (rJ * ld + rI) * S;  // tile (J, I)
    // J >= I, so J's extent bounds both tiles.
    if (rJ + T <= n) full(pa, pb, I == J);
    else
      edge_pair<E, Cfg::THREADS>(reinterpret_cast<E*>(a), static_cast<E*>(eA), static_cast<E*>(eB), n, ld, rI, rJ, T,
                                 I == J);
    if (p + gridDim.x < steps) __syncthreads();  // the next pair reuses the shared buffers
  }
}

// Rows 16-byte aligned (the launcher checks), or with MISALIGNED at any
// element-aligned offset (super.cuh: MisalignedRead, store16_any; the words a
// misaligned load reads beyond its tile are only read, never written back).
// Tiles are T x T elements (T = TR = TC); shared memory is two super buffers
// (dynamic: a 64x64-double pair needs more than the 48 KiB default).
// GROUP 0: pairs in pair_coords' order (row I of the triangle, then row
// I + 1). GROUP g > 0: the triangle cut into g x g blocks of pairs, run
// block by block (blocks in pair_coords' order over the block triangle), each
// block row by row; `steps` counts the blocks' g * g places, and a place
// below the diagonal or past the matrix is skipped. (A compile-time g: a
// run-time one cost the plain order's kernels up to 24 registers.)
template <class Cfg, bool MISALIGNED, unsigned GROUP>
__global__ void __launch_bounds__(Cfg::THREADS, Cfg::MINB)
    inplace_tiled_kernel(unsigned char* a, std::uint64_t n, std::uint64_t ld, std::uint64_t nt, std::uint64_t steps) {
  constexpr std::size_t S = Cfg::S;
  extern __shared__ uint4 smem_dyn[];
  auto smA = reinterpret_cast<uint4(*)[Cfg::PITCH]>(smem_dyn);
  auto smB = reinterpret_cast<uint4(*)[Cfg::PITCH]>(smem_dyn + Cfg::TSR * Cfg::PITCH);
  const std::uint64_t pitch = ld * S;
  const unsigned char* limit = a + ((n - 1) * ld + n) * S;  // one past the matrix's last byte
  const auto full = [&](unsigned char* pa, unsigned char* pb, bool diagonal) {
    if (diagonal) {
      TileRegs<Cfg> ra;
      load_tile<Cfg, MISALIGNED>(ra, pa, pitch, limit);
      stash_tile<Cfg, MISALIGNED>(ra, smA);
      __syncthreads();
      store_tile<Cfg, MISALIGNED>(smA, pa, pitch);
    } else {
      TileRegs<Cfg> ra, rb;
      load_tile<Cfg, MISALIGNED>(ra, pa, pitch, limit);
      load_tile<Cfg, MISALIGNED>(rb, pb, pitch, limit);
      stash_tile<Cfg, MISALIGNED>(ra, smA);
      stash_tile<Cfg, MISALIGNED>(rb, smB);
      __syncthreads();
      store_tile<Cfg, MISALIGNED>(smA, pb, pitch);
      store_tile<Cfg, MISALIGNED>(smB, pa, pitch);
    }
  };
  pair_loop<Cfg, GROUP>(a, n, ld, nt, steps, &smA[0][0], &smB[0][0], full);
}

// The same pairs on skew tiles (detail/skew_tile.cuh), for rows not 16-byte
// aligned: both tiles' reads are issued before either is written to shared
// memory; each tile's transpose is gathered down its shared columns and
// stored as aligned words, the partial first and last word of every output
// segment holding only the tile's own bytes. The words read beyond a tile
// (the aligned word holding its rows' first bytes, the word after their
// last) are only read, never written back.
template <class Cfg, unsigned GROUP>
__global__ void __launch_bounds__(Cfg::THREADS, Cfg::MINB)
    inplace_skew_kernel(unsigned char* a, std::uint64_t n, std::uint64_t ld, std::uint64_t nt, std::uint64_t steps) {
  constexpr std::size_t S = Cfg::S;
  extern __shared__ uint4 skew_pair_smem[];
  unsigned char* smA = reinterpret_cast<unsigned char*>(skew_pair_smem);
  unsigned char* smB = smA + Cfg::SMEM;
  const std::uint64_t pitch = ld * S;
  const unsigned char* limit = a + ((n - 1) * ld + n) * S;  // one past the matrix's last byte
  const auto full = [&](unsigned char* pa, unsigned char* pb, bool diagonal) {
    if (diagonal) {
      skew_load<Cfg>(smA, pa, pitch, limit);
      __syncthreads();
      skew_store<Cfg>(smA, pa, pitch);
    } else {
      SkewRegs<Cfg> ga, gb;
      skew_fetch<Cfg>(ga, pa, pitch, limit);
      skew_fetch<Cfg>(gb, pb, pitch, limit);
      skew_stash<Cfg>(ga, smA, pa, pitch, limit);
      skew_stash<Cfg>(gb, smB, pb, pitch, limit);
      __syncthreads();
      skew_store<Cfg>(smA, pb, pitch);
      skew_store<Cfg>(smB, pa, pitch);
    }
  };
  pair_loop<Cfg, GROUP>(a, n, ld, nt, steps, smA, smB, full);
}

// Squares whose rows are not 16-byte aligned: the same tile pairs, element
// by element, with batched loads (the tuned kernel keeps this path only for
// its edge pairs, at one load in flight, to hold its registers down).
constexpr std::size_t kElemTileBytes = 32 * 1024;  // per tile of a pair

template <std::size_t S>
__global__ void __launch_bounds__(256) inplace_elements_kernel(unsigned char* a, std::uint64_t n, std::uint64_t ld,
                                                               unsigned side, std::uint64_t nt, std::uint64_t npairs) {
  using E = carrier_t<S>;
  extern __shared__ uint4 smem_dyn[];
  E* eA = reinterpret_cast<E*>(smem_dyn);
  E* eB = reinterpret_cast<E*>(smem_dyn + kElemTileBytes / 16);
  E* m = reinterpret_cast<E*>(a);
  for (std::uint64_t p = blockIdx.x; p < npairs; p += gridDim.x) {
    std::uint64_t I, J;
    pair_coords(p, nt, I, J);
    edge_pair<E, 256, kEdgeBatch>(m, eA, eB, n, ld, I * side, J * side, side, I == J);
    if (p + gridDim.x < npairs) __syncthreads();
  }
}

template <std::size_t S>
void launch_inplace_elements(void* a, const Dims& d, cudaStream_t stream) {
  constexpr std::uint64_t cap = kElemTileBytes / S;
  unsigned side = 1;
  while (std::uint64_t(side + 1) * (side + 2) <= cap) ++side;  // side * (side + 1) <= cap
  const std::uint64_t nt = ceil_div(d.rows, side), npairs = nt * (nt + 1) / 2;
  auto kernel = inplace_elements_kernel<S>;
  GT_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(2 * kElemTileBytes)));
  kernel<<<grid_1d(npairs), 256, 2 * kElemTileBytes, stream>>>(static_cast<unsigned char*>(a), d.rows, d.ld_in, side,
                                                               nt, npairs);
}

template <class C, bool MISALIGNED, unsigned GROUP>
void launch_inplace_tiles(void* a, const Dims& d, cudaStream_t stream) {
  const std::uint64_t nt = ceil_div(d.rows, C::TR);
  if (GROUP > 0 && nt <= GROUP) {  // one block of pairs: the plain order runs the same pairs
    launch_inplace_tiles<C, MISALIGNED, 0>(a, d, stream);
    return;
  }
  std::uint64_t steps = nt * (nt + 1) / 2;  // pairs
  if constexpr (GROUP > 0) {
    const std::uint64_t nb = ceil_div(nt, GROUP);  // blocks of pairs a side
    steps = nb * (nb + 1) / 2 * GROUP * GROUP;
  }
  const std::size_t smem = 2 * C::SMEM;
  // Skew tilings have their own pair kernel; both take the same arguments.
  const auto kernel = [] {
    if constexpr (is_skew_v<C>) return inplace_skew_kernel<C, GROUP>;
    else return inplace_tiled_kernel<C, MISALIGNED, GROUP>;
  }();
  if (smem > kDefaultSmem)
    GT_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  kernel<<<grid_1d(steps), C::THREADS, smem, stream>>>(static_cast<unsigned char*>(a), d.rows, d.ld_in, nt, steps);
}

// Squares whose rows are 16-byte aligned take Cfg's tile pairs; those whose
// rows are not take MisCfg's on the misaligned tile path (its best tiling
// differs: run 61), or with MISALIGNED_PATH = false the element kernel (the
// "-no-misaligned" tuning variant). The pairs' order (inplace_tiled_kernel:
// 0, or blocks of g x g pairs): GROUP where rows are whole 64-byte sectors,
// PARTIAL_GROUP where they are not (misaligned rows among them).
template <class Cfg, bool MISALIGNED_PATH = true, class MisCfg = Cfg, unsigned GROUP = 0, unsigned PARTIAL_GROUP = GROUP>
void launch_inplace_cfg(const void* in, void*, const Problem& p, cudaStream_t stream) {
  require(inplace_tiled_info(), in, nullptr, p);
  const Dims d = resolve(p, Kind::inplace);
  if (!d.rows) return;
  if (p.elem_size != Cfg::S)
    throw Error(ErrorKind::usage, "inplace-tiled variant for " + std::to_string(Cfg::S) +
                                      "-byte elements called with " + std::to_string(p.elem_size) + "-byte elements");
  void* a = const_cast<void*>(in);
  constexpr bool mis = MISALIGNED_PATH && mis_tiles_v<MisCfg>();
  if (vec16_ok(a, a, d, Cfg::S)) {
    if (whole_sectors(d.ld_in, Cfg::S))
      launch_inplace_tiles<Cfg, false, GROUP>(a, d, stream);
    else
      launch_inplace_tiles<Cfg, false, PARTIAL_GROUP>(a, d, stream);
  } else if (mis && d.rows >= std::uint64_t(MisCfg::TR)) {
    launch_inplace_tiles<MisCfg, mis, PARTIAL_GROUP>(a, d, stream);
  } else {
    // A matrix smaller than one tile has no full tile for the vector path.
    launch_inplace_elements<Cfg::S>(a, d, stream);
  }
  GT_CUDA_LAUNCHED("inplace-tiled");
}

// Rows that are not whole 64-byte sectors (misaligned ones among them) run
// their pairs in blocks of 4x4. Runs 111-112, % of copy, plain order ->
// blocks of 4: f32 12345^2 75.1 -> 87.2, 16385^2 69.7 -> 76.8, 16388^2 79.2
// -> 83.0; c128 8193^2 82.2 -> 87.2; f64 11586^2 75.4 -> 81.1; f16 23176^2
// 75.2 -> 83.4; u8 32784^2 76.9 -> 85.4; misaligned f16 23169^2 and u8
// 32769^2 unchanged within noise (65, 41); blocks of 8 and 16 no better.
// Rows of whole sectors keep the plain order: blocks there measured 0.1-0.8
// points lower at every size.
constexpr unsigned kPartialSectorGroup = 4;

// Tunings: SuperCfg<S, TSR, TSC, THREADS, MINB, A_DOWN, B_ACROSS, STREAM>,
// square tiles (TSR*K == TSC*C). `Default` is what the registry runs.
// `Mis`: the pairs of rows not 16-byte aligned: skew tiles (SkewCfg<S, T,
// T*S, THREADS, MINB>, detail/skew_tile.cuh) for 4- and 8-byte elements,
// else `MisTile`, the super tiles' misaligned path (the "-mis-tiles"
// variant where Mis is skew). `SkewAlt`: other skew tilings, as variants.
template <std::size_t S>
struct InplaceTunings;
template <>
struct InplaceTunings<1> {
  // Skew tile pairs (detail/skew_tile.cuh), 128x128 bytes: run 168, 55.9% at
  // 32769^2 against Mis's 62.1 (the gather reads shared memory a byte at a time).
  using SkewAlt = std::tuple<SkewCfg<1, 128, 128, 256, 2>>;
  // Squares whose rows are not 16-byte aligned: the misaligned tile path on
  // 128x128-byte pairs (run 63: 32769^2 37.8% vs 30.5% on the element kernel
  // and 24.3% on the aligned default's 256x256; run 45: 30.6% vs 24.4%).
  static constexpr bool kMisalignedTile = true;
  // 256x256 bytes per tile (a pair: 130 KiB of shared memory, one block of
  // 512 threads per SM): run 6 (H100, 2026-11-22) 94.9% vs 89.3% for
  // 128x128 (A lanes along, B lanes down; run 3: 93.8% vs 92.2% with both
  // conflict-free) and 93.8% with 1024 threads.
  using C0 = SuperCfg<1, 64, 64, 512, 1, false, false, false>;
  using Default = C0;
  // Run 114 (pairs in blocks): two blocks an SM (122 registers, no spills)
  // against one (146): 32769^2 41.0 -> 62.2%, 12345^2 47.6 -> 68.4%.
  using MisTile = SuperCfg<1, 32, 32, 256, 2, false, false, false>;
  // Its partial output words spread over the lanes (super.cuh:
  // store16_spread). Run 250, % of a copy, same process, lane 0's pieces ->
  // spread: 32769^2 61.8 -> 67.9, 12345^2 68.0 -> 74.7. The same pairs
  // loaded one tile at a time (fewer registers) at 2, 3 and 4 blocks an SM:
  // 62.4, 48.7, 29.2 at 32769^2 (55.7 and 33.3 spread): not kept.
  using Mis = SpreadEnds<MisTile>;
  // Other tilings of the misaligned path, tried as "-mis-" variants (pairs
  // in blocks). Run 114: the one-block tiling above 41.0 / 47.6%, 128
  // threads at four blocks (spills) 26.8 / 32.3%, 64x64 bytes 45.2 / 45.6%.
  using MisAlt = std::tuple<SuperCfg<1, 32, 32, 256, 1, false, false, false>, SuperCfg<1, 32, 32, 128, 4, false, false, false>,
                            SuperCfg<1, 16, 16, 64, 8, false, false, false>>;
  using Alt = std::tuple<SuperCfg<1, 32, 32, 256, 1, false, false, false>, SuperCfg<1, 64, 64, 1024, 1, false, false, false>,
                         SuperCfg<1, 16, 16, 64, 1, false, false, false>>;
};
template <>
struct InplaceTunings<2> {
  // Skew tile pairs (detail/skew_tile.cuh), 64x64 halves: run 168, 58.7% at
  // 23169^2 against Mis's 70.2.
  using SkewAlt = std::tuple<SkewCfg<2, 64, 128, 256, 2>>;
  // Rows not 16-byte aligned: the misaligned tile path (run 45: 23169^2
  // 53.8% vs 49.2% on the element kernel), on the tiling `Mis` below.
  static constexpr bool kMisalignedTile = true;
  // 128x128 halves per tile, A along, B down: run 3, 94.9% vs 91.5%.
  using C0 = SuperCfg<2, 64, 32, 256, 1, false, false, false>;
  using Default = C0;
  // Run 114 (pairs in blocks): 64x64 tiles, 128 threads, four blocks an SM
  // (106 registers) against 128x128 at 512 threads: 23169^2 65.1 -> 70.4%,
  // 12345^2 76.6 -> 78.8%. (128x128 at 256 threads, two blocks, spills:
  // 53.9 / 63.8%. In the plain order, run 63, 128x128 at 512 threads had
  // beaten 256: 62.3% vs 53.7%.)
  using MisTile = SuperCfg<2, 32, 16, 128, 4, false, false, false>;
  // Partial output words spread over the lanes, as for 1-byte elements. Run
  // 250: 23169^2 70.1 -> 74.4, 12345^2 78.4 -> 83.3; one tile at a time at
  // 4, 5 and 8 blocks an SM 70.3, 67.4, 51.3 at 23169^2: not kept.
  using Mis = SpreadEnds<MisTile>;
  using MisAlt = std::tuple<SuperCfg<2, 64, 32, 512, 1, false, false, false>, SuperCfg<2, 64, 32, 256, 2, false, false, false>>;
  using Alt = std::tuple<SuperCfg<2, 64, 32, 256, 1, true, true, false>, SuperCfg<2, 64, 32, 512, 1, false, false, false>,
                         SuperCfg<2, 32, 16, 128, 1, false, false, false>, SuperCfg<2, 128, 64, 1024, 1, false, false, false>>;
};
template <>
struct InplaceTunings<4> {
  // Run 170 (16385^2 / 12345^2 / 16255^2, Mis 85.3 / 88.8 / 80.7 in the same
  // process): 64x64 at three blocks an SM (80 registers, 16 bytes spilled)
  // 82.6 / 86.8 / 78.5, at 512 threads and two blocks (spills) 79.3 / 83.9 /
  // 75.4, 128x128 on 1024 threads (spills) 65.6-72.9, 32x32 at four blocks
  // 59.6-73.7.
  using SkewAlt = std::tuple<SkewCfg<4, 32, 128, 256, 4>>;
  // Rows not 16-byte aligned: the misaligned tile path with 256 threads a
  // pair (run 63: 16385^2 68.5% vs 67.3% on the element kernel and 65.8% with
  // the aligned default's 128; run 45: element 67.6% vs 66.1%).
  static constexpr bool kMisalignedTile = true;
  // 64x64 floats per tile, 128 threads, B lanes down: run 3, 95.7% vs 94.3%
  // (B across) and 95.6% (256 threads).
  using C0 = SuperCfg<4, 64, 16, 128, 1, false, false, false>;
  using Default = C0;
  using MisTile = SuperCfg<4, 64, 16, 256, 1, false, false, false>;
  // Skew tile pairs (detail/skew_tile.cuh) of 64x64 floats, 256 threads, two
  // blocks an SM: run 168, 85.3 / 95.2% of a copy at 16385^2 / 12345^2
  // against MisTile's 76.5 / 87.6 in the same process; 512 threads at one
  // block 68.2 / 78.1, 32x32 at four blocks 74.1 / 81.0.
  using Mis = SkewCfg<4, 64, 256, 256, 2>;
  // Run 114: two blocks an SM 76.9 / 87.7% (16385^2 / 12345^2), the same;
  // 32x32 at 64 threads 68.7 / 77.4%.
  using MisAlt = std::tuple<SuperCfg<4, 64, 16, 256, 2, false, false, false>, SuperCfg<4, 32, 8, 64, 8, false, false, false>>;
  using Alt = std::tuple<SuperCfg<4, 64, 16, 128, 1, false, true, false>, SuperCfg<4, 64, 16, 256, 1, false, false, false>,
                         SuperCfg<4, 128, 32, 512, 1, false, false, false>, SuperCfg<4, 32, 8, 64, 1, false, false, false>,
                         SuperCfg<4, 128, 32, 1024, 1, false, false, false>>;
};
template <>
struct InplaceTunings<8> {
  // Run 170 (11585^2 / 12345^2 / 11519^2, Mis 86.5 / 86.7 / 87.9 in the
  // same process): 32x32 on 128 threads at four blocks 80.4-81.2, 64x64 on
  // 1024 threads (spills) 83.2-85.4, 32x32 at two blocks 76.9-77.6.
  using SkewAlt = std::tuple<SkewCfg<8, 32, 256, 256, 2>>;
  // Rows not 16-byte aligned: the misaligned tile path, its pairs in blocks
  // (kPartialSectorGroup). Run 112, 11585^2: 82.4% against 77.6% for the
  // element kernel. (In the plain order the element kernel had won: run 45,
  // 77.6% vs 69.7%; run 63, 77.5%, the best of every tiling tried.)
  static constexpr bool kMisalignedTile = true;
  // 32x32 doubles per tile, 128 threads, B lanes down: run 3, 95.0% vs 94.0% (B across).
  using C0 = SuperCfg<8, 32, 16, 128, 1, false, false, false>;
  using Default = C0;
  using MisTile = C0;
  // Skew tile pairs (detail/skew_tile.cuh) of 64x64 doubles, 512 threads:
  // run 168, 86.7 / 86.6% of a copy at 11585^2 / 12345^2 against MisTile's
  // 82.0 / 83.0 in the same process; 32x32 at two blocks an SM 76.9 / 77.1.
  using Mis = SkewCfg<8, 64, 512, 512, 1>;
  // Run 114 (11585^2 / 12345^2): 82.1 / 83.1% and 81.6 / 82.0% against the
  // default's 82.3 / 83.1%.
  using MisAlt = std::tuple<SuperCfg<8, 32, 16, 128, 4, false, false, false>, SuperCfg<8, 32, 16, 256, 2, false, false, false>>;
  using Alt = std::tuple<SuperCfg<8, 32, 16, 128, 1, false, true, false>, SuperCfg<8, 64, 32, 256, 1, false, false, false>,
                         SuperCfg<8, 16, 8, 64, 1, false, false, false>, SuperCfg<8, 64, 32, 512, 1, false, false, false>,
                         SuperCfg<8, 32, 16, 256, 1, false, false, false>>;
};
template <>
struct InplaceTunings<16> {
  using SkewAlt = std::tuple<>;
  static constexpr bool kMisalignedTile = false;  // rows are always 16-byte aligned
  // 32x32 16-byte elements per tile: run 1, 96.5% (64 to 256 threads alike); run 3, 96.5%.
  using C0 = SuperCfg<16, 32, 32, 256, 1, false, false, false>;
  using Default = C0;
  using MisTile = C0;
  using Mis = C0;
  using MisAlt = std::tuple<>;
  using Alt = std::tuple<SuperCfg<16, 32, 32, 128, 1, false, false, false>>;
};

template <class Cfg>
std::string inplace_cfg_name() {
  return "inplace-tiled/" + std::to_string(Cfg::TR) + "x" + std::to_string(Cfg::TC) + "-" +
         std::to_string(Cfg::THREADS) + "t" + (Cfg::MINB > 1 ? "-minb" + std::to_string(Cfg::MINB) : "") +
         (Cfg::A_DOWN ? "-adown" : "") + (Cfg::B_ACROSS ? "-bacross" : "") + (Cfg::STREAM ? "-cs" : "");
}

template <class Cfg>
std::string inplace_cfg_params() {
  return "tile pair of " + std::to_string(Cfg::TR) + "x" + std::to_string(Cfg::TC) + " elements (" +
         std::to_string(2 * Cfg::SMEM) + " B shared), " + std::to_string(Cfg::THREADS) + " threads" +
         (Cfg::STREAM ? ", evict-first" : "");
}

template <std::size_t S>
std::vector<Variant> inplace_variants() {
  using Tn = InplaceTunings<S>;
  std::vector<Variant> v;
  constexpr bool mis = Tn::kMisalignedTile;
  v.push_back({inplace_cfg_name<typename Tn::Default>(), inplace_cfg_params<typename Tn::Default>(), true,
               launch_inplace_cfg<typename Tn::Default, mis, typename Tn::Mis, 0, kPartialSectorGroup>});
  std::apply([&](auto... c) { (v.push_back({inplace_cfg_name<decltype(c)>(), inplace_cfg_params<decltype(c)>(), false,
                                            launch_inplace_cfg<decltype(c)>}), ...); },
             typename Tn::Alt{});
  if constexpr (S < 16)
    v.push_back({inplace_cfg_name<typename Tn::Default>() + (mis ? "-no-misaligned" : "-misaligned"),
                 inplace_cfg_params<typename Tn::Default>() + (mis ? ", rows not 16-byte aligned on the element kernel"
                                                                   : ", rows not 16-byte aligned on the misaligned tile path"),
                 false, launch_inplace_cfg<typename Tn::Default, !mis, typename Tn::Mis>});
  // The pairs in blocks (inplace_tiled_kernel's `group`), every row length
  // alike; "-pairs-g0" the plain order everywhere.
  auto grouped = [&](auto g) {
    constexpr unsigned G = decltype(g)::value;
    v.push_back({inplace_cfg_name<typename Tn::Default>() + "-pairs-g" + std::to_string(G),
                 inplace_cfg_params<typename Tn::Default>() + ", pairs in blocks of " + std::to_string(G) + "x" +
                     std::to_string(G),
                 false, launch_inplace_cfg<typename Tn::Default, mis, typename Tn::Mis, G>});
  };
  grouped(std::integral_constant<unsigned, 0>{});
  grouped(std::integral_constant<unsigned, 4>{});
  grouped(std::integral_constant<unsigned, 8>{});
  grouped(std::integral_constant<unsigned, 16>{});
  // The default's misaligned tiles realigned one offset a warp (super.cuh:
  // Realign; run 141: 0-3 points slower than lane by lane in place).
  if constexpr (mis)
    v.push_back({inplace_cfg_name<typename Tn::Default>() + "-mis-uniform",
                 inplace_cfg_params<typename Tn::Default>() +
                     "; rows not 16-byte aligned realigned one offset a warp (window_uniform), pairs in blocks of 4x4",
                 false,
                 launch_inplace_cfg<typename Tn::Default, true, Realign<typename Tn::MisTile, true>, 0, kPartialSectorGroup>});
  // The misaligned tiles' partial words both stored by a group's lane 0
  // (store16_any), as before run 250.
  if constexpr (mis && !is_skew_v<typename Tn::Mis>)
    v.push_back({inplace_cfg_name<typename Tn::Default>() + "-mis-lane0-ends",
                 inplace_cfg_params<typename Tn::Default>() +
                     "; rows not 16-byte aligned: each output segment's partial words stored by its lane 0, pairs in blocks of 4x4",
                 false, launch_inplace_cfg<typename Tn::Default, true, typename Tn::MisTile, 0, kPartialSectorGroup>});
  // The super tiles' misaligned path where Mis is a skew tiling.
  if constexpr (mis && is_skew_v<typename Tn::Mis>)
    v.push_back({inplace_cfg_name<typename Tn::Default>() + "-mis-tiles",
                 inplace_cfg_params<typename Tn::Default>() + "; rows not 16-byte aligned: " +
                     inplace_cfg_params<typename Tn::MisTile>() + ", realigned in registers, pairs in blocks of 4x4",
                 false, launch_inplace_cfg<typename Tn::Default, true, typename Tn::MisTile, 0, kPartialSectorGroup>});
  // Other tilings for misaligned rows (aligned rows keep the default's).
  std::apply([&](auto... c) {
    (v.push_back({inplace_cfg_name<typename Tn::Default>() + "-mis-" +
                      inplace_cfg_name<decltype(c)>().substr(std::string("inplace-tiled/").size()),
                  inplace_cfg_params<typename Tn::Default>() + "; rows not 16-byte aligned: " +
                      inplace_cfg_params<decltype(c)>() + ", pairs in blocks of 4x4",
                  false, launch_inplace_cfg<typename Tn::Default, true, decltype(c), 0, kPartialSectorGroup>}),
     ...);
  }, typename Tn::MisAlt{});
  // Misaligned rows on skew tiles (detail/skew_tile.cuh), pairs in blocks of 4x4.
  if constexpr (S < 16)
    std::apply([&](auto... c) {
      (v.push_back({inplace_cfg_name<typename Tn::Default>() + "-mis-skew-" + std::to_string(decltype(c)::TR) + "x" +
                        std::to_string(decltype(c)::TC) + "-" + std::to_string(decltype(c)::THREADS) + "t" +
                        (decltype(c)::MINB > 1 ? "-minb" + std::to_string(decltype(c)::MINB) : ""),
                    inplace_cfg_params<typename Tn::Default>() + "; rows not 16-byte aligned: skew tile pairs of " +
                        std::to_string(decltype(c)::TR) + "x" + std::to_string(decltype(c)::TC) + " elements (" +
                        std::to_string(2 * decltype(c)::SMEM) + " B shared), " +
                        std::to_string(decltype(c)::THREADS) + " threads, pairs in blocks of 4x4",
                    false, launch_inplace_cfg<typename Tn::Default, true, decltype(c), 0, kPartialSectorGroup>}),
       ...);
    }, typename Tn::SkewAlt{});
  return v;
}

bool inplace_tiled_supports(const Problem& p, std::string* why) {
  return check_problem("inplace-tiled", p, Limits{Kind::inplace, false, false, 1024}, why);
}

void launch_inplace_tiled(const void* in, void* out, const Problem& p, cudaStream_t stream) {
  with_elem_size(p.elem_size, [&](auto sz) {
    using Tn = InplaceTunings<decltype(sz)::value>;
    launch_inplace_cfg<typename Tn::Default, Tn::kMisalignedTile, typename Tn::Mis, 0, kPartialSectorGroup>(in, out, p,
                                                                                                         stream);
  });
}

}  // namespace

std::vector<Variant> inplace_tuning_variants(std::size_t elem_size) {
  return with_elem_size(elem_size, [](auto sz) { return inplace_variants<decltype(sz)::value>(); });
}

KernelInfo inplace_swap_info() {
  return {"inplace-swap", "square, in place: thread (x, y) with x < y swaps a[y][x] and a[x][y] (32x8 threads)",
          Kind::inplace, inplace_swap_supports, launch_inplace_swap, true};
}

KernelInfo inplace_tiled_info() {
  return {"inplace-tiled",
          "square, in place: one block per tile pair (I,J),(J,I) through two padded shared tiles, 16-byte accesses",
          Kind::inplace, inplace_tiled_supports, launch_inplace_tiled, false};
}

}  // namespace gt::kernels::detail
