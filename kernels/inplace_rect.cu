// `inplace-rect`: any m x n matrix (packed rows) becomes its n x m transpose
// in the same device memory, by the three steps of gtranspose/rect_maps.hpp
// (a column rotation when gcd(m, n) > 1, a shuffle inside each row, a
// permutation of each column). Every step reads the matrix once and writes
// it once; what a step gathers from waits in on-chip memory:
//   - a row step holds whole rows in one block's shared memory (several short
//     rows per block), or one long row spread over a cluster of up to 16
//     blocks (distributed shared memory, sm_90);
//   - a column step holds a band of W columns (W elements of 32 bytes or
//     more where it fits) of every row, in one block or spread over a cluster.
// Where neither fits (a row or a column longer than 16 blocks' shared memory
// can hold, or a GPU without clusters), the step goes through device memory
// instead: batches of rows or bands copied to a scratch buffer and gathered
// back, each step then costing two passes. Scratch is allocated on the
// caller's stream (cudaMallocAsync) only then: max(m, n) elements at least,
// up to 64 MiB. A square matrix goes to `inplace-tiled`.
#include <cooperative_groups.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <string>

#include "detail/common.cuh"
#include "detail/families.hpp"
#include "gtranspose/rect_maps.hpp"

namespace gt::kernels::detail {
namespace {

namespace cg = cooperative_groups;
using u64 = std::uint64_t;

constexpr unsigned kThreads = 512;
// Shared memory per block: two blocks (1024 threads) fit an SM of 228 KiB.
constexpr std::size_t kCap = 112 * 1024;
constexpr unsigned kMaxCluster = 16;
constexpr std::size_t kSectorBytes = 32;
constexpr std::size_t kScratchMax = 64ull << 20;

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define GT_RECT_CLUSTERS 1
#else
#define GT_RECT_CLUSTERS 0
#endif

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

// Block `rank`'s shared buffer, seen from this block.
template <bool kCluster, class E>
__device__ __forceinline__ E* shared_of(E* mine, unsigned rank) {
#if GT_RECT_CLUSTERS
  if constexpr (kCluster) return cg::this_cluster().map_shared_rank(mine, rank);
#endif
  (void)rank;
  return mine;
}

struct ColArgs {
  rect::Maps mp;
  bool rotate;      // step 1 (else step 3)
  u64 width;        // W columns per band, a power of two <= kThreads
  unsigned wshift;  // log2 W
  u64 part;         // rows per block of a cluster (a power of two); m without clusters
  unsigned pshift;
  u64 nbands;
};

// Steps 1 and 3 on chip: each cluster (or block) takes bands of W columns;
// every block loads its rows of the band, then writes them from wherever
// their source rows lie.
template <class E, bool kCluster>
__global__ void __launch_bounds__(kThreads) col_kernel(E* d, ColArgs g) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  E* s = reinterpret_cast<E*>(smem_raw);
  unsigned rank, size;
  cluster_place<kCluster>(rank, size);
  const u64 nclusters = gridDim.x / size, cid = blockIdx.x / size;
  const u64 m = g.mp.m, n = g.mp.n, W = g.width;
  const unsigned tj = threadIdx.x & unsigned(W - 1), ti = threadIdx.x >> g.wshift;
  const unsigned rstep = kThreads >> g.wshift;
  const u64 row0 = kCluster ? u64(rank) << g.pshift : 0;
  const u64 rows_here = kCluster ? (row0 < m ? min(g.part, m - row0) : 0) : m;
  // The thread's rows are the same in every band: their R(i) walk starts
  // from one state; its column moves by a fixed stride from band to band.
  const rect::RowIter rows_from(g.mp, g.rotate, row0 + ti, rstep);
  rect::ColShiftIter cols(g.mp, g.rotate, (cid << g.wshift) + tj, nclusters << g.wshift);
  for (u64 band = cid; band < g.nbands; band += nclusters, cols.advance()) {
    const u64 j = (band << g.wshift) + tj;
    const bool live = j < n;
    if (live) {
      const E* from = d + (row0 + ti) * n + j;
      for (u64 r = ti; r < rows_here; r += rstep, from += u64(rstep) * n) s[r * W + tj] = *from;
    }
    barrier<kCluster>();
    if (live) {
      const u64 cj = cols.value();
      rect::RowIter it = rows_from;
      E* to = d + (row0 + ti) * n + j;
      for (u64 r = ti; r < rows_here; r += rstep, to += u64(rstep) * n, it.advance()) {
        u64 src = it.value() + cj;
        if (src >= m) src -= m;
        if constexpr (kCluster)
          *to = shared_of<kCluster>(s, unsigned(src >> g.pshift))[(src & (g.part - 1)) * W + tj];
        else
          *to = s[src * W + tj];
      }
    }
    barrier<kCluster>();
  }
}

struct RowArgs {
  rect::Maps mp;
  u64 group;    // rows per block (1 in clusters)
  u64 ngroups;
  u64 part;     // elements of the row per block of a cluster (a power of two)
  unsigned pshift;
  unsigned tpr = kThreads, tshift = 9;  // threads per row without clusters (a power of two)
};

// Step 2 on chip: a block holds `group` whole rows, or a cluster one row.
template <class E, bool kCluster>
__global__ void __launch_bounds__(kThreads) row_kernel(E* d, RowArgs g) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  E* s = reinterpret_cast<E*>(smem_raw);
  unsigned rank, size;
  cluster_place<kCluster>(rank, size);
  const u64 nclusters = gridDim.x / size, cid = blockIdx.x / size;
  const u64 m = g.mp.m, n = g.mp.n;
  for (u64 grp = cid; grp < g.ngroups; grp += nclusters) {
    if constexpr (kCluster) {
      E* row = d + grp * n;
      const u64 j0 = u64(rank) << g.pshift;
      const u64 len = j0 < n ? min(g.part, n - j0) : 0;
      for (u64 t = threadIdx.x; t < len; t += kThreads) s[t] = row[j0 + t];
      barrier<kCluster>();
      if (threadIdx.x < len) {
        rect::ShuffleIter it(g.mp, grp, j0 + threadIdx.x, kThreads);
        for (u64 t = threadIdx.x; t < len; t += kThreads, it.advance()) {
          const u64 src = it.value();
          row[j0 + t] = shared_of<kCluster>(s, unsigned(src >> g.pshift))[src & (g.part - 1)];
        }
      }
      barrier<kCluster>();
    } else {
      const u64 i0 = grp * g.group;
      const u64 rows = min(g.group, m - i0);
      E* base = d + i0 * n;
      const u64 total = rows * n;
      for (u64 t = threadIdx.x; t < total; t += kThreads) s[t] = base[t];
      __syncthreads();
      // tpr threads per row, each walking every tpr-th element of it.
      const unsigned lane = threadIdx.x & (g.tpr - 1), slots = kThreads >> g.tshift;
      for (u64 rr = threadIdx.x >> g.tshift; rr < rows; rr += slots) {
        rect::ShuffleIter it(g.mp, i0 + rr, lane, g.tpr);
        E* row = base + rr * n;
        const E* srow = s + rr * n;
        for (u64 j = lane; j < n; j += g.tpr, it.advance()) row[j] = srow[it.value()];
      }
      __syncthreads();
    }
  }
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
    for (u64 j = j_begin; j < j_end; j += kThreads, it.advance()) d[(i0 + rr) * n + j] = scratch[rr * n + it.value()];
  }
}

