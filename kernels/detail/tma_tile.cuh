// Rows that are not 16-byte aligned, loaded by the Tensor Memory Accelerator
// (sm_90 and later). Issue 15: the misaligned tile path of super.cuh
// realigns every 16-byte word in registers with warp shuffles and stores
// partial words at both ends of every output row segment; Nsight found it
// issue bound, at 77% of a copy for 4-byte odd shapes and 44-61% for 1- and
// 2-byte ones.
//
// Loads. A tensor map wants row strides that are multiples of 16 bytes,
// which odd rows are not; but V_in consecutive rows, V_in = 16 / gcd(16,
// ld_in * S), span a multiple of 16 bytes. So the input is a 2-D tensor of
// "row groups": dimension 0 runs through the V_in rows of a group one after
// another (V_in * ld_in elements), dimension 1 counts groups. Rows r0 + k,
// r0 + k + V_in, ... (phase k) of a tile are one box. A box must start on a
// 16-byte boundary (Hopper raises an illegal instruction otherwise), and
// every row of one phase sits at the same offset m_k from one: so each
// phase's box starts at the boundary at or below the tile's first column
// and is one 16-byte word wider than the tile (TC + V elements, V = 16 / S).
// One thread issues the boxes NS tiles ahead; they complete on mbarriers.
// Columns past the tensor's end read as zeros and are never used.
//
// Stores. Each output row segment is shifted so that it starts on a 16-byte
// boundary: output row c of a tile takes elements r0 - d_c .. r0 - d_c + TR
// (d_c < V), so every store is a whole, aligned 16-byte word, and the next
// tile down starts where this one ends. The tile therefore loads V rows
// above r0 as well. A lane gathers its word's V elements from shared memory
// (V loads, packed with PRMT for 1- and 2-byte elements) and stores it; the
// lanes of a warp store consecutive words of one output row.
//
// Where that leaves gaps, the skinny kernel writes them (and, where they
// meet a shifted segment, the same values again): the first tile row (its
// segments would start before the output row), the rows from V above the
// last full tile row down, and the columns right of the last full tile.
//
// Measured (runs 88-97, H100, docs/PERF.md): bit-exact, but slower than the
// misaligned tile path at every odd shape tried (run 97, both in groups of
// tile rows: 4 bytes 65.5-72.1% of a copy against 84.2-86.6%; 1 byte
// 47.4-65.4% against 59.4-70.2%), so `padded` keeps the tile path and this
// runs as the tuning variants padded-misaligned-tma-*. Nsight
// (runs 89 and 91, 4 bytes, 16383 x 16385): L2 served TMA 1.45x the
// matrix's bytes (what 64-byte requests would cost: a 144-byte box row spans
// three), DRAM read 1.31 GB against the tile path's 1.09 GB, and both kernels
// ran DRAM at about 2.3 TB/s.
#pragma once
#include <cuda.h>  // CUtensorMap and its enums (the driver function is fetched at run time)
#include <cudaTypedefs.h>

#include "common.cuh"

