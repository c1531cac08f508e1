// `inplace-rect`: any m x n matrix (packed rows) becomes its n x m transpose
// in the same device memory, by the three steps of gtranspose/rect_maps.hpp
// (a column rotation when c = gcd(m, n) > 1, a shuffle inside each row, a
// permutation of each column), or, where c is large, by the blocked route:
// every c x c block transposed where it lies (inplace-tiled), then one pass
// that moves the blocks' rows to their places (rect::segment_source). Every step
// reads the matrix once and writes it once; what a step gathers from waits
// in on-chip memory:
//   - a row step holds whole rows in one block's shared memory (several short
//     rows per block; a row up to a block's most, about 227 KiB on sm_90,
//     alone in a block, one block an SM), or one longer row spread over a
//     cluster of 2 to 16 blocks with parts of any size (distributed shared
//     memory, sm_90), loaded as aligned 16-byte words;
//   - the rotation, where its groups of columns are wide (each group q of b
//     columns moves up q rows as a whole), moves row segments instead:
//     segment_rotation below;
//   - a column step holds a band of W columns (W elements of 32 bytes or
//     more where it fits) of every row, in one block or spread over a
//     cluster. The rotation gathers (each block writes its rows, reading the
//     next block's first ones); the permutation scatters (each block writes
//     the elements its rows hold, to rows looked up in a table of the row
//     map's inverse: m 4-byte entries, in device memory of their own).
// Where neither fits (a row or a column longer than 16 blocks' shared memory
// can hold, or a GPU without clusters), the step goes through device memory
// instead: batches of rows or bands copied to a scratch buffer and gathered
// back, each step then costing two passes. Scratch is allocated on the
// caller's stream (cudaMallocAsync) only then: max(m, n) elements at least,
// up to 64 MiB; the blocked route's cycles save there the first segment of
// each run of a cut cycle (at most 64 MiB). Scratch a launch needs is
// allocated before its first kernel. A square matrix goes to `inplace-tiled`.
// Run 84 (H100, each step alone, % of a copy of the same bytes): the blocked
// route's tiles 91-95%, its cycles 93-94% (46-47% in all); the
// decomposition's row step 76-93% (32% for bytes), its rotation 53%, its
// column permutation 37-52% (23% for bytes; 13-26% in gather form, run 76):
// every row of a band is read and written 64 bytes at a time, rows apart.
// Run 120: the permutation's bands 128 bytes wide (parts of any size, the
// table's run in shared memory): 37-63% (bytes 37%). Runs 131-135: the
// clusters' bands and rows from a counter (Taker), and the permutation's
// loads twice as deep for elements up to 4 bytes: 38-59% (bytes 38%).
// Runs 141-142: the rotation's rows spread evenly over the smallest cluster
// that holds them (8-byte elements keep power-of-two parts): 27-74% (plan_band_for).
// Run 145: the permutation's bands 256 bytes wide at one block an SM lost
// 5-15 points where they applied (not kept). Runs 205-208: the permutation
// staged through L2 buffers instead of on chip: slower at every shape, the
// L2 bound by the buffers' round trip (not kept; commit e210711). Runs
// 211-212: the rotation by row segments, 12345x6789 (c = 3) step alone 54 ->
// 89% (f32), 27 -> 53% (u8), 54 -> 100% (f64). Run 247: the coprime row
// step stores whole 16-byte words (rows 42 -> 57% for bytes, 71 -> 86% for
// 2 bytes), 1- and 2-byte bands load aligned words (columns +0-3 points);
// the permutation's blocks one an SM in clusters of half the size lost 4-11
// points (not kept).
#include <cooperative_groups.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include "detail/common.cuh"
#include "detail/families.hpp"
#include "gtranspose/rect_maps.hpp"

namespace gt::kernels::detail {
namespace {

namespace cg = cooperative_groups;
using u64 = std::uint64_t;
using u32 = std::uint32_t;

constexpr unsigned kThreads = 512;
// Shared memory per block: two blocks (1024 threads) fit an SM of 228 KiB.
constexpr std::size_t kCap = 112 * 1024;
constexpr unsigned kMaxCluster = 16;
// A band step's target width per row: the rotation's (run 76: 32, 64 and
// 128 bytes measured), and the permutation's, whose parts need not be powers
// of two (run 120, % of a copy, column step alone, 64 -> 128 bytes: f32
// 13001x20651 29.7 -> 47.1, 16383x16385 46.0 -> 52.8, f64 13001x10325 32.7 ->
// 58.6, c128 6500x5163 55.7 -> 63.3; bytes 37.2 -> 33.4, so 64 for them).
constexpr u64 kBandBytes = 64;
constexpr u64 kPermuteBandBytes = 128;
constexpr u64 kPermuteBandBytes1 = 64;
// The steps, for the timing test's GT_TEST_RECT_STEPS.
constexpr unsigned kStepRotate = 1, kStepRows = 2, kStepColumns = 4, kStepBlocks = 8, kStepCycles = 16;
constexpr std::size_t kScratchMax = 64ull << 20;

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define GT_RECT_CLUSTERS 1
#else
#define GT_RECT_CLUSTERS 0
#endif

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define GT_RECT_ASYNC 1
#else
#define GT_RECT_ASYNC 0
#endif

// cp.async (sm_80 and later): a copy of one 16-byte word from global to
// shared memory that holds no register while in flight, so a thread can
// have all its loads of a step in flight at once (with plain loads, U at a
// time); visible to the thread after async_wait(). The row step's blocks
// load their rows so (run 83: 70-88% of a copy -> 76-94%; 4- and 8-byte
// copies in the band steps ran slower and were dropped).
__device__ __forceinline__ void async_copy16(void* smem, const void* gmem) {
#if GT_RECT_ASYNC
  const unsigned sa = unsigned(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(sa), "l"(gmem) : "memory");
#else
  (void)smem;
  (void)gmem;
#endif
}

__device__ __forceinline__ void async_wait() {
#if GT_RECT_ASYNC
  asm volatile("cp.async.wait_all;\n" ::: "memory");
#endif
}

// This block's rank in its cluster and the cluster's size (1 and 1 when the
// kernel was not launched in clusters).
template <bool kCluster>
__device__ __forceinline__ void cluster_place(unsigned& rank, unsigned& size) {
  rank = 0;
  size = 1;
#if GT_RECT_CLUSTERS
  if constexpr (kCluster) {
    const cg::cluster_group cl = cg::this_cluster();
    rank = cl.block_rank();
    size = cl.num_blocks();
  }
#endif
}

template <bool kCluster>
__device__ __forceinline__ void barrier() {
#if GT_RECT_CLUSTERS
  if constexpr (kCluster) {
    cg::this_cluster().sync();
    return;
  }
#endif
  __syncthreads();
}

// Where this block works: its rank in its cluster, and which of the grid's
// clusters (of size 1 without clusters) it belongs to.
template <bool kCluster>
struct Place {
  unsigned rank, size;
  u64 nclusters, cid;
  __device__ Place() {
    cluster_place<kCluster>(rank, size);
    nclusters = gridDim.x / size;
    cid = blockIdx.x / size;
  }
};

// Block `rank`'s shared buffer, seen from this block.
template <bool kCluster, class E>
__device__ __forceinline__ E* shared_of(E* mine, unsigned rank) {
#if GT_RECT_CLUSTERS
  if constexpr (kCluster) return cg::this_cluster().map_shared_rank(mine, rank);
#endif
  (void)rank;
  return mine;
}

// A step's work items (bands, rows) for its clusters, handed out by a
// counter in device memory (zero at the launch; run 131): block 0 of a
// cluster takes the next item's number while the cluster works on this one
// and leaves it in its shared memory, where every block reads it after the
// item's first barrier. A cluster that starts late (fewer clusters resident
// than the occupancy query promised) then takes fewer items; with fixed
// shares (item = cluster, cluster + clusters, ...) it ran its whole share
// after the others: run 131, column permutation, fixed shares -> counter, %
// of a copy: f32 13001x20651 39-41 -> 56, 20651x13001 31-34 -> 51, f64
// 13001x20651 40-42 -> 58. Without a counter (lone blocks, whose residency
// the occupancy query gets right, and the timing test's
// GT_TEST_RECT_FIXED_SHARES) the fixed shares. Slot `turn` is written while
// the other is read: each is read after the barrier that follows its
// write, and written again only after the next item's barrier, which every
// block reaches after its read.
template <bool kCluster>
class Taker {
 public:
  __device__ Taker(unsigned long long* counter, const Place<kCluster>& at, unsigned long long* slots)
      : counter_(counter), slots_(slots), step_(at.nclusters), first_(at.cid),
        mine_(counter != nullptr && at.rank == 0 && threadIdx.x == 0) {}
  // The cluster's first item (a cluster barrier when counted).
  __device__ u64 first() {
    if (!counter_) return first_;
    if (mine_) slots_[0] = atomicAdd(counter_, 1ull);
    barrier<kCluster>();
    return shared_of<kCluster>(slots_, 0)[0];
  }
  // Takes the item after the current one: before the current one's barrier.
  __device__ void take(unsigned turn) {
    if (mine_) slots_[turn] = atomicAdd(counter_, 1ull);
  }
  // The item after `cur`, taken by take(turn): after that barrier.
  __device__ u64 next(u64 cur, unsigned turn) const {
    return counter_ ? shared_of<kCluster>(slots_, 0)[turn] : cur + step_;
  }
  // Before the blocks exit: none may while another can still read its slots.
  __device__ void finish() {
    if (counter_) barrier<kCluster>();
  }