template <class E>
__global__ void __launch_bounds__(kThreads) col_gather(E* d, const E* scratch, rect::Maps mp, bool rotate, u64 j0,
                                                       u64 wb, unsigned wt_shift, u64 row_chunk) {
  const u64 m = mp.m, n = mp.n, wt = u64(1) << wt_shift;
  const unsigned tj = threadIdx.x & unsigned(wt - 1), ti = threadIdx.x >> wt_shift, rstep = kThreads >> wt_shift;
  const u64 col_chunks = (wb + wt - 1) >> wt_shift, row_chunks = (m + row_chunk - 1) / row_chunk;
  for (u64 u = blockIdx.x; u < col_chunks * row_chunks; u += gridDim.x) {
    const u64 rc = u / col_chunks, cc = u - rc * col_chunks;
    const u64 jj = (cc << wt_shift) + tj;
    if (jj >= wb) continue;
    const u64 cj = rect::col_shift(mp, rotate, j0 + jj);
    const u64 r_begin = rc * row_chunk + ti, r_end = min(m, (rc + 1) * row_chunk);
    if (r_begin >= r_end) continue;
    rect::RowIter it(mp, rotate, r_begin, rstep);
    for (u64 i = r_begin; i < r_end; i += rstep, it.advance()) {
      u64 src = it.value() + cj;
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

struct Gpu {
  int sms = 1;
  bool clusters = false;
};

Gpu gpu_of_current() {
  int dev = 0;
  GT_CUDA_CHECK(cudaGetDevice(&dev));
  Gpu g;
  int major = 0;
  GT_CUDA_CHECK(cudaDeviceGetAttribute(&g.sms, cudaDevAttrMultiProcessorCount, dev));
  GT_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
  g.clusters = major >= 9;
  // Test-only: run as on a GPU without clusters (tests/device/kernels_test.cu).
  if (const char* e = std::getenv("GT_TEST_RECT_NO_CLUSTERS"); e && e[0] == '1') g.clusters = false;
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

template <class E>
void row_step(E* d, const rect::Maps& mp, const Gpu& gpu, cudaStream_t stream, LazyScratch& scratch) {
  constexpr std::size_t S = sizeof(E);
  const u64 m = mp.m, n = mp.n, row_bytes = n * S;
  if (row_bytes <= kCap) {
    RowArgs g{mp, 0, 0, n, 0};
    // Each thread walks at least 32 elements of a row: its iterator's set-up
    // (a few divisions) is then a small part of its work.
    g.tshift = log2_of(std::clamp<u64>(n / 32, 1, kThreads));
    g.tpr = 1u << g.tshift;
    g.group = std::max<u64>(1, kCap / row_bytes);
    // Enough groups for every resident block where the matrix allows.
    const unsigned blocks_est = 2 * unsigned(gpu.sms);
    g.group = std::max<u64>(1, std::min<u64>(g.group, (m + blocks_est - 1) / blocks_est));
    g.ngroups = (m + g.group - 1) / g.group;
    const std::size_t smem = std::size_t(g.group * row_bytes);
    auto kernel = row_kernel<E, false>;
    const unsigned blocks = unsigned(std::min<u64>(g.ngroups, resident_blocks(kernel, smem, gpu)));
    kernel<<<blocks, kThreads, smem, stream>>>(d, g);
    GT_CUDA_LAUNCHED("inplace-rect");
    return;
  }
  if (gpu.clusters) {
    for (unsigned cl = 2; cl <= kMaxCluster; cl *= 2) {
      const u64 part = pow2_at_least((n + cl - 1) / cl);
      if (part * S > kCap) continue;
      RowArgs g{mp, 1, m, part, log2_of(part)};
      if (launch_clusters(row_kernel<E, true>, cl, std::size_t(part * S), m, stream, d, g)) return;
      break;
    }
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

template <class E>
void col_step(E* d, const rect::Maps& mp, bool rotate, const Gpu& gpu, cudaStream_t stream, LazyScratch& scratch) {
  constexpr std::size_t S = sizeof(E);
  const u64 m = mp.m, n = mp.n;
  const u64 sector_w = std::max<u64>(1, kSectorBytes / S);
  // One block per band: the widest power-of-two band that fits, no wider
  // than the matrix (rounded up) or the block.
  u64 w = 0;
  if (m * S <= kCap) {
    w = u64(1) << log2_of(kCap / (m * S));
    w = std::min<u64>({w, u64(kThreads), pow2_at_least(n)});
  }
  if (w && (w >= sector_w || w >= n || !gpu.clusters)) {
    ColArgs g{mp, rotate, w, log2_of(w), m, 0, (n + w - 1) / w};
    const std::size_t smem = std::size_t(m * w * S);
    auto kernel = col_kernel<E, false>;
    const unsigned blocks = unsigned(std::min<u64>(g.nbands, resident_blocks(kernel, smem, gpu)));
    kernel<<<blocks, kThreads, smem, stream>>>(d, g);
    GT_CUDA_LAUNCHED("inplace-rect");
    return;
  }
  if (gpu.clusters) {
    // Bands of a sector where a cluster holds them, else of 16 or 8 bytes
    // (neighbouring bands, taken by neighbouring clusters at about the same
    // time, then share their sectors in L2).
    bool tried = false;
    for (u64 wc = std::min<u64>(sector_w, pow2_at_least(n)); !tried && (wc * S >= 8 || wc == sector_w); wc /= 2) {
      for (unsigned cl = 2; cl <= kMaxCluster; cl *= 2) {
        const u64 part = pow2_at_least((m + cl - 1) / cl);
        if (part * wc * S > kCap) continue;
        ColArgs g{mp, rotate, wc, log2_of(wc), part, log2_of(part), (n + wc - 1) / wc};
        if (launch_clusters(col_kernel<E, true>, cl, std::size_t(part * wc * S), g.nbands, stream, d, g)) return;
        tried = true;  // the GPU would not co-schedule it: no narrower band will do better
        break;
      }
      if (wc == 1) break;
    }
  }
  // Columns longer than a cluster holds: batches of bands through device memory.
  const u64 wb_max = std::max<u64>(1, scratch.get().bytes() / (m * S));
  E* sc = static_cast<E*>(scratch.get().get());
  for (u64 j0 = 0; j0 < n; j0 += wb_max) {
    const u64 wb = std::min(wb_max, n - j0);
    GT_CUDA_CHECK(cudaMemcpy2DAsync(sc, wb * S, d + j0, n * S, wb * S, m, cudaMemcpyDeviceToDevice, stream));
    const unsigned wt_shift = log2_of(std::min<u64>(u64(kThreads), wb));
    const u64 row_chunk = 4096;
    const u64 units = ((wb + (u64(1) << wt_shift) - 1) >> wt_shift) * ((m + row_chunk - 1) / row_chunk);
    col_gather<E><<<grid_1d(std::min<u64>(units, u64(gpu.sms) * 4)), kThreads, 0, stream>>>(d, sc, mp, rotate, j0, wb,
                                                                                             wt_shift, row_chunk);
    GT_CUDA_LAUNCHED("inplace-rect");
  }
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
    if (mp.c > 1) col_step(d, mp, true, gpu, stream, scratch);
    row_step(d, mp, gpu, stream, scratch);
    col_step(d, mp, false, gpu, stream, scratch);
  });
}

}  // namespace

KernelInfo inplace_rect_info() {
  return {"inplace-rect",
          "any shape, in place (packed rows): column rotation, row shuffle and column permutation (Catanzaro et al.), "
          "each step on chip (shared memory, clusters); squares go to inplace-tiled",
          Kind::inplace, inplace_rect_supports, launch_inplace_rect, false};
}

}  // namespace gt::kernels::detail