namespace gt::kernels::detail {

// A tiling for the TMA path: TR x TC elements per tile (TC * S = 128 bytes),
// THREADS threads that gather and store, plus one warp that issues the
// loads, NS input stages. (Runs 90-92 also tried L2 promotion of 256 bytes,
// 3-7 points slower, and 256- and 512-byte-wide tiles, 57.7-61.0% for f32
// against 66.7-68.5%: docs/PERF.md.)
template <std::size_t S_, int TR_, int THREADS_, int NS_>
struct TmaCfg {
  static constexpr std::size_t S = S_;
  static constexpr int TR = TR_, TC = int(128 / S), THREADS = THREADS_, NS = NS_;
  static constexpr int BLOCK = THREADS + 32;         // with the loading warp
  static constexpr int V = int(16 / S);              // elements per 16-byte word
  static constexpr int W = TC + V;                   // box width, elements: one word more than the tile
  static constexpr int WB = W * int(S);              // bytes per shared row
  static constexpr int HR = TR + V;                  // rows loaded: V above the tile
  static constexpr int NW = TR / V;                  // 16-byte words per output row segment
  static constexpr int WORDS = NW * TC;              // output words per tile
  static constexpr int PER_THREAD = WORDS / THREADS;
  static constexpr int XSTEP = THREADS / NW;         // output rows between a thread's words
  static constexpr int BYTES = HR * WB;              // what a tile's boxes deliver
  // Up to V phases, each rounded up to the 128 bytes a box's destination needs.
  static constexpr int STAGE = (BYTES + 128 * V + 127) / 128 * 128;
  static constexpr std::size_t SMEM = std::size_t(NS) * STAGE + 128;
  static_assert(S <= 8, "16-byte elements are always aligned");
  static_assert(TR % 16 == 0 && HR <= 256 && W <= 256, "box extents");
  static_assert(WORDS % THREADS == 0 && THREADS % NW == 0, "whole output rows per step of the threads");
  static_assert(XSTEP % V == 0, "a thread's output rows keep one phase (x mod V_out)");
};

// Tiles in groups of this many tile rows (grouped_tile): all of one tile
// column first, as the misaligned tile path (padded.cu, kMisalignedGroup).
constexpr std::uint32_t kTmaGroup = 4096;

// Tile geometry for one launch.
struct TmaGeom {
  std::uint32_t ntr, ntc;      // tiles down (from the second tile row on) and across
  std::uint32_t lvi;           // log2 of the input's rows per group
  std::int32_t ld_in;          // input leading dimension, elements
  std::int32_t ei;             // elements between the tensor's aligned base and the input's first
  std::uint32_t ldo16;         // (ld_out * S) mod 16
  std::uint32_t o16;           // output address mod 16
  std::uint64_t ld_out_bytes;  // ld_out * S
  std::uint32_t zero;          // 0, opaque to the compiler (see the release in the kernel)
};

__device__ __forceinline__ std::uint32_t smem_u32(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
__device__ __forceinline__ void mbar_init(std::uint32_t bar, std::uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_expect_tx(std::uint32_t bar, std::uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_wait(std::uint32_t bar, std::uint32_t parity) {
  std::uint32_t done = 0;
  do {
    asm volatile(
        "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
  } while (!done);
}
__device__ __forceinline__ void tma_load_2d(std::uint32_t dst, const CUtensorMap* map, int x, int y,
                                            std::uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::"r"(
          dst),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(x), "r"(y), "r"(bar)
      : "memory");
}
__device__ __forceinline__ void mbar_arrive(std::uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}
__device__ __forceinline__ void fence_mbar_init() { asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory"); }
#endif

template <class P>
__global__ void __launch_bounds__(P::BLOCK)
    padded_tma_kernel(const __grid_constant__ CUtensorMap tin, unsigned char* __restrict__ out, TmaGeom g) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  constexpr std::size_t S = P::S;
  constexpr int V = P::V;
  constexpr int kConsumerWarps = P::THREADS / 32;
  extern __shared__ unsigned char tma_smem[];
  __shared__ alignas(8) std::uint64_t full[P::NS], empty[P::NS];
  unsigned char* base = tma_smem + ((128u - (smem_u32(tma_smem) & 127u)) & 127u);
  const std::uint64_t ntiles = std::uint64_t(g.ntr) * g.ntc;
  const int vi = 1 << g.lvi, rows_in = P::HR >> g.lvi;
  const int region = (rows_in * P::WB + 127) / 128 * 128;  // bytes per phase in a stage
  if (threadIdx.x == 0) {
    for (int s = 0; s < P::NS; ++s) {
      mbar_init(smem_u32(&full[s]), 1);
      mbar_init(smem_u32(&empty[s]), kConsumerWarps);
    }
    fence_mbar_init();
  }
  __syncthreads();  // the last block-wide barrier: the warps part here
  // Phase k's rows start m_k elements past a 16-byte boundary, below column
  // c0 (the same for every tile: c0 is a multiple of V). 32-bit products
  // wrap by a multiple of V.
  const auto m_of = [&](int k) {
    return int((std::uint32_t(k) * std::uint32_t(g.ld_in) + std::uint32_t(g.ei)) % std::uint32_t(V));
  };
  if (int(threadIdx.x) >= P::THREADS) {
    // The loading warp (one lane): stage s takes tile i once every
    // consumer warp has released its tile i - NS.
    if (threadIdx.x == P::THREADS) {
      std::uint32_t i = 0;
      for (std::uint64_t t = blockIdx.x; t < ntiles; t += gridDim.x, ++i) {
        const int s = int(i % P::NS);
        if (i >= std::uint32_t(P::NS)) mbar_wait(smem_u32(&empty[s]), (i / P::NS - 1) & 1u);
        const TileIdx ti = grouped_tile(t, g.ntr, g.ntc, kTmaGroup);
        const int r0 = int(ti.r + 1) * P::TR, c0 = int(ti.c) * P::TC;
        const std::uint32_t bar = smem_u32(&full[s]), dst = smem_u32(base + s * P::STAGE);
        mbar_expect_tx(bar, P::BYTES);
        for (int k = 0; k < vi; ++k)
          tma_load_2d(dst + k * region, &tin, k * g.ld_in + c0 + g.ei - m_of(k), (r0 - V) >> g.lvi, bar);
      }
    }
    return;
  }
  // This thread's words: word w0 of output rows x0, x0 + XSTEP, ... of the
  // tile. XSTEP is a multiple of V_out, so the shift d, and every element's
  // offset in a stage but for x's own, are the same for all of them (and for
  // every tile: TR * S and TC * S are multiples of 16).
  const int w0 = int(threadIdx.x) % P::NW, x0 = int(threadIdx.x) / P::NW;
  const int d = int(((std::uint32_t(x0) * g.ldo16 + g.o16) & 15u) / std::uint32_t(S));
  int off[V];
#pragma unroll
  for (int j = 0; j < V; ++j) {
    // Element j: input row r0 - d + V * w0 + j, row y of the HR loaded
    // (which start V above r0): phase k = y mod V_in, row y / V_in of it.
    const int y = V - d + V * w0 + j;
    const int k = y & (vi - 1);
    off[j] = k * region + (y >> g.lvi) * P::WB + (m_of(k) + x0) * int(S);
  }
  const bool lane0 = (threadIdx.x & 31u) == 0;
  std::uint32_t i = 0;
  for (std::uint64_t t = blockIdx.x; t < ntiles; t += gridDim.x, ++i) {
    const int s = int(i % P::NS);
    const TileIdx ti = grouped_tile(t, g.ntr, g.ntc, kTmaGroup);
    const std::uint64_t r0 = (ti.r + 1) * P::TR, c0 = ti.c * P::TC;
    // Word w0 of output row c0 + x0: 16-byte aligned by the choice of d.
    unsigned char* o = out + (c0 + x0) * g.ld_out_bytes + (r0 - d + V * w0) * S;
    const unsigned char* a = base + s * P::STAGE;
    mbar_wait(smem_u32(&full[s]), (i / P::NS) & 1u);
    uint4 word[P::PER_THREAD];
#pragma unroll
    for (int q = 0; q < P::PER_THREAD; ++q) {
      const unsigned char* aq = a + q * P::XSTEP * int(S);
      unsigned v[16 / S * (S == 8 ? 2 : 1)];
#pragma unroll
      for (int j = 0; j < V; ++j) {
        if constexpr (S == 8) {
          const uint2 e = *reinterpret_cast<const uint2*>(aq + off[j]);
          v[2 * j] = e.x;
          v[2 * j + 1] = e.y;
        } else if constexpr (S == 4) {
          v[j] = *reinterpret_cast<const unsigned*>(aq + off[j]);
        } else if constexpr (S == 2) {
          v[j] = *reinterpret_cast<const unsigned short*>(aq + off[j]);
        } else {
          v[j] = aq[off[j]];
        }
      }
      word[q] = pack_word<S>(v);
    }
    // Stage s is read: release it to the loading warp, then store. The
    // shared loads must have returned first: an arrive issued while they
    // are still in flight lets the next tile's boxes overwrite what they
    // have yet to read (run 91: 7 wrong words in 8 passes of the suite). So
    // the arrive's address depends on every loaded word, through a zero the
    // compiler cannot see (g.zero; a literal 0 was folded away: run 92, 3
    // wrong words in 8 passes).
    std::uint32_t z = 0;
#pragma unroll
    for (int q = 0; q < P::PER_THREAD; ++q) z ^= word[q].x ^ word[q].y ^ word[q].z ^ word[q].w;
    z &= g.zero;
    __syncwarp();
    if (lane0) mbar_arrive(smem_u32(&empty[s]) + z);
#pragma unroll
    for (int q = 0; q < P::PER_THREAD; ++q)
      *reinterpret_cast<uint4*>(o + std::uint64_t(q) * P::XSTEP * g.ld_out_bytes) = word[q];
  }
#else
  __trap();  // the launcher takes this path only where the binary holds sm_90 code
#endif
}

// --- host --------------------------------------------------------------------

using TensorMapEncode = PFN_cuTensorMapEncodeTiled_v12000;

// The driver's cuTensorMapEncodeTiled, fetched through the runtime (no link
// against libcuda); null where the driver has none.
inline TensorMapEncode tensor_map_encoder() {
  static const TensorMapEncode fn = [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult q{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess) {
      (void)cudaGetLastError();
      p = nullptr;
    }
    return reinterpret_cast<TensorMapEncode>(p);
  }();
  return fn;
}

template <std::size_t S>
constexpr CUtensorMapDataType tma_type() {
  return S == 1 ? CU_TENSOR_MAP_DATA_TYPE_UINT8
         : S == 2 ? CU_TENSOR_MAP_DATA_TYPE_UINT16
         : S == 4 ? CU_TENSOR_MAP_DATA_TYPE_UINT32
                  : CU_TENSOR_MAP_DATA_TYPE_UINT64;
}

// What one kernel instantiation can do on the current device: whether its
// binary holds sm_90 code (a build for older architectures runs an empty
// body) and how many blocks fit on an SM. Asked once per instantiation.
struct TmaKernelInfo {
  bool usable = false;
  int per_sm = 0;
};

template <class P>
TmaKernelInfo tma_kernel_info() {
  static const TmaKernelInfo info = [] {
    TmaKernelInfo r;
    int dev = 0, major = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess || major < 9 ||
        !tensor_map_encoder()) {
      (void)cudaGetLastError();
      return r;
    }
    auto kernel = padded_tma_kernel<P>;
    cudaFuncAttributes a{};
    if (cudaFuncGetAttributes(&a, kernel) != cudaSuccess || a.binaryVersion < 90 ||
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(P::SMEM)) != cudaSuccess ||
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&r.per_sm, kernel, P::BLOCK, P::SMEM) != cudaSuccess ||
        r.per_sm < 1) {
      (void)cudaGetLastError();
      r.per_sm = 0;
      return r;
    }
    r.usable = true;
    return r;
  }();
  return info;
}

inline unsigned log2_pow2(std::uint64_t v) {
  unsigned l = 0;
  while ((std::uint64_t(1) << l) < v) ++l;
  return l;
}

// Rows per group that span a multiple of 16 bytes: 16 / gcd(16, ld * S).
inline std::uint64_t rows_per_group(std::uint64_t ld, std::size_t s) {
  std::uint64_t v = 1;
  while ((v * ld * s) % 16 != 0) v *= 2;
  return v;
}

// What the TMA kernel leaves to the skinny kernel: input rows [0, TR) and
// [r_tail, R) over columns [0, c_full), and columns [c_full, C) over every
// row.
struct TmaPlan {
  std::uint64_t r_tail = 0, c_full = 0;
};

// Launches the TMA kernel over the full tiles from the second tile row on.
// False, with nothing launched, where the path does not apply: no sm_90 code
// or driver support, elements not aligned to their size, extents past the
// tensor map's 32-bit coordinates, fewer than two tile rows or one tile
// column, or a tensor map the driver refuses.
template <class P>
bool launch_tma_tiles(const void* in, void* out, const Dims& d, TmaPlan& plan, cudaStream_t stream) {
  constexpr std::size_t S = P::S;
  const auto ia = reinterpret_cast<std::uintptr_t>(in), oa = reinterpret_cast<std::uintptr_t>(out);
  if (ia % S || oa % S) return false;
  const std::uint64_t ei = (ia % 16) / S;
  const std::uint64_t vi = rows_per_group(d.ld_in, S);
  // A tile's columns must end inside the last phase's V_in * ld_in
  // elements: at most ld_in - ei.
  if (d.ld_in < ei + P::TC) return false;
  const std::uint64_t cmax = d.cols < d.ld_in - ei ? d.cols : d.ld_in - ei;
  const std::uint64_t c_full = cmax / P::TC * P::TC, rows_tiled = d.rows / P::TR;
  if (rows_tiled < 2 || !c_full) return false;
  const std::uint64_t ntr = rows_tiled - 1, ntc = c_full / P::TC;
  constexpr std::uint64_t kI32 = 0x7fffffffull;
  if (vi * d.ld_in + P::W > kI32 || d.rows > kI32 || d.cols > kI32) return false;
  const TmaKernelInfo info = tma_kernel_info<P>();
  if (!info.usable) return false;
  alignas(64) CUtensorMap tin{};
  const cuuint64_t dims[2] = {vi * d.ld_in, d.rows / vi};
  const cuuint64_t strides[1] = {vi * d.ld_in * S};
  const cuuint32_t box[2] = {cuuint32_t(P::W), cuuint32_t(P::HR / vi)};
  const cuuint32_t estr[2] = {1, 1};
  if (tensor_map_encoder()(&tin, tma_type<S>(), 2,
                           const_cast<unsigned char*>(static_cast<const unsigned char*>(in)) - ei * S, dims, strides,
                           box, estr, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                           CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS)
    return false;
  TmaGeom g{};
  g.ntr = std::uint32_t(ntr);
  g.ntc = std::uint32_t(ntc);
  g.lvi = log2_pow2(vi);
  g.ld_in = std::int32_t(d.ld_in);
  g.ei = std::int32_t(ei);
  g.ldo16 = std::uint32_t((d.ld_out * S) % 16);
  g.o16 = std::uint32_t(oa % 16);
  g.ld_out_bytes = d.ld_out * S;
  g.zero = 0;
  const std::uint64_t slots = std::uint64_t(info.per_sm) * std::uint64_t(sm_count());
  const unsigned grid = unsigned(ntr * ntc < slots ? ntr * ntc : slots);
  padded_tma_kernel<P><<<grid, P::BLOCK, P::SMEM, stream>>>(tin, static_cast<unsigned char*>(out), g);
  plan.r_tail = rows_tiled * P::TR - P::V;
  plan.c_full = c_full;
  return true;
}

}  // namespace gt::kernels::detail