 private:
  unsigned long long* counter_;
  unsigned long long* slots_;
  u64 step_, first_;
  bool mine_;
};

// Loads in flight per thread: each loop issues U independent loads
// (global, shared or another block's shared memory) before it uses any, so
// that an SM keeps enough bytes moving to cover the memory's latency.
template <std::size_t S>
constexpr int unroll_of() {
  return S == 16 ? 2 : S == 8 ? 4 : 8;
}

// Which block of a cluster holds index src, for parts of any size: src / part
// by a multiply, (src * ceil(2^40 / part)) >> 40, exact wherever src * part
// < 2^40 (so for every row and band on chip: see row_cluster and BandArgs).
inline u64 part_inverse(u64 part) { return part ? ((u64(1) << 40) + part - 1) / part : 0; }
__device__ __forceinline__ u32 part_rank(u32 src, u64 pinv) { return u32((u64(src) * pinv) >> 40); }

// A band step's matrix and layout: steps 1 and 3 gather row R(i) + C(j) mod m.
// On chip a band's rows (m <= 16 * kCap) and everything counted inside it
// fit 32 bits: the kernels count in 32-bit arithmetic (run 81: the band and
// row kernels issued 70-90 instructions per 32 elements, in 64 bits).
struct BandArgs {
  rect::Maps mp;
  rect::Maps32 mp32;     // mp in 32 bits (its m is exact on chip)
  u32 width = 1;         // W columns per band, a power of two <= kThreads
  unsigned wshift = 0;   // log2 W
  u32 part = 0;          // rows per block of a cluster; all rows without clusters
  u64 pinv = 0;          // part_inverse(part), for the rotation's part_rank (src < 16 kCap, part <= kCap: src * part < 2^38)
  u64 nbands = 0;
  unsigned long long* counter = nullptr;  // the bands' counter (Taker): clusters only
  u32 stride = 1;        // elements per band row in shared memory: W, or W + 16 / S for word loads (load_band_words)
  bool checked = false;  // the permutation's every diagonal through the checked loop (scatter_kernel), for the timing test
};

// Which rows a band step gathers: step 1 (rotation) or step 3 (permutation).
enum class Band { rotate, permute };

template <Band kMode>
struct BandMaps;
template <>
struct BandMaps<Band::rotate> {
  static __device__ rect::RotIter rows(const BandArgs& g, u64 i0, u64 step) { return {g.mp, i0, step}; }
  static __device__ u64 shift(const BandArgs& g, u64 j) { return rect::rotation_col(g.mp, j); }
};
template <>
struct BandMaps<Band::permute> {
  static __device__ rect::PermIter rows(const BandArgs& g, u64 i0, u64 step) { return {g.mp, i0, step}; }
  static __device__ u64 shift(const BandArgs& g, u64 j) { return j % g.mp.m; }
};

// Where a thread of a band step works: column tj of the band and rows ti,
// ti + rstep, ... of its block's rows [row0, row0 + count) (a cluster's
// block its part, a lone block all).
template <bool kCluster>
struct BandThread {
  u32 row0, count, tj, ti, rstep;
  __device__ BandThread(const Place<kCluster>& at, const BandArgs& g) {
    const u32 m = g.mp32.m;
    row0 = kCluster ? at.rank * g.part : 0;
    count = kCluster ? (row0 < m ? min(g.part, m - row0) : 0) : m;
    tj = threadIdx.x & (g.width - 1);
    ti = threadIdx.x >> g.wshift;
    rstep = kThreads >> g.wshift;
  }
};

// Loads the thread's rows of the band at column j into shared memory (local
// row r at s[r * W + tj]), U loads ahead. (By cp.async instead, 4 and 8-byte
// elements ran 5-14 points slower in run 83.)
template <int U, class E, bool kCluster>
__device__ __forceinline__ void load_band(E* s, const E* d, u64 n, u64 j, const BandThread<kCluster>& t, u32 W) {
  const u64 jump = u64(t.rstep) * n;
  const E* from = d + u64(t.row0 + t.ti) * n + j;
  for (u32 r0 = t.ti; r0 < t.count; r0 += U * t.rstep, from += U * jump) {
    E v[U];
#pragma unroll
    for (int u = 0; u < U; ++u)
      if (r0 + u * t.rstep < t.count) v[u] = from[u * jump];
#pragma unroll
    for (int u = 0; u < U; ++u)
      if (r0 + u * t.rstep < t.count) s[(r0 + u * t.rstep) * W + t.tj] = v[u];
  }
}

// The column rotation on chip, in gather form: each cluster (or block)
// takes bands of W columns; every block loads its rows of the band, then
// writes them from where their source rows lie: its own rows, and for the
// last few the next block's first ones (distributed shared memory).
template <class E, bool kCluster>
__global__ void __launch_bounds__(kThreads, 2) rotate_kernel(E* d, BandArgs g) {
  constexpr int U = unroll_of<sizeof(E)>();
  extern __shared__ __align__(16) unsigned char smem_raw[];
  E* s = reinterpret_cast<E*>(smem_raw);
  const Place<kCluster> at;
  const BandThread<kCluster> t(at, g);
  const u32 m = g.mp32.m, W = g.width;
  const u64 n = g.mp.n, jump = u64(t.rstep) * n;
  // The thread's rows are the same in every band: their walk starts from one state.
  const rect::RotIterT<u32> rows_from(g.mp, t.row0 + t.ti, t.rstep);
  __shared__ unsigned long long taken[2];  // Taker's slots
  Taker<kCluster> taker(g.counter, at, taken);
  u64 band = taker.first();
  for (unsigned turn = 1; band < g.nbands; turn ^= 1) {
    taker.take(turn);
    const u64 j = (band << g.wshift) + t.tj;
    const bool live = j < n;
    if (live) load_band<U>(s, d, n, j, t, W);
    barrier<kCluster>();
    const u64 next = taker.next(band, turn);
    if (live) {
      const u32 cj = u32(rect::rotation_col(g.mp, j));
      auto it = rows_from;
      E* to = d + u64(t.row0 + t.ti) * n + j;
      for (u32 r0 = t.ti; r0 < t.count; r0 += U * t.rstep, to += U * jump) {
        E v[U];
#pragma unroll
        for (int u = 0; u < U; ++u) {
          if (r0 + u * t.rstep < t.count) {
            u32 src = it.value(g.mp32) + cj;
            if (src >= m) src -= m;
            if constexpr (kCluster) {
              const u32 rank = part_rank(src, g.pinv);
              v[u] = shared_of<kCluster>(s, rank)[(src - rank * g.part) * W + t.tj];
            } else
              v[u] = s[src * W + t.tj];
            it.advance(g.mp32);
          }
        }
#pragma unroll
        for (int u = 0; u < U; ++u)
          if (r0 + u * t.rstep < t.count) to[u * jump] = v[u];
      }
    }
    barrier<kCluster>();
    band = next;
  }
  taker.finish();
}

// The column permutation on chip, in scatter form: each block writes the
// elements whose sources it holds, so no block reads another's shared memory
// (in gather form, as the rotation, every block of a cluster read every
// other's: 13-25% of a copy in run 76, 18-50% in scatter form in run 80).
// Output row i of column j takes source row s = (R(i) + j) mod m,
// R = rect::permuted_row; with t = (s - j) mod m, its row is rinv[t] (R's
// inverse, a table made by rinv_kernel). A band's W sources for one t lie on
// a diagonal of the band, rows s..s+W-1 of its columns, and land in one
// output row, W elements side by side: so the threads of a diagonal write
// contiguous memory and read shared memory at a stride of W + 1 elements (no
// bank conflicts). A block's diagonals take a run of count + W - 1
// consecutive t (mod m): that run of the table is loaded into shared memory
// beside the band (band_table), so no write waits on a load from device
// memory. Since no block reads another's rows, a cluster's parts need not be
// powers of two: ceil(m / cluster) rows each, so that every block of a
// cluster holds rows. The cluster waits once per band, for every block to
// have loaded it before any writes into it.
template <class E>
__device__ __forceinline__ u32* band_table(E* s, u32 part, u32 stride) {
  const std::size_t off = (std::size_t(part) * stride * sizeof(E) + 15) & ~std::size_t(15);
  return reinterpret_cast<u32*>(reinterpret_cast<unsigned char*>(s) + off);
}

// Word loads for 1- and 2-byte elements (kWideBandBytes a row): a band row
// is read as the aligned 16-byte words that cover it, by cp.async, and kept
// with its misalignment: local row r's element tj at s[r * (W + P) +
// word_lead(r) + tj], P = 16 / S, word_lead(r) its first element's place in
// its word. One element a load (load_band) held 16 KiB in flight an SM for
// bytes, a warp's load 32 bytes of a row. The words at the matrix's two ends
// that reach past it are copied element by element. Run 247, column step, %
// of a copy, same process, element loads -> words: u8 12345x6789 30.5 ->
// 33.8, u8 13001x20651 28.3 -> 28.5, f16 45.0 (128-byte bands) -> 45.5: the
// loads' depth was not what bounds the step (the band walk is; see
// DISABLED_Tune.BandCeiling).
constexpr u64 kWideBandBytes = 64;
template <class E>
struct WordLead {
  static constexpr u32 P = 16 / sizeof(E);
  u32 base, nP, j0;  // d's place in its word, n mod P, the band's first column mod P
  __device__ WordLead(const E* d, u64 n, u64 j0_) {
    base = u32(reinterpret_cast<std::uintptr_t>(d) / sizeof(E)) & (P - 1);
    nP = u32(n) & (P - 1);
    j0 = u32(j0_) & (P - 1);
  }
  // Where row i's band starts in its word.
  __device__ u32 operator()(u32 i) const { return (base + i * nP + j0) & (P - 1); }
};

template <class E>
__device__ __forceinline__ void load_band_words(E* s, const E* d, u64 m, u64 n, u64 j0, u32 row0, u32 count,
                                                u32 stride) {
  constexpr u32 P = 16 / sizeof(E);
  constexpr u32 Q = u32(kWideBandBytes / 16) + 1;  // words a band row can touch
  const u32 W = u32(kWideBandBytes / sizeof(E));
  const u32 wv = u32(min(u64(W), n - j0));  // the band's columns inside the matrix
  const WordLead<E> lead(d, n, j0);
  const E* hi = d + m * n;
  for (u32 f = threadIdx.x; f < count * Q; f += kThreads) {
    const u32 r = f / Q, q = f - r * Q;
    const u32 off = lead(row0 + r);
    if (q * P >= off + wv) continue;
    // The word's first element (before d only for row 0's first word).
    const std::intptr_t at = std::intptr_t(u64(row0 + r) * n + j0) - std::intptr_t(off) + std::intptr_t(q * P);
    E* to = s + r * stride + q * P;
    if (at >= 0 && d + at + P <= hi) {
      async_copy16(to, d + at);
    } else {
#pragma unroll
      for (u32 e = 0; e < P; ++e)
        if (at + std::intptr_t(e) >= 0 && d + at + e < hi) to[e] = d[at + e];
    }
  }
  async_wait();
}

// Its band loads are twice as deep as the other loops' for elements of up
// to 4 bytes (run 135, column step, % of a copy, U -> 2U, two processes
// each: f32 13001x20651 56.1 -> 59.2-59.5, 20651x13001 51.0 -> 54.0-54.2,
// 16383x16385 51.7 -> 55.3-55.4, f16 41.0-41.3 -> 45.7, u8 36.4 -> 37.8;
// f64 and c128 unchanged, so they keep U).
template <std::size_t S>
constexpr int scatter_load_unroll() {
  return S <= 4 ? 2 * unroll_of<S>() : unroll_of<S>();
}

template <class E, bool kCluster, bool kWords>
__global__ void __launch_bounds__(kThreads, 2) scatter_kernel(E* d, BandArgs g, const u32* __restrict__ rinv) {
  static_assert(!kWords || sizeof(E) <= 2, "word loads are for 1- and 2-byte elements");
  constexpr int U = unroll_of<sizeof(E)>(), LU = scatter_load_unroll<sizeof(E)>();
  extern __shared__ __align__(16) unsigned char smem_raw[];
  E* s = reinterpret_cast<E*>(smem_raw);
  u32* table = band_table(s, g.part, g.stride);
  const Place<kCluster> at;
  const BandThread<kCluster> th(at, g);
  const u32 m = g.mp32.m, W = g.width;
  const u64 n = g.mp.n;
  // Diagonals x = 0 .. count + W - 2 of this block's rows: thread tj's
  // element of diagonal x is local row x + tj - (W - 1).
  const u32 diagonals = th.count + W - 1;
  __shared__ unsigned long long taken[2];  // Taker's slots
  Taker<kCluster> taker(g.counter, at, taken);
  u64 band = taker.first();
  for (unsigned turn = 1; band < g.nbands; turn ^= 1) {
    taker.take(turn);
    const u64 j0 = band << g.wshift, j = j0 + th.tj;
    const bool live = j < n;
    if constexpr (kWords) {
      load_band_words(s, d, g.mp.m, n, j0, th.row0, th.count, g.stride);
    } else if (live) {
      load_band<LU>(s, d, n, j, th, W);
    }
    if (th.count) {
      // t of diagonal x: (row0 - (j0 + W - 1) + x) mod m.
      const u32 t0 = u32((u64(th.row0) + m - (j0 + W - 1) % m) % m);
      for (u32 x = threadIdx.x; x < diagonals; x += kThreads) table[x] = rinv[(t0 + x) % m];  // t0 < m, x < m + kThreads
    }
    barrier<kCluster>();
    const u64 next = taker.next(band, turn);
    if (live && th.count) {
      E* col = d + j;
      const WordLead<E> lead(d, n, j0);
      // The thread's element of diagonal x: local row x + tj - (W - 1).
      const auto element = [&](u32 x) {
        const u32 r = x + th.tj - (W - 1);
        return kWords ? s[r * g.stride + lead(th.row0 + r) + th.tj] : s[r * W + th.tj];
      };
      // This thread's diagonals in [lo, hi): x = ti mod rstep (a power of two).
      const auto first = [&](u32 lo) { return lo + ((th.ti - lo) & (th.rstep - 1)); };
      // Diagonals whose rows may leave the block's (the band's corners):
      // each element checked.
      const auto checked = [&](u32 lo, u32 hi, auto unroll) {
        constexpr int CU = decltype(unroll)::value;
        for (u32 x0 = first(lo); x0 < hi; x0 += CU * th.rstep) {
          E v[CU];
          u32 to[CU];
          bool ok[CU];
#pragma unroll
          for (int u = 0; u < CU; ++u) {
            const u32 x = x0 + u * th.rstep;
            ok[u] = x < hi && x + th.tj >= W - 1 && x + th.tj - (W - 1) < th.count;
            if (ok[u]) {
              to[u] = table[x];
              v[u] = element(x);
            }
          }
#pragma unroll
          for (int u = 0; u < CU; ++u)
            if (ok[u]) col[u64(to[u]) * n] = v[u];
        }
      };
      // The corners at one diagonal a turn: unrolled, their loop spilled
      // registers beside the full diagonals' (ptxas, sm_90).
      constexpr std::integral_constant<int, U> kAll{};
      constexpr std::integral_constant<int, 1> kCorner{};
      // Word-loaded bands (1- and 2-byte elements): diagonals W - 1 ..
      // count - 1 hold a row of the block in every column, so they go with
      // no check but the range's end, and where a matrix row's bytes fit 32
      // bits each destination by one multiply-add. Nsight (run 249, u8
      // 13001x20651) counted 48 warp instructions for every 32 bytes the
      // checked loop moves: each element's bounds twice, its row's place in
      // its word, a 64-bit product. (4- to 16-byte elements keep the checked
      // loop: beside it the full diagonals' loop spilled registers, and they
      // move 4-16 times the bytes an instruction.)
      const u64 row_bytes = n * sizeof(E);
      const u32 full_lo = W - 1, full_hi = th.count > full_lo ? th.count : full_lo;
      if (!kWords || g.checked || row_bytes >> 32) {
        checked(0, diagonals, kAll);
      } else {
        checked(0, full_lo, kCorner);
        const u32 rb = u32(row_bytes);
        unsigned char* colb = reinterpret_cast<unsigned char*>(col);
        // Bytes (kWhole): whole turns of U diagonals unchecked, the turn that
        // crosses the range's end and the far corner left to the checked
        // loop (the range check inside each turn compiled to a branch an
        // element: run 250's Nsight). Run 251 (H100, % of a copy, same
        // process, checked loop -> whole turns): u8 13001x20651 step 38.3 ->
        // 49.4, whole 24.4 -> 28.5; 12345x6789 step 38.7 -> 49.2, whole 14.0
        // -> 15.1. Whole turns lost for 2-byte elements at 20651x13001 (step
        // 46.6 -> 37.9; 13001x20651 49.4 -> 52.3) and for f32 and f64 at
        // 13001x20651 (61.6 -> 58.3, 61.1 -> 56.0): 2-byte elements keep the
        // check inside the turn.
        constexpr bool kWhole = sizeof(E) == 1;
        const u32 span = kWhole ? (U - 1) * th.rstep : 0;
        u32 x0 = first(full_lo);
        for (; x0 + span < full_hi; x0 += U * th.rstep) {
          E v[U];
          u32 to[U];
#pragma unroll
          for (int u = 0; u < U; ++u) {
            const u32 x = x0 + u * th.rstep;
            if (kWhole || x < full_hi) {
              to[u] = table[x];
              v[u] = element(x);
            }
          }
#pragma unroll
          for (int u = 0; u < U; ++u)
            if (kWhole || x0 + u * th.rstep < full_hi) *reinterpret_cast<E*>(colb + u64(to[u]) * rb) = v[u];
        }
        checked(kWhole && x0 < full_hi ? x0 : full_hi, diagonals, kCorner);
      }
    }
    // The next band's loads overwrite only this block's shared memory, and
    // only this block reads it.
    __syncthreads();
    band = next;
  }
  taker.finish();
}

// rinv[R(i)] = i for every row i: R's inverse, for scatter_kernel.
__global__ void __launch_bounds__(kThreads) rinv_kernel(std::uint32_t* rinv, rect::Maps mp) {
  const u64 i0 = u64(blockIdx.x) * kThreads + threadIdx.x, step = u64(gridDim.x) * kThreads;
  if (i0 >= mp.m) return;
  rect::PermIter it(mp, i0, step);
  for (u64 i = i0; i < mp.m; i += step, it.advance(mp)) rinv[it.value(mp)] = std::uint32_t(i);
}

// The rotation by row segments (`segment_rotate_kernel`), where the column
// groups are wide: step 1 rotates group q (columns q b .. q b + b - 1, b
// contiguous elements of every row) up by q rows, the same amount for the
// whole group, so it moves row segments of b elements, not columns. Group 0
// stays; each other group's rows are cut into chunks of R = max(64, 8 c)
// rows (the last one takes the remainder; a single chunk where m < R), so
// every chunk has more rows than any group moves (q < c <= R, and c <= m).
// A chunk's new rows are its own old rows q below, and for its last q rows
// the next chunk's first q (the first chunk's, after the last): those halos
// are saved to scratch first (`halo_kernel`, q rows a chunk: (c - 1) / 2R
// of the matrix on average, under 1/16), so no chunk reads what another
// writes. In a chunk each thread owns kSegColumns columns: it reads U rows
// of them ahead of the rows it writes (rows r + q .. r + q + U - 1 before
// rows r .. r + U - 1), so it never reads a row it has written. Both
// kernels read and write whole row segments, coalesced.
constexpr u64 kSegChunkRows = 64;  // R's least
constexpr unsigned kSegThreads = 256;
// Columns a thread moves (U rows of each at a time): run 212, step 1 alone,
// % of a copy of the whole matrix, 12345x6789, (U, 1 column) -> (U, 4):
// f32 86.9 -> 88.9, f64 94.9 -> 100.2, c128 110.2 -> 112.9, f32 15000x10002
// (c = 6) 73.6 -> 81.1, 20000x30002 (c = 2) 113.0 -> 116.8; u8 52.4 -> 52.8,
// f16 66.7 -> 68.5. (2U rows of one column, or of two: within 3 points of
// these, up or down; the whole transpose moved at most a point.)
constexpr int kSegColumns = 4;
constexpr u64 kSegMaxGroups = 64;        // c: the halos take c (c - 1) / 2 rows a chunk
constexpr u64 kSegMinGroupBytes = 256;   // b S: narrower groups keep the band rotation

struct SegRotation {
  u64 m = 0, n = 0, b = 0, c = 0;
  u64 rows = 0;         // R
  u64 chunks = 0;       // chunk k: rows k R .. (k + 1) R - 1, the last to m - 1
};

// A group's pieces of V * kSegThreads columns: thread t of a piece owns its
// columns t, t + kSegThreads, ... (V of them). The halo kernel's pieces
// hold one column a thread (V = 1), the rotation's kSegColumns.
template <int V>
__host__ __device__ __forceinline__ u64 seg_tiles(const SegRotation& r) {
  return (r.b + u64(V) * kSegThreads - 1) / (u64(V) * kSegThreads);
}
// Item `it` of a segment kernel (group q >= 1, then chunk k, then piece):
// group q, chunk k, and this thread's first column x of the group.
struct SegItem {
  u64 q, k, x;
};
template <int V>
__device__ __forceinline__ SegItem seg_item(const SegRotation& r, u64 it) {
  const u64 tiles = seg_tiles<V>(r), per_group = r.chunks * tiles;
  const u64 rest = it % per_group;
  return {1 + it / per_group, rest / tiles, (rest % tiles) * V * kSegThreads + threadIdx.x};
}

__device__ __forceinline__ u64 chunk_rows(const SegRotation& r, u64 k) {
  return k + 1 < r.chunks ? r.rows : r.m - k * r.rows;
}
// Where group q's halos start in scratch: groups 1 .. q - 1 hold q' rows of
// b elements a chunk each.
__device__ __forceinline__ u64 seg_halo_base(const SegRotation& r, u64 q) { return (q * (q - 1) / 2) * r.chunks * r.b; }

template <class E>
__global__ void __launch_bounds__(kSegThreads) halo_kernel(const E* d, E* halo, SegRotation r) {
  const u64 items = (r.c - 1) * r.chunks * seg_tiles<1>(r);
  for (u64 it = blockIdx.x; it < items; it += gridDim.x) {
    const auto [q, k, x] = seg_item<1>(r, it);
    if (x >= r.b) continue;
    const E* from = d + k * r.rows * r.n + q * r.b + x;
    E* to = halo + seg_halo_base(r, q) + k * q * r.b + x;
    for (u64 h = 0; h < q; ++h) to[h * r.b] = from[h * r.n];  // a chunk has at least c > q rows
  }
}

template <class E, int U, int V>
__global__ void __launch_bounds__(kSegThreads) segment_rotate_kernel(E* d, const E* halo, SegRotation r) {
  // A thread moves U rows of each of its V columns at a time.
  const u64 items = (r.c - 1) * r.chunks * seg_tiles<V>(r);
  for (u64 it = blockIdx.x; it < items; it += gridDim.x) {
    const auto [q, k, x] = seg_item<V>(r, it);
    if (x >= r.b) continue;
    const u64 rows = chunk_rows(r, k), next = k + 1 < r.chunks ? k + 1 : 0;
    E* col = d + k * r.rows * r.n + q * r.b + x;  // this chunk's row 0, this thread's first column
    const E* next_halo = halo + seg_halo_base(r, q) + next * q * r.b + x;
    for (u64 r0 = 0; r0 < rows; r0 += U) {
      E v[U][V];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const u64 row = r0 + u, src = row + q;
#pragma unroll
        for (int w = 0; w < V; ++w)
          if (row < rows && x + w * kSegThreads < r.b)
            v[u][w] = src < rows ? col[src * r.n + w * kSegThreads] : next_halo[(src - rows) * r.b + w * kSegThreads];
      }
#pragma unroll
      for (int u = 0; u < U; ++u)
#pragma unroll
        for (int w = 0; w < V; ++w)
          if (r0 + u < rows && x + w * kSegThreads < r.b) col[(r0 + u) * r.n + w * kSegThreads] = v[u][w];
    }
  }
}

// On chip a row (n <= 16 * kCap elements) and a block's rows fit 32 bits:
// the row kernel counts and steps its iterator in 32-bit arithmetic.
struct RowArgs {
  rect::Maps mp;
  rect::Maps32 mp32;  // mp in 32 bits (its b, c and shift_a are exact)
  u32 group;    // rows per block (1 in clusters)
  u64 ngroups;
  u32 part;     // elements of the row per block of a cluster (a multiple of 16 / S)
  u64 pinv;     // part_inverse(part), for part_rank (row_cluster: src * part < 2^40 on chip)
  unsigned tpr = kThreads, tshift = 9;  // threads per row without clusters (a power of two)
  unsigned long long* counter = nullptr;  // the rows' counter (Taker): clusters only
};

// Copies `len` elements from global to shared memory, U loads in flight.
template <int U, class E>
__device__ __forceinline__ void load_run(E* s, const E* from, u64 len) {
  for (u64 t0 = threadIdx.x; t0 < len; t0 += u64(U) * kThreads) {
    E v[U];
#pragma unroll
    for (int u = 0; u < U; ++u)
      if (t0 + u64(u) * kThreads < len) v[u] = from[t0 + u64(u) * kThreads];
#pragma unroll
    for (int u = 0; u < U; ++u)
      if (t0 + u64(u) * kThreads < len) s[t0 + u64(u) * kThreads] = v[u];
  }
}

// Elements of E ahead of `from`'s 16-byte word: where load_span puts
// element 0 in shared memory (0 for sizes that do not divide 16).
template <class E>
__device__ __forceinline__ unsigned span_lead(const E* from) {
  constexpr std::size_t S = sizeof(E);
  if constexpr (S < 16 && 16 % S == 0)
    return unsigned((reinterpret_cast<std::uintptr_t>(from) & 15) / S);
  else
    return 0;
}

// Copies `len` elements from `from` to s[lead ..], lead = span_lead(from),
// so that the span's aligned 16-byte words land on aligned words of shared
// memory and move as whole words (16 / sizeof(E) elements a copy, by
// cp.async where there is one: the row step's loads were one element each,
// 4 KiB in flight per block for bytes); the ragged head and tail go element
// by element. `s` is 16-byte aligned and holds lead + len elements (at most
// 15 bytes more than len). kAsync: by cp.async (a block's own rows, behind
// __syncthreads; a cluster's parts take plain loads, as compute-sanitizer's
// racecheck reported cp.async writes racing with the other blocks' reads
// behind the cluster barrier in run 83).
constexpr int kSpanUnroll = 3;
template <bool kAsync, class E>
__device__ __forceinline__ void load_span(E* s, const E* from, u64 len) {
  constexpr std::size_t S = sizeof(E);
  if constexpr (S < 16 && 16 % S == 0) {
    constexpr u64 per = 16 / S;
    const unsigned lead = span_lead(from);
    const u64 head = lead ? min(len, per - lead) : 0;
    const u64 words = (len - head) / per, tail = head + words * per;
    E* sl = s + lead;
    for (u64 k = threadIdx.x; k < head; k += kThreads) sl[k] = from[k];
    for (u64 k = tail + threadIdx.x; k < len; k += kThreads) sl[k] = from[k];
    uint4* sw = reinterpret_cast<uint4*>(sl + head);
    const uint4* fw = reinterpret_cast<const uint4*>(from + head);
    if constexpr (kAsync && GT_RECT_ASYNC) {
      for (u64 w = threadIdx.x; w < words; w += kThreads) async_copy16(sw + w, fw + w);
      async_wait();
    } else {
      load_run<kSpanUnroll>(sw, fw, words);
    }
  } else if constexpr (kAsync && GT_RECT_ASYNC && S == 16 && alignof(E) == 16) {
    for (u64 k = threadIdx.x; k < len; k += kThreads) async_copy16(s + k, from + k);
    async_wait();
  } else {
    load_run<unroll_of<S>()>(s, from, len);
  }
}

// Shared memory a row step's block takes for `elems` elements: room for
// load_span's lead.
constexpr std::size_t span_bytes(u64 elems, std::size_t S) { return std::size_t(elems * S) + 16; }

// Step 2 on chip: a block holds `group` whole rows, or a cluster one row.
// It: the walk along a row, rect::ShuffleIterT, or where the sides are
// coprime rect::CoprimeShuffleIterT (two instructions a step).
// kPacked (coprime sides, elements of up to 4 bytes, a block's own rows):
// each thread gathers the 16 / S elements of a whole aligned 16-byte word of
// its row and stores them at once (one store a word instead of one an
// element, a warp's store 512 bytes instead of 32 for bytes); the row's
// ragged ends go element by element. Run 247, row step, % of a copy, same
// process, element stores -> words: u8 13001x20651 42.0 -> 57.2, f16 70.7
// -> 85.7, f32 86.6 -> 90.2, f32 16383x16385 85.8 -> 88.4.
template <class E, bool kCluster, class It, bool kPacked>
__global__ void __launch_bounds__(kThreads, 2) row_kernel(E* d, RowArgs g) {
  constexpr int U = unroll_of<sizeof(E)>();
  extern __shared__ __align__(16) unsigned char smem_raw[];
  E* s = reinterpret_cast<E*>(smem_raw);
  const Place<kCluster> at;
  const u64 m = g.mp.m;
  const u32 n = g.mp32.n;
  __shared__ unsigned long long taken[2];  // Taker's slots
  Taker<kCluster> taker(g.counter, at, taken);
  u64 grp = taker.first();
  for (unsigned turn = 1; grp < g.ngroups; turn ^= 1) {
    taker.take(turn);
    u64 next;
    if constexpr (kCluster) {
      E* row = d + grp * n;
      const u32 j0 = at.rank * g.part;
      const u32 len = j0 < n ? min(g.part, n - j0) : 0;
      // Every block's part starts at the same offset in its 16-byte word
      // (part * S is a multiple of 16), so each finds its elements at `lead`.
      const unsigned lead = span_lead(row);
      load_span<false>(s, row + j0, len);
      barrier<kCluster>();
      next = taker.next(grp, turn);
      if (threadIdx.x < len) {
        It it(g.mp, grp, j0 + threadIdx.x, kThreads);
        for (u32 t0 = threadIdx.x; t0 < len; t0 += U * kThreads) {
          E v[U];
#pragma unroll
          for (int u = 0; u < U; ++u)
            if (t0 + u * kThreads < len) {
              const u32 src = it.value(g.mp32);
              const u32 rank = part_rank(src, g.pinv);
              v[u] = shared_of<kCluster>(s, rank)[lead + (src - rank * g.part)];
              it.advance(g.mp32);
            }
#pragma unroll
          for (int u = 0; u < U; ++u)
            if (t0 + u * kThreads < len) row[j0 + t0 + u * kThreads] = v[u];
        }
      }
      barrier<kCluster>();
    } else {
      const u64 i0 = grp * g.group;
      const u32 rows = u32(min(u64(g.group), m - i0));
      E* base = d + i0 * n;
      load_span<true>(s, base, u64(rows) * n);
      const unsigned lead = span_lead(base);
      __syncthreads();
      next = taker.next(grp, turn);
      // tpr threads per row, each walking every tpr-th element of it.
      const unsigned lane = threadIdx.x & (g.tpr - 1), slots = kThreads >> g.tshift;
      if constexpr (kPacked) {
        constexpr u32 P = 16 / sizeof(E);
        const u32 k = g.mp32.k;  // c = 1: shuffle(i, j) = k (j - i) mod n, so a step of one column adds k
        for (u32 rr = threadIdx.x >> g.tshift; rr < rows; rr += slots) {
          E* row = base + u64(rr) * n;
          const E* srow = s + lead + rr * n;
          const u32 head = min(n, u32((16 - (reinterpret_cast<std::uintptr_t>(row) & 15)) & 15) / u32(sizeof(E)));
          const u32 words = (n - head) / P, tail = head + words * P;
          const u32 im = u32((i0 + rr) % n);
          for (u32 e = lane; e < head + (n - tail); e += g.tpr) {
            const u32 j = e < head ? e : tail + (e - head);
            row[j] = srow[u32(u64(k) * ((j + n - im) % n) % n)];
          }
          uint4* wrow = reinterpret_cast<uint4*>(row + head);
          if (lane < words) {
            It it(g.mp, i0 + rr, head + lane * P, u64(g.tpr) * P);
            for (u32 w = lane; w < words; w += g.tpr) {
              u32 x = it.value(g.mp32);
              union {
                uint4 q;
                E e[P];
              } pk;
#pragma unroll
              for (u32 t = 0; t < P; ++t) {
                pk.e[t] = srow[x];
                x += k;
                if (x >= n) x -= n;
              }
              wrow[w] = pk.q;
              it.advance(g.mp32);
            }
          }
        }
      } else {
        for (u32 rr = threadIdx.x >> g.tshift; rr < rows; rr += slots) {
          It it(g.mp, i0 + rr, lane, g.tpr);
          E* row = base + u64(rr) * n;
          const E* srow = s + lead + rr * n;
          for (u32 j0 = lane; j0 < n; j0 += U * g.tpr) {
            E v[U];
#pragma unroll
            for (int u = 0; u < U; ++u)
              if (j0 + u * g.tpr < n) {
                v[u] = srow[it.value(g.mp32)];
                it.advance(g.mp32);
              }
#pragma unroll
            for (int u = 0; u < U; ++u)
              if (j0 + u * g.tpr < n) row[j0 + u * g.tpr] = v[u];
          }
        }
      }
      __syncthreads();
    }
    grp = next;
  }
  taker.finish();
}

// The device-memory fallbacks: a batch already copied to `scratch` is
// gathered back into the matrix.
template <class E>
__global__ void __launch_bounds__(kThreads) row_gather(E* d, const E* scratch, rect::Maps mp, u64 i0, u64 rows,
                                                       u64 chunks) {
  const u64 n = mp.n, chunk = u64(kThreads) * 8;
  for (u64 u = blockIdx.x; u < rows * chunks; u += gridDim.x) {
    const u64 rr = u / chunks, q = u - rr * chunks;
    const u64 j_begin = q * chunk + threadIdx.x, j_end = min(n, (q + 1) * chunk);
    if (j_begin >= j_end) continue;
    rect::ShuffleIter it(mp, i0 + rr, j_begin, kThreads);
    for (u64 j = j_begin; j < j_end; j += kThreads, it.advance(mp))
      d[(i0 + rr) * n + j] = scratch[rr * n + it.value(mp)];
  }
}

template <class E, Band kMode>
__global__ void __launch_bounds__(kThreads) band_gather(E* d, const E* scratch, BandArgs g, u64 j0, u64 wb,
                                                        unsigned wt_shift, u64 row_chunk) {
  const u64 m = g.mp.m, n = g.mp.n, wt = u64(1) << wt_shift;
  const unsigned tj = threadIdx.x & unsigned(wt - 1), ti = threadIdx.x >> wt_shift, rstep = kThreads >> wt_shift;
  const u64 col_chunks = (wb + wt - 1) >> wt_shift, row_chunks = (m + row_chunk - 1) / row_chunk;
  for (u64 u = blockIdx.x; u < col_chunks * row_chunks; u += gridDim.x) {
    const u64 rc = u / col_chunks, cc = u - rc * col_chunks;
    const u64 jj = (cc << wt_shift) + tj;
    if (jj >= wb) continue;
    using Maps = BandMaps<kMode>;
    const u64 cj = Maps::shift(g, j0 + jj);
    const u64 r_begin = rc * row_chunk + ti, r_end = min(m, (rc + 1) * row_chunk);
    if (r_begin >= r_end) continue;
    auto it = Maps::rows(g, r_begin, rstep);
    for (u64 i = r_begin; i < r_end; i += rstep, it.advance(g.mp)) {
      u64 src = it.value(g.mp) + cj;
      if (src >= m) src -= m;
      d[i * n + j0 + jj] = scratch[src * wb + jj];
    }
  }
}

unsigned log2_of(u64 v) {
  unsigned s = 0;
  while ((u64(1) << (s + 1)) <= v) ++s;
  return s;
}
u64 pow2_at_least(u64 v) {
  u64 p = 1;
  while (p < v) p <<= 1;
  return p;
}

// The GPU, and the settings a launch takes (test-only overrides from the
// environment: tests/device/kernels_test.cu runs the paths a GPU without
// clusters takes, and times each step alone and other band widths).
struct Gpu {
  int sms = 1;
  bool clusters = false;
  u64 band_bytes = 0;  // the target width per row: 0 for each step's own (kBandBytes, kPermuteBandBytes)
  unsigned steps = ~0u;  // which steps run (kStep*): all but in a timing test
  bool pow2_parts = false;  // the permutation's parts as the rotation's (run 84's layout), for the timing test
  std::size_t lone_cap = 0;  // the most shared memory one block may take (one block an SM)
  bool row_clusters = false;  // rows past kCap always in clusters (run 120's rule), for the timing test
  bool general_rows = false;  // coprime sides walk rows by the general iterator too, for the timing test
  bool fixed_shares = false;  // clusters take fixed shares of a step's items, for the timing test
  bool pow2_row_parts = false; // a long row's parts powers of two (before run 139), for the timing test
  bool pow2_rotation = false;  // the rotation's parts powers of two at every size (before run 142), for the timing test
  int seg_rotation = -1;  // step 1 by row segments: -1 where the rule takes it, 0 never, 1 wherever it can run (tests)
  bool band_words = true;  // the permutation's 1- and 2-byte bands by word loads (load_band_words); off for the timing test
  bool packed_rows = true;  // the coprime row step writes whole 16-byte words (row_kernel's kPacked); off for the timing test
  bool checked_scatter = false;  // the permutation's every diagonal checked (BandArgs::checked), for the timing test
};

Gpu gpu_of_current() {
  int dev = 0;
  GT_CUDA_CHECK(cudaGetDevice(&dev));
  Gpu g;
  int major = 0;
  GT_CUDA_CHECK(cudaDeviceGetAttribute(&g.sms, cudaDevAttrMultiProcessorCount, dev));
  GT_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
  g.clusters = major >= 9;
  if (const char* e = std::getenv("GT_TEST_RECT_NO_CLUSTERS"); e && e[0] == '1') g.clusters = false;
  if (const char* e = std::getenv("GT_TEST_RECT_BAND_BYTES"); e && std::atoi(e) >= 8)
    g.band_bytes = u64(1) << log2_of(u64(std::atoi(e)));  // a power of two, as the bands' masks need
  if (const char* e = std::getenv("GT_TEST_RECT_STEPS"); e && *e) g.steps = unsigned(std::strtoul(e, nullptr, 0));
  if (const char* e = std::getenv("GT_TEST_RECT_POW2_PARTS"); e && e[0] == '1') g.pow2_parts = true;
  if (const char* e = std::getenv("GT_TEST_RECT_ROW_CLUSTERS"); e && e[0] == '1') g.row_clusters = true;
  if (const char* e = std::getenv("GT_TEST_RECT_GENERAL_ROWS"); e && e[0] == '1') g.general_rows = true;
  if (const char* e = std::getenv("GT_TEST_RECT_FIXED_SHARES"); e && e[0] == '1') g.fixed_shares = true;
  if (const char* e = std::getenv("GT_TEST_RECT_POW2_ROW_PARTS"); e && e[0] == '1') g.pow2_row_parts = true;
  if (const char* e = std::getenv("GT_TEST_RECT_POW2_ROTATION"); e && e[0] == '1') g.pow2_rotation = true;
  if (const char* e = std::getenv("GT_TEST_RECT_NO_SEGMENT_ROTATION"); e && e[0] == '1') g.seg_rotation = 0;
  if (const char* e = std::getenv("GT_TEST_RECT_SEGMENT_ROTATION"); e && e[0] == '1') g.seg_rotation = 1;
  if (const char* e = std::getenv("GT_TEST_RECT_ELEMENT_LOADS"); e && e[0] == '1') g.band_words = false;
  if (const char* e = std::getenv("GT_TEST_RECT_ELEMENT_ROWS"); e && e[0] == '1') g.packed_rows = false;
  if (const char* e = std::getenv("GT_TEST_RECT_CHECKED_SCATTER"); e && e[0] == '1') g.checked_scatter = true;
  int optin = 0;
  GT_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  g.lone_cap = std::size_t(std::max(0, optin));
  return g;
}

// Resident blocks of `kernel` with `smem` bytes, at least one.
template <class K>
unsigned resident_blocks(K kernel, std::size_t smem, const Gpu& gpu) {
  GT_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  int per_sm = 0;
  GT_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, int(kThreads), smem));
  return unsigned(std::max(1, per_sm) * gpu.sms);
}

// Launches `kernel` in clusters of `cl` blocks, as many clusters as fit at
// once (at most `units`). False when the GPU cannot co-schedule such a
// cluster (the caller then takes another path).
template <class K, class... Args>
bool launch_clusters(K kernel, unsigned cl, std::size_t smem, u64 units, cudaStream_t stream, Args... args) {
  // The kernel's code must have been built for sm_90 (clusters exist there).
  cudaFuncAttributes fa{};
  GT_CUDA_CHECK(cudaFuncGetAttributes(&fa, kernel));
  if (fa.ptxVersion < 90) return false;
  GT_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  if (cl > 8) GT_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  cudaLaunchConfig_t cfg{};
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = cl;
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  cfg.blockDim = dim3(kThreads);
  cfg.dynamicSmemBytes = smem;
  cfg.stream = stream;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  cfg.gridDim = dim3(cl);
  int active = 0;
  if (cudaOccupancyMaxActiveClusters(&active, kernel, &cfg) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  if (active < 1) return false;
  const u64 clusters = std::min<u64>(units, u64(active));
  cfg.gridDim = dim3(unsigned(clusters * cl));
  GT_CUDA_CHECK(cudaLaunchKernelEx(&cfg, kernel, args...));
  GT_CUDA_LAUNCHED("inplace-rect");
  return true;
}

// Scratch in device memory, on the stream, for the fallbacks.
class Scratch {
 public:
  Scratch(std::size_t bytes, cudaStream_t stream) : stream_(stream), bytes_(bytes) {
    const cudaError_t e = cudaMallocAsync(&p_, bytes, stream);
    if (e != cudaSuccess) {
      cudaGetLastError();
      throw Error(ErrorKind::cuda, "inplace-rect: no " + std::to_string(bytes) +
                                       " bytes of device memory for the scratch a row or column this long needs (" +
                                       cudaGetErrorString(e) + ")");
    }
  }
  ~Scratch() {
    if (p_ && cudaFreeAsync(p_, stream_) != cudaSuccess) cudaGetLastError();
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  void* get() const { return p_; }
  std::size_t bytes() const { return bytes_; }

 private:
  void* p_ = nullptr;
  cudaStream_t stream_;
  std::size_t bytes_;
};

// Allocated at the first fallback that needs it, freed (stream-ordered)
// when the launch returns.
struct LazyScratch {
  std::size_t bytes;
  cudaStream_t stream;
  std::unique_ptr<Scratch> held;
  Scratch& get() {
    if (!held) held = std::make_unique<Scratch>(bytes, stream);
    return *held;
  }
};

std::size_t scratch_bytes(u64 m, u64 n, std::size_t S) {
  const u64 bytes = m * n * S;
  return std::size_t(std::max<u64>(std::max(m, n) * S, std::min<u64>(bytes, kScratchMax)));
}

// The smallest cluster that holds a row of n elements (0 when none of up
// to 16 blocks does, or the GPU has no clusters), and each block's part:
// ceil(n / cl) rounded up to whole 16-byte words, so that every block's part
// starts at the same offset in its word (row_kernel's `lead`), and every
// block holds elements. Parts were powers of two until run 139 (clusters of
// 2, 4, 8 or 16, with blocks left idle: f64 rows of 40009 took 8 blocks of
// 8192, 5 of them holding elements); GT_TEST_RECT_POW2_ROW_PARTS=1 keeps
// that for the timing test. A row on chip has n <= 16 * kCap / S < 2^21
// elements and a part at most kCap / S < 2^17, so src * part < 2^40 and
// part_rank is src / part exactly (RowArgs::pinv).
unsigned row_cluster(u64 n, std::size_t S, const Gpu& gpu, u64* part) {
  if (!gpu.clusters) return 0;
  const u64 word = std::max<u64>(1, 16 / S);
  for (unsigned cl = 2; cl <= kMaxCluster; cl = gpu.pow2_row_parts ? cl * 2 : cl + 1) {
    *part = gpu.pow2_row_parts ? pow2_at_least((n + cl - 1) / cl) : ((n + cl - 1) / cl + word - 1) / word * word;
    if (*part * S <= kCap) return cl;
  }
  return 0;
}

// Whether the row step goes through device memory: rows longer than a
// block holds, and than a cluster of up to 16 (or no clusters).
// Whether a row longer than kCap goes to one block of up to gpu.lone_cap
// bytes (one block an SM) rather than a cluster.
bool row_lone_block(u64 n, std::size_t S, const Gpu& gpu) {
  return n * S > kCap && !gpu.row_clusters && span_bytes(n, S) <= gpu.lone_cap;
}

bool rows_need_scratch(u64 n, std::size_t S, const Gpu& gpu) {
  u64 part = 0;
  return n * S > kCap && !row_lone_block(n, S, gpu) && row_cluster(n, S, gpu, &part) == 0;
}

template <class E, class It>
void row_step_with(E* d, const rect::Maps& mp, const Gpu& gpu, cudaStream_t stream, LazyScratch& scratch,
                   unsigned long long* counter) {
  constexpr std::size_t S = sizeof(E);
  const u64 m = mp.m, n = mp.n, row_bytes = n * S;
  // Rows that two blocks an SM hold go several to a block; a longer one
  // that one block an SM holds goes alone to a block; longer ones to
  // clusters. Run 125, row step, % of a copy, clusters -> one block: f64
  // 13001x20651 (rows of 165 KB, clusters of 4, each block gathering from
  // the others' shared memory) 26.5 -> 88.5, c128 13001x10325 41.8 -> 91.0,
  // f32 6007x40009 17.5 -> 97.9, f16 13001x60001 19.4 -> 59.4, u8
  // 5003x150001 5.3 -> 45.2.
  if (row_bytes <= kCap || row_lone_block(n, S, gpu)) {
    RowArgs g{mp, rect::narrow(mp), 0, 0, u32(n), 0};
    // Each thread walks at least 32 elements of a row: its iterator's set-up
    // (a few divisions) is then a small part of its work.
    g.tshift = log2_of(std::clamp<u64>(n / 32, 1, kThreads));
    g.tpr = 1u << g.tshift;
    // Enough groups for every resident block where the matrix allows.
    const unsigned blocks_est = 2 * unsigned(gpu.sms);
    g.group = u32(std::max<u64>(1, std::min<u64>(kCap / row_bytes, (m + blocks_est - 1) / blocks_est)));
    g.ngroups = (m + g.group - 1) / g.group;
    const std::size_t smem = span_bytes(g.group * n, S);
    constexpr bool kPack = std::is_same_v<It, rect::CoprimeShuffleIterT<u32>> && sizeof(E) <= 4;
    auto kernel = kPack && gpu.packed_rows ? row_kernel<E, false, It, kPack> : row_kernel<E, false, It, false>;
    const unsigned blocks = unsigned(std::min<u64>(g.ngroups, resident_blocks(kernel, smem, gpu)));
    kernel<<<blocks, kThreads, smem, stream>>>(d, g);
    GT_CUDA_LAUNCHED("inplace-rect");
    return;
  }
  u64 part = 0;
  if (const unsigned cl = row_cluster(n, S, gpu, &part)) {
    RowArgs g{mp, rect::narrow(mp), 1, m, u32(part), part_inverse(part)};
    g.counter = counter;
    if (launch_clusters(row_kernel<E, true, It, false>, cl, span_bytes(part, S), m, stream, d, g)) return;
  }
  // Rows longer than a cluster holds: batches of rows through device memory.
  const u64 per = std::max<u64>(1, scratch.get().bytes() / row_bytes);
  E* sc = static_cast<E*>(scratch.get().get());
  const u64 chunks = (n + kThreads * 8 - 1) / (kThreads * 8);
  for (u64 i0 = 0; i0 < m; i0 += per) {
    const u64 rows = std::min(per, m - i0);
    GT_CUDA_CHECK(cudaMemcpyAsync(sc, d + i0 * n, rows * row_bytes, cudaMemcpyDeviceToDevice, stream));
    row_gather<E><<<grid_1d(std::min<u64>(rows * chunks, u64(gpu.sms) * 4)), kThreads, 0, stream>>>(d, sc, mp, i0,
                                                                                                     rows, chunks);
    GT_CUDA_LAUNCHED("inplace-rect");
  }
}

// Step 2: coprime sides (c = 1) walk their rows by rect::CoprimeShuffleIterT
// (run 126, row step, % of a copy, general -> coprime walk: u8 13001x20651
// 27.4 -> 43.4, f16 50.6 -> 71.8, f32 81.6 -> 86.6, f32 16383x16385 75.7 ->
// 85.2, u8 5003x150001 38.9 -> 52.9; 8 and 16 bytes unchanged).
template <class E>
void row_step(E* d, const rect::Maps& mp, const Gpu& gpu, cudaStream_t stream, LazyScratch& scratch,
              unsigned long long* counter) {
  if (mp.c == 1 && !gpu.general_rows)
    row_step_with<E, rect::CoprimeShuffleIterT<u32>>(d, mp, gpu, stream, scratch, counter);
  else
    row_step_with<E, rect::ShuffleIterT<u32>>(d, mp, gpu, stream, scratch, counter);
}

// How a band step runs on chip: one block per band of `width` columns, or
// clusters of `cluster` blocks of `part` rows each; width 0 when neither
// holds a band.
struct BandPlan {
  u64 width = 0;
  unsigned cluster = 1;
  u64 part = 0;
  std::size_t smem = 0;  // a block's shared memory
  u64 pad = 0;           // elements past W a band row takes in shared memory (16 / S for word loads)
};

// A block's shared memory for `rows` rows of a band `w` wide: the band, and
// for the permutation its run of the table (rows + w - 1 entries, after the
// band rounded up to 16 bytes; band_table).
std::size_t band_smem(Band mode, u64 rows, u64 w, std::size_t S, u64 pad = 0) {
  const u64 band = rows * (w + pad) * S;
  if (mode == Band::rotate) return std::size_t(band);
  return std::size_t(((band + 15) & ~u64(15)) + (rows + w - 1) * sizeof(std::uint32_t));
}

// The rotation's blocks read their neighbours' rows by rank and offset (the
// rank by a multiply, as the row step's), so its parts may be of any size:
// ceil(m / cluster) rows, in the smallest cluster that holds them, except
// for 8-byte elements, which keep power-of-two parts. Runs 140-142, the
// rotation step alone, % of a copy, same process, power-of-two parts ->
// even parts in the smallest cluster: f32 12345x6789 48.3 -> 53.9, 13000x20650
// 50.0 -> 54.4, 6000x4002 53.0 -> 58.4; f16 12345x6789 38.8 -> 49.9,
// 15000x10002 38.8 -> 40.4; u8 12345x6789 21.5 -> 26.9; c128 6000x4002 65.1
// -> 73.7, 4002x6000 74.4 -> 74.6; but f64 6500x10325 68.8 -> 62.3 (even
// parts in the power-of-two rule's cluster 66.9), 13000x20650 56.4 -> 55.2
// (53.1), 12345x6789 54.4 -> 55.1 (52.8). The permutation's blocks
// read only their own: ceil(m / cluster) rows each, so a cluster holds no
// idle block (run 84's 13001-row bands in clusters of 16 x 1024 rows left 3
// blocks of 16 without rows) and a band fits a smaller cluster or a wider
// band.
BandPlan plan_band_for(Band mode, u64 m, u64 n, std::size_t S, const Gpu& gpu, u64 target, u64 pad = 0) {
  const u64 wn = pow2_at_least(n);
  const auto fits = [&](u64 rows, u64 w) { return band_smem(mode, rows, w, S, pad) <= kCap; };
  const auto lone = [&](u64 w) { return BandPlan{w, 1, m, band_smem(mode, m, w, S, pad), pad}; };
  // One block per band where a band of the target width fits: the widest
  // power-of-two band it holds, no wider than the matrix (rounded up) or the block.
  if (fits(m, 1)) {
    u64 w = std::min<u64>(u64(kThreads), wn);
    while (w > 1 && !fits(m, w)) w /= 2;
    if (w * S >= target || w >= n || !gpu.clusters) return lone(w);
  }
  // Else the widest band, from the target down to 8 bytes, that one block or
  // a cluster of up to 16 holds: wide bands read and write whole DRAM bursts
  // of each row (neighbouring bands, taken by neighbouring clusters at about
  // the same time, share what is left in L2).
  for (u64 wb = target; wb >= 8; wb /= 2) {
    const u64 w = std::min<u64>({std::max<u64>(1, wb / S), wn, u64(kThreads)});
    if (fits(m, w)) return lone(w);
    if (gpu.clusters)
      for (unsigned cl = 2; cl <= kMaxCluster; cl *= 2) {
        const u64 even = (m + cl - 1) / cl, pow2 = pow2_at_least(even);
        // The rotation's parts: even, but powers of two for 8-byte elements (above).
        const bool pow2_parts = mode == Band::rotate ? S == 8 || gpu.pow2_rotation : gpu.pow2_parts;
        const u64 part = pow2_parts ? pow2 : even;
        if (fits(part, w)) return {w, cl, part, band_smem(mode, part, w, S, pad), pad};
      }
    if (w == 1) break;
  }
  if (fits(m, 1)) return lone(1);
  return {};  // through device memory
}

// 8-byte elements whose permutation takes a cluster at 128 bytes take
// 256-byte bands where a cluster of up to 16 holds them (rows up to about
// 7000): runs 137-138, column step, % of a copy, 128 -> 256 bytes, two
// processes each: f64 5003x40009 62.4-63.3 -> 73.4-73.6, 6500x10325
// 71.7-73.3 -> 83.5-84.0, 3001x20011 69.0-69.2 -> 85.8-86.0 (whole 41.5 ->
// 46.8), 7001x9001 64.0-64.2 -> 71.6-71.7, 4001x30011 unchanged. (4-, 2- and
// 1-byte elements lost 0-6 points at 256; 16-byte ones gained at c128
// 6500x5163, 76.3 -> 83.7, and lost at 4001x30011, 74.4 -> 71.3: they keep
// 128.)
constexpr u64 kPermuteBandBytes8 = 256;

BandPlan plan_band(Band mode, u64 m, u64 n, std::size_t S, const Gpu& gpu) {
  const u64 target = gpu.band_bytes      ? gpu.band_bytes
                     : mode == Band::rotate ? kBandBytes
                     : S == 1               ? kPermuteBandBytes1
                                            : kPermuteBandBytes;

  // 1- and 2-byte elements: 64-byte bands loaded as words where they fit
  // (load_band_words; each band row then takes 16 bytes more).
  if (mode == Band::permute && S <= 2 && gpu.band_words && !gpu.band_bytes && n * S >= kWideBandBytes) {
    const BandPlan words = plan_band_for(mode, m, n, S, gpu, kWideBandBytes, 16 / S);
    if (words.width * S == kWideBandBytes) return words;
  }
  const BandPlan bp = plan_band_for(mode, m, n, S, gpu, target);
  if (mode == Band::permute && S == 8 && !gpu.band_bytes && bp.cluster > 1) {
    const BandPlan wide = plan_band_for(mode, m, n, S, gpu, kPermuteBandBytes8);
    if (wide.width * S == kPermuteBandBytes8) return wide;
  }
  return bp;
}

// A band step over the matrix: step 1 (rotation) or 3 (permutation, with
// `rinv`, R's inverse, for its scatter form on chip).
template <class E, Band kMode>
void band_step(E* d, const rect::Maps& mp, const Gpu& gpu, cudaStream_t stream, LazyScratch& scratch,
               const std::uint32_t* rinv, unsigned long long* counter) {
  constexpr std::size_t S = sizeof(E);
  const u64 m = mp.m, n = mp.n;
  const BandPlan bp = plan_band(kMode, m, n, S, gpu);
  // On chip (width > 0) m < 16 * kCap: every BandArgs field is exact.
  BandArgs g{mp, rect::narrow(mp), u32(bp.width), log2_of(bp.width), u32(bp.part),
             part_inverse(bp.part), (n + bp.width - 1) / std::max<u64>(1, bp.width)};
  g.stride = u32(bp.width + bp.pad);
  g.checked = gpu.checked_scatter;
  const std::size_t smem = bp.smem;
  const auto on_chip = [&](auto lone, auto clustered, auto... args) {
    if (bp.cluster == 1) {
      const unsigned blocks = unsigned(std::min<u64>(g.nbands, resident_blocks(lone, smem, gpu)));
      lone<<<blocks, kThreads, smem, stream>>>(d, g, args...);
      GT_CUDA_LAUNCHED("inplace-rect");
      return true;
    }
    BandArgs gc = g;
    gc.counter = counter;
    return launch_clusters(clustered, bp.cluster, smem, g.nbands, stream, d, gc, args...);
  };
  if (bp.width) {
    if constexpr (kMode == Band::permute) {
      // Word loads exist for 1- and 2-byte elements only (plan_band pads no other).
      constexpr bool kWords = sizeof(E) <= 2;
      if (bp.pad && kWords ? on_chip(scatter_kernel<E, false, kWords>, scatter_kernel<E, true, kWords>, rinv)
                           : on_chip(scatter_kernel<E, false, false>, scatter_kernel<E, true, false>, rinv))
        return;
    } else {
      if (on_chip(rotate_kernel<E, false>, rotate_kernel<E, true>)) return;
    }
  }
  // Columns longer than a cluster holds (or clusters the GPU will not
  // co-schedule): batches of bands through device memory.
  const u64 wb_max = std::max<u64>(1, scratch.get().bytes() / (m * S));
  E* sc = static_cast<E*>(scratch.get().get());
  for (u64 j0 = 0; j0 < n; j0 += wb_max) {
    const u64 wb = std::min(wb_max, n - j0);
    GT_CUDA_CHECK(cudaMemcpy2DAsync(sc, wb * S, d + j0, n * S, wb * S, m, cudaMemcpyDeviceToDevice, stream));
    const unsigned wt_shift = log2_of(std::min<u64>(u64(kThreads), wb));
    const u64 row_chunk = 4096;
    const u64 units = ((wb + (u64(1) << wt_shift) - 1) >> wt_shift) * ((m + row_chunk - 1) / row_chunk);
    band_gather<E, kMode><<<grid_1d(std::min<u64>(units, u64(gpu.sms) * 4)), kThreads, 0, stream>>>(d, sc, g, j0, wb,
                                                                                                   wt_shift, row_chunk);
    GT_CUDA_LAUNCHED("inplace-rect");
  }
}

u64 seg_chunk_rows(u64 c) { return std::max<u64>(kSegChunkRows, 8 * c); }

// Whether step 1 goes by row segments (segment_rotate_kernel): groups of
// at least kSegMinGroupBytes a row, at most kSegMaxGroups of them; 0 bytes
// of halo scratch when not.
std::size_t segment_rotation_bytes(const rect::Maps& mp, std::size_t S, const Gpu& gpu) {
  if (mp.c <= 1 || mp.c > kSegMaxGroups || gpu.seg_rotation == 0) return 0;
  if (gpu.seg_rotation < 0 && mp.b * S < kSegMinGroupBytes) return 0;
  const u64 chunks = std::max<u64>(1, mp.m / seg_chunk_rows(mp.c));
  const u64 bytes = mp.c * (mp.c - 1) / 2 * chunks * mp.b * S;
  return bytes <= kScratchMax ? std::size_t(bytes) : 0;
}

template <class E>
void segment_rotation(E* d, const rect::Maps& mp, Scratch& halo, const Gpu& gpu, cudaStream_t stream) {
  SegRotation r;
  r.m = mp.m;
  r.n = mp.n;
  r.b = mp.b;
  r.c = mp.c;
  r.rows = seg_chunk_rows(mp.c);
  r.chunks = std::max<u64>(1, mp.m / r.rows);
  const u64 items = (r.c - 1) * r.chunks * seg_tiles<1>(r);  // the halos' (and the rotation's at most)
  const unsigned blocks = unsigned(std::min<u64>(items, u64(gpu.sms) * 8));
  E* h = static_cast<E*>(halo.get());
  halo_kernel<E><<<blocks, kSegThreads, 0, stream>>>(d, h, r);
  GT_CUDA_LAUNCHED("inplace-rect");
  segment_rotate_kernel<E, unroll_of<sizeof(E)>(), kSegColumns><<<blocks, kSegThreads, 0, stream>>>(d, h, r);
  GT_CUDA_LAUNCHED("inplace-rect");
}

// The counters of the steps' clusters (Taker), zeroed on the stream: one
// per step (rotation, rows, permutation). None without clusters, or for the
// timing test's fixed shares.
constexpr int kCounterRotate = 0, kCounterRows = 1, kCounterPermute = 2;
std::unique_ptr<Scratch> make_counters(const Gpu& gpu, cudaStream_t stream) {
  if (!gpu.clusters || gpu.fixed_shares) return nullptr;
  auto c = std::make_unique<Scratch>(3 * sizeof(unsigned long long), stream);
  GT_CUDA_CHECK(cudaMemsetAsync(c->get(), 0, c->bytes(), stream));
  return c;
}

// R's inverse for the permutation's scatter form, where that runs on chip,
// in device memory of its own made before the first kernel (a failed
// allocation leaves the matrix as it was). 32 bits a row: a band on chip
// holds at most 16 * kCap rows.
std::unique_ptr<Scratch> make_rinv(const rect::Maps& mp, std::size_t S, const Gpu& gpu, cudaStream_t stream) {
  if (!(gpu.steps & kStepColumns) || plan_band(Band::permute, mp.m, mp.n, S, gpu).width == 0) return nullptr;
  auto rinv = std::make_unique<Scratch>(std::size_t(mp.m * sizeof(std::uint32_t)), stream);
  const u64 blocks = std::min<u64>((mp.m + kThreads - 1) / kThreads, u64(gpu.sms) * 4);
  rinv_kernel<<<unsigned(blocks), kThreads, 0, stream>>>(static_cast<std::uint32_t*>(rinv->get()), mp);
  GT_CUDA_LAUNCHED("inplace-rect");
  return rinv;
}

// The blocked route (m = a c, n = b c): each c x c block transposed where it
// lies by inplace-tiled, then one pass that moves the blocks' rows (segments
// of c elements, rect::segment_source's permutation) to their places by following
// the permutation's cycles: every move copies a whole segment, contiguous on
// both sides. Two passes instead of the decomposition's three; taken where c
// >= kBlockedMinSide, for at most kBlockedMaxBlocks blocks (one launch each)
// and kBlockedMaxSegments segments (the cycle plan's positions, 4 bytes each).
constexpr u64 kBlockedMinSide = 256;
constexpr u64 kBlockedMaxBlocks = 64;
constexpr u64 kBlockedMaxSegments = u64(1) << 24;

bool blocked_route(const rect::Maps& mp) {
  return mp.c >= kBlockedMinSide && mp.a * mp.b <= kBlockedMaxBlocks && mp.a * mp.b * mp.c <= kBlockedMaxSegments;
}

// A run of moves along one cycle: positions pos[begin .. begin + len), each
// taking the segment at the next position; the last takes the segment the
// run saved from its start (own_slot < 0: a whole cycle, kept in registers)
// or the one saved in scratch slot `next_slot` from the next run's start.
struct CycleRun {
  std::uint32_t begin, len;
  std::int32_t own_slot, next_slot;
};

// The cycles of one segment permutation, on the device, kept per GPU for
// the next launch of the same shape.
struct CyclePlan {
  int device = -1;
  u64 a = 0, b = 0, c = 0, seg_bytes = 0;
  u64 runs = 0, slots = 0;
  std::uint32_t* pos = nullptr;  // device memory
  CycleRun* run = nullptr;       // device memory
};

// Runs no longer than this close their own cycle; longer cycles are cut into
// runs of this length, each saving its first segment in scratch first.
// Bounds: scratch at most kScratchMax (slots <= 2 * segments / runlen), and
// enough runs for the GPU.
u64 run_length(u64 segments, u64 seg_bytes) {
  const u64 by_scratch = (2 * segments * seg_bytes + kScratchMax - 1) / kScratchMax;
  return std::max<u64>({by_scratch, (segments + 1023) / 1024, 4});
}

using PlanPtr = std::shared_ptr<const CyclePlan>;

PlanPtr make_cycle_plan(int device, u64 a, u64 b, u64 c, u64 seg_bytes) {
  const rect::SegMap sm{a, b, c};
  const u64 n = a * b * c, lmax = run_length(n, seg_bytes);
  std::vector<std::uint32_t> pos;
  std::vector<CycleRun> runs;
  pos.reserve(std::size_t(n));
  std::vector<bool> seen(std::size_t(n), false);
  std::int32_t slots = 0;
  for (u64 x0 = 0; x0 < n; ++x0) {
    if (seen[x0]) continue;
    const std::uint32_t begin = std::uint32_t(pos.size());
    u64 x = x0;
    do {
      seen[x] = true;
      pos.push_back(std::uint32_t(x));
      x = rect::segment_source(sm, x);
    } while (x != x0);
    const std::uint32_t len = std::uint32_t(pos.size()) - begin;
    if (len == 1) {
      pos.pop_back();  // a segment already in place
      continue;
    }
    if (len <= lmax) {
      runs.push_back({begin, len, -1, -1});
      continue;
    }
    const std::int32_t first = slots;
    for (std::uint32_t k = 0; k < len; k += std::uint32_t(lmax)) {
      const std::uint32_t l = std::min<std::uint32_t>(std::uint32_t(lmax), len - k);
      const std::int32_t own = slots++;
      runs.push_back({begin + k, l, own, k + l < len ? own + 1 : first});
    }
  }
  // Freed when the last holder lets go, once its GPU has finished what was
  // queued (a launch returns before its kernels end).
  std::shared_ptr<CyclePlan> p(new CyclePlan{device, a, b, c, seg_bytes, runs.size(), u64(slots)}, [](CyclePlan* q) {
    int prev = 0;
    if (cudaGetDevice(&prev) == cudaSuccess && cudaSetDevice(q->device) == cudaSuccess) {
      cudaDeviceSynchronize();
      cudaFree(q->pos);
      cudaFree(q->run);
      cudaSetDevice(prev);
    }
    cudaGetLastError();
    delete q;
  });
  GT_CUDA_CHECK(cudaMalloc(&p->pos, std::max<std::size_t>(1, pos.size()) * sizeof(std::uint32_t)));
  GT_CUDA_CHECK(cudaMalloc(&p->run, std::max<std::size_t>(1, runs.size()) * sizeof(CycleRun)));
  GT_CUDA_CHECK(cudaMemcpy(p->pos, pos.data(), pos.size() * sizeof(std::uint32_t), cudaMemcpyHostToDevice));
  GT_CUDA_CHECK(cudaMemcpy(p->run, runs.data(), runs.size() * sizeof(CycleRun), cudaMemcpyHostToDevice));
  return p;
}

// The plan for this GPU and shape, made once: the bench and a program that
// transposes many arrays of one shape find it ready. At most kPlans are
// kept; a launch holds its plan while it queues its kernels, so another
// thread's launch may evict it meanwhile. The cache is never destroyed: no
// CUDA call runs at exit.
PlanPtr cycle_plan(u64 a, u64 b, u64 c, u64 seg_bytes) {
  constexpr std::size_t kPlans = 8;
  static std::mutex& mu = *new std::mutex;
  static std::vector<PlanPtr>& plans = *new std::vector<PlanPtr>;
  int device = 0;
  GT_CUDA_CHECK(cudaGetDevice(&device));
  PlanPtr evicted;  // let go after the lock: its deleter waits for the GPU
  std::lock_guard<std::mutex> lock(mu);
  for (const PlanPtr& p : plans)
    if (p->device == device && p->a == a && p->b == b && p->c == c && p->seg_bytes == seg_bytes) return p;
  if (plans.size() == kPlans) {
    evicted = std::move(plans.front());
    plans.erase(plans.begin());
  }
  plans.push_back(make_cycle_plan(device, a, b, c, seg_bytes));
  return plans.back();
}

// Work items are (run, slice of `lanes` words of its segments); a block
// takes kThreads / lanes items at once, so short segments still fill it.
struct CycleGrid {
  u64 seg_words, lanes, slices, items;
  unsigned lane_shift;
};

// Saves the first segment of every run that has a slot.
template <class W>
__global__ void __launch_bounds__(kThreads) cycle_save(const W* d, W* scratch, const std::uint32_t* pos,
                                                       const CycleRun* runs, CycleGrid cg) {
  const u64 per_block = kThreads >> cg.lane_shift;
  for (u64 base = u64(blockIdx.x) * per_block; base < cg.items; base += u64(gridDim.x) * per_block) {
    const u64 item = base + (threadIdx.x >> cg.lane_shift);
    if (item >= cg.items) continue;
    const CycleRun r = runs[item / cg.slices];
    const u64 w = (item % cg.slices) * cg.lanes + (threadIdx.x & (cg.lanes - 1));
    if (r.own_slot < 0 || w >= cg.seg_words) continue;
    scratch[u64(r.own_slot) * cg.seg_words + w] = d[u64(pos[r.begin]) * cg.seg_words + w];
  }
}

// Each thread moves one word of every segment along its run, U loads ahead
// (the positions are distinct, and each is read before it is written).
template <class W>
__global__ void __launch_bounds__(kThreads) cycle_move(W* d, const W* scratch, const std::uint32_t* pos,
                                                       const CycleRun* runs, CycleGrid cg) {
  constexpr int U = 8;
  const u64 per_block = kThreads >> cg.lane_shift, seg_words = cg.seg_words;
  for (u64 base = u64(blockIdx.x) * per_block; base < cg.items; base += u64(gridDim.x) * per_block) {
    const u64 item = base + (threadIdx.x >> cg.lane_shift);
    if (item >= cg.items) continue;
    const CycleRun r = runs[item / cg.slices];
    const u64 w = (item % cg.slices) * cg.lanes + (threadIdx.x & (cg.lanes - 1));
    if (w >= seg_words) continue;
    const std::uint32_t* p = pos + r.begin;
    const W first = r.own_slot < 0 ? d[u64(p[0]) * seg_words + w] : W{};
    for (std::uint32_t k0 = 0; k0 < r.len; k0 += U) {
      W v[U];
#pragma unroll
      for (int k = 0; k < U; ++k) {
        const std::uint32_t kk = k0 + k;
        if (kk + 1 < r.len)
          v[k] = d[u64(p[kk + 1]) * seg_words + w];
        else if (kk + 1 == r.len)
          v[k] = r.own_slot < 0 ? first : scratch[u64(r.next_slot) * seg_words + w];
      }
#pragma unroll
      for (int k = 0; k < U; ++k)
        if (k0 + k < r.len) d[u64(p[k0 + k]) * seg_words + w] = v[k];
    }
  }
}

template <class W>
void cycle_pass(void* data, u64 seg_bytes, const CyclePlan& plan, void* slots, const Gpu& gpu,
                cudaStream_t stream) {
  if (!plan.runs) return;
  CycleGrid cg;
  cg.seg_words = seg_bytes / sizeof(W);
  cg.lanes = std::min<u64>(kThreads, pow2_at_least(cg.seg_words));
  cg.lane_shift = log2_of(cg.lanes);
  cg.slices = (cg.seg_words + cg.lanes - 1) / cg.lanes;
  cg.items = plan.runs * cg.slices;
  const u64 blocks = (cg.items + (kThreads / cg.lanes) - 1) / (kThreads / cg.lanes);
  const unsigned grid = unsigned(std::min<u64>(blocks, u64(gpu.sms) * 4));
  W* d = static_cast<W*>(data);
  W* sc = static_cast<W*>(slots);
  if (plan.slots) {
    cycle_save<W><<<grid, kThreads, 0, stream>>>(d, sc, plan.pos, plan.run, cg);
    GT_CUDA_LAUNCHED("inplace-rect");
  }
  cycle_move<W><<<grid, kThreads, 0, stream>>>(d, sc, plan.pos, plan.run, cg);
  GT_CUDA_LAUNCHED("inplace-rect");
}

template <class E>
void blocked_steps(E* d, const rect::Maps& mp, const Gpu& gpu, cudaStream_t stream) {
  constexpr std::size_t S = sizeof(E);
  const u64 c = mp.c, n = mp.n, seg_bytes = c * S;
  const PlanPtr held = cycle_plan(mp.a, mp.b, c, seg_bytes);
  const CyclePlan& plan = *held;
  // The cut cycles' scratch before any kernel: a failed allocation then
  // leaves the matrix as it was, not half transposed.
  std::unique_ptr<Scratch> slots;
  if (plan.slots && (gpu.steps & kStepCycles)) slots = std::make_unique<Scratch>(std::size_t(plan.slots * seg_bytes), stream);
  void* sc = slots ? slots->get() : nullptr;
  const KernelInfo tiled = inplace_tiled_info();
  if (gpu.steps & kStepBlocks)
    for (u64 I = 0; I < mp.a; ++I)
      for (u64 q = 0; q < mp.b; ++q) tiled.launch(d + I * c * n + q * c, nullptr, Problem{c, c, S, n, 0}, stream);
  if (!(gpu.steps & kStepCycles)) return;
  // Whole 16-byte words where every segment starts on one (cudaMalloc'd
  // arrays, segments of a multiple of 16 bytes), else elements.
  if (seg_bytes % 16 == 0 && reinterpret_cast<std::uintptr_t>(d) % 16 == 0)
    cycle_pass<uint4>(d, seg_bytes, plan, sc, gpu, stream);
  else
    cycle_pass<E>(d, seg_bytes, plan, sc, gpu, stream);
}

bool inplace_rect_supports(const Problem& p, std::string* why) {
  Limits lim{Kind::inplace, false, false, 1024};
  lim.rectangles = true;
  return check_problem("inplace-rect", p, lim, why);
}

void launch_inplace_rect(const void* in, void*, const Problem& p, cudaStream_t stream) {
  require(inplace_rect_info(), in, nullptr, p);
  if (p.rows == p.cols) return inplace_tiled_info().launch(in, nullptr, p, stream);
  const u64 m = p.rows, n = p.cols;
  if (m <= 1 || n <= 1) return;  // a row or a column is its own transpose in memory
  const rect::Maps mp = rect::make_maps(m, n);
  const Gpu gpu = gpu_of_current();
  with_elem_size(p.elem_size, [&](auto sz) {
    constexpr std::size_t S = decltype(sz)::value;
    using E = carrier_t<S>;
    E* d = static_cast<E*>(const_cast<void*>(in));
    LazyScratch scratch{scratch_bytes(m, n, S), stream};
    if (blocked_route(mp)) return blocked_steps(d, mp, gpu, stream);
    // A step that will go through device memory gets its scratch before the
    // first kernel: a failed allocation then leaves the matrix as it was.
    // (A GPU that refuses to co-schedule a planned cluster still allocates
    // mid-way: launch_clusters finds out only at the launch.)
    const std::size_t seg_bytes = (gpu.steps & kStepRotate) ? segment_rotation_bytes(mp, S, gpu) : 0;
    if (rows_need_scratch(n, S, gpu) ||
        (mp.c > 1 && !seg_bytes && plan_band(Band::rotate, m, n, S, gpu).width == 0) ||
        plan_band(Band::permute, m, n, S, gpu).width == 0)
      (void)scratch.get();
    const std::unique_ptr<Scratch> halo = seg_bytes ? std::make_unique<Scratch>(seg_bytes, stream) : nullptr;
    const std::unique_ptr<Scratch> rinv = make_rinv(mp, S, gpu, stream);
    const std::unique_ptr<Scratch> counters = make_counters(gpu, stream);
    const auto counter = [&](int k) {
      return counters ? static_cast<unsigned long long*>(counters->get()) + k : nullptr;
    };
    if (halo)
      segment_rotation(d, mp, *halo, gpu, stream);
    else if (mp.c > 1 && (gpu.steps & kStepRotate))
      band_step<E, Band::rotate>(d, mp, gpu, stream, scratch, nullptr, counter(kCounterRotate));
    if (gpu.steps & kStepRows) row_step(d, mp, gpu, stream, scratch, counter(kCounterRows));
    if (gpu.steps & kStepColumns)
      band_step<E, Band::permute>(d, mp, gpu, stream, scratch,
                                  rinv ? static_cast<const std::uint32_t*>(rinv->get()) : nullptr,
                                  counter(kCounterPermute));
  });
}

}  // namespace

}  // namespace gt::kernels::detail

namespace gt::kernels {

std::uint64_t inplace_rect_device_bytes(std::uint64_t rows, std::uint64_t cols, std::size_t elem_size) {
  // The decomposition: its scratch, the rotation's halo (at most
  // kScratchMax) and the row map's inverse (4 bytes a row; the counters'
  // bytes round into it). The blocked route: its cycles' slots (at most
  // kScratchMax, within scratch_bytes for any matrix of 64 MiB or more) and
  // the shape's kept plan (4 bytes a segment, at most 2^24 of them).
  return detail::scratch_bytes(rows, cols, elem_size) + detail::kScratchMax + 4 * std::max(rows, cols) + 64;
}

}  // namespace gt::kernels

namespace gt::kernels::detail {

KernelInfo inplace_rect_info() {
  return {"inplace-rect",
          "any shape, in place (packed rows): gcd >= 256, its gcd x gcd blocks by inplace-tiled, then their rows by "
          "cycles; else column rotation (by row segments where its groups are wide), row shuffle and column "
          "permutation (Catanzaro et al.) on chip; squares go to inplace-tiled",
          Kind::inplace, inplace_rect_supports, launch_inplace_rect, false};
}

}  // namespace gt::kernels::detail
