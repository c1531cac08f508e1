// The machinery of the tuned kernels (`padded`, `inplace-tiled`): a tile
// moves through a padded shared array of 16-byte "super-elements", so every
// global and shared access is 16 bytes wide whatever the element size.
//
// A super-element is a K x C block of elements (K*C*S = 16 bytes), stored
// already transposed: its 4-byte (S <= 4), 8-byte (S = 8) or 16-byte unit j
// holds column j of the block, its K elements in row order.
//
//   S   K x C   unit     loads per A-block   supers per B-block
//   1   4 x 4   4 bytes  4 rows              4
//   2   2 x 4   4 bytes  2 rows              4
//   4   1 x 4   4 bytes  1 row               4
//   8   1 x 2   8 bytes  1 row               2
//   16  1 x 1   16 bytes 1 row               1
//
// Load side (an "A-block"): a thread reads 16 bytes from each of K input rows,
// which is K supers side by side; 1- and 2-byte blocks are transposed in
// registers with PRMT (__byte_perm) so that shared memory only ever sees
// whole 16-byte supers.
// Store side (a "B-block"): a thread reads C supers down one super-column;
// unit j of each, concatenated, is 16 consecutive bytes of output row j.
//
// Shared memory is sm[TSR][TSC + 1] supers. With 16-byte accesses a warp is
// served a quarter (8 lanes) at a time, and the 8 lanes hit distinct banks
// when they walk down super-rows at an odd pitch (TSC + 1), or along a
// super-row. The A_DOWN / B_ACROSS flags pick which way the 8 lanes walk.
// The tuned kernels walk the other way on both sides (loads along input
// rows, stores down output rows) and take 2- to 4-way conflicts: longer runs
// of one row per warp instruction won 1-4 points on the H100 (docs/PERF.md,
// run 3), and shared memory is not what limits these kernels.
//
// The helpers take no __restrict__: inplace-tiled reads and writes one matrix.
#pragma once
#include "common.cuh"

namespace gt::kernels::detail {

template <std::size_t S>
struct SuperShape {
  static constexpr int K = S == 1 ? 4 : S == 2 ? 2 : 1;   // element rows per super
  static constexpr int C = S <= 4 ? 4 : S == 8 ? 2 : 1;   // element cols per super
  static_assert(K * C * S == 16, "a super-element is 16 bytes");
};

__device__ __forceinline__ unsigned word(const uint4& v, int i) {
  return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w;
}

// Super m of an A-block (rows[k] = 16 bytes of input row k), transposed.
template <std::size_t S>
__device__ __forceinline__ uint4 to_super(const uint4 (&rows)[SuperShape<S>::K], int m) {
  if constexpr (S == 1) {
    // 4x4 bytes: word m of each row; two PRMT stages interleave bytes, then halves.
    const unsigned a0 = word(rows[0], m), a1 = word(rows[1], m), a2 = word(rows[2], m), a3 = word(rows[3], m);
    const unsigned t0 = __byte_perm(a0, a1, 0x5140), t1 = __byte_perm(a0, a1, 0x7362);
    const unsigned t2 = __byte_perm(a2, a3, 0x5140), t3 = __byte_perm(a2, a3, 0x7362);
    return make_uint4(__byte_perm(t0, t2, 0x5410), __byte_perm(t0, t2, 0x7632), __byte_perm(t1, t3, 0x5410),
                      __byte_perm(t1, t3, 0x7632));
  } else if constexpr (S == 2) {
    // 2 rows x 4 halves: words 2m, 2m+1 of each row; pair the low halves, then the high.
    const unsigned u0 = word(rows[0], 2 * m), u1 = word(rows[0], 2 * m + 1);
    const unsigned v0 = word(rows[1], 2 * m), v1 = word(rows[1], 2 * m + 1);
    return make_uint4(__byte_perm(u0, v0, 0x5410), __byte_perm(u0, v0, 0x7632), __byte_perm(u1, v1, 0x5410),
                      __byte_perm(u1, v1, 0x7632));
  } else {
    return rows[0];
  }
}

// Output row j of a B-block: unit j of each of its C supers.
template <std::size_t S>
__device__ __forceinline__ uint4 gather(const uint4 (&s)[SuperShape<S>::C], int j) {
  if constexpr (S <= 4) {
    return make_uint4(word(s[0], j), word(s[1], j), word(s[2], j), word(s[3], j));
  } else if constexpr (S == 8) {
    return j == 0 ? make_uint4(s[0].x, s[0].y, s[1].x, s[1].y) : make_uint4(s[0].z, s[0].w, s[1].z, s[1].w);
  } else {
    return s[0];
  }
}

// Cache policy of the 16-byte global accesses. `stream` marks them
// evict-first (ld.global.cs / st.global.cs): the matrix is read and written
// once, so keeping it in L2 buys nothing.
template <bool STREAM>
__device__ __forceinline__ uint4 load16(const unsigned char* p) {
  if constexpr (STREAM) return __ldcs(reinterpret_cast<const uint4*>(p));
  else return *reinterpret_cast<const uint4*>(p);
}
template <bool STREAM>
__device__ __forceinline__ void store16(unsigned char* p, uint4 v) {
  if constexpr (STREAM) __stcs(reinterpret_cast<uint4*>(p), v);
  else *reinterpret_cast<uint4*>(p) = v;
}

// A tiling: TSR x TSC supers per tile, THREADS threads, at least MINB blocks
// per SM (launch bounds), lane walk directions, cache policy.
template <std::size_t S_, int TSR_, int TSC_, int THREADS_, int MINB_, bool A_DOWN_, bool B_ACROSS_, bool STREAM_>
struct SuperCfg {
  static constexpr std::size_t S = S_;
  static constexpr int K = SuperShape<S>::K, C = SuperShape<S>::C;
  static constexpr int TSR = TSR_, TSC = TSC_, THREADS = THREADS_, MINB = MINB_;
  static constexpr bool A_DOWN = A_DOWN_, B_ACROSS = B_ACROSS_, STREAM = STREAM_;
  static constexpr int TR = TSR * K, TC = TSC * C;  // tile in elements
  static constexpr int PITCH = TSC + 1;             // supers per shared row (odd)
  static constexpr int XA = TSC / K;                // A-blocks per super-row
  static constexpr int NA = TSR * XA / THREADS;     // A-blocks per thread
  static constexpr int Y = TSR / C;                 // B-blocks per super-column
  static constexpr int NB = TSC * Y / THREADS;      // B-blocks per thread
  static constexpr std::size_t SMEM = std::size_t(TSR) * PITCH * 16;
  static_assert(TSC % K == 0 && TSR % C == 0, "tile must hold whole A- and B-blocks");
  static_assert(NA >= 1 && NA * THREADS == TSR * XA, "A-blocks must divide evenly among threads");
  static_assert(NB >= 1 && NB * THREADS == TSC * Y, "B-blocks must divide evenly among threads");
  static_assert(!A_DOWN || TSR % 8 == 0, "A_DOWN walks 8 super-rows per quarter-warp");
  static_assert(!B_ACROSS || TSC % 8 == 0, "B_ACROSS walks 8 super-cols per quarter-warp");
  static_assert(THREADS % 32 == 0, "whole warps");
};

// A-block a -> (super-row, A-block column).
template <class Cfg>
__device__ __forceinline__ void a_coords(int a, int& sr, int& xa) {
  if constexpr (Cfg::A_DOWN) {
    sr = (a & 7) + 8 * ((a >> 3) / Cfg::XA);
    xa = (a >> 3) % Cfg::XA;
  } else {
    sr = a / Cfg::XA;
    xa = a % Cfg::XA;
  }
}

// B-block b -> (super-column, B-block row).
template <class Cfg>
__device__ __forceinline__ void b_coords(int b, int& sc, int& y) {
  if constexpr (Cfg::B_ACROSS) {
    sc = (b & 7) + 8 * ((b >> 3) / Cfg::Y);
    y = (b >> 3) % Cfg::Y;
  } else {
    sc = b / Cfg::Y;
    y = b % Cfg::Y;
  }
}

// Holds a thread's share of one full tile between its global loads and its
// shared stores, so several tiles' loads can be in flight at once.
template <class Cfg>
struct TileRegs {
  uint4 v[Cfg::NA][Cfg::K];
};

// Global -> registers. src: the tile's first element; in_pitch: bytes per input row.
template <class Cfg>
__device__ __forceinline__ void load_tile(TileRegs<Cfg>& regs, const unsigned char* src,
                                          std::uint64_t in_pitch) {
#pragma unroll
  for (int i = 0; i < Cfg::NA; ++i) {
    int sr, xa;
    a_coords<Cfg>(i * Cfg::THREADS + int(threadIdx.x), sr, xa);
    const unsigned char* p = src + std::uint64_t(sr * Cfg::K) * in_pitch + xa * 16;
#pragma unroll
    for (int k = 0; k < Cfg::K; ++k) regs.v[i][k] = load16<Cfg::STREAM>(p + k * in_pitch);
  }
}

// Registers -> shared supers (transposed in registers on the way).
template <class Cfg>
__device__ __forceinline__ void stash_tile(const TileRegs<Cfg>& regs, uint4 (*sm)[Cfg::PITCH]) {
#pragma unroll
  for (int i = 0; i < Cfg::NA; ++i) {
    int sr, xa;
    a_coords<Cfg>(i * Cfg::THREADS + int(threadIdx.x), sr, xa);
#pragma unroll
    for (int m = 0; m < Cfg::K; ++m) sm[sr][xa * Cfg::K + m] = to_super<Cfg::S>(regs.v[i], m);
  }
}

// Shared supers -> global, transposed. dst: the output tile's first element
// (row = the tile's first input column); out_pitch: bytes per output row.
template <class Cfg>
__device__ __forceinline__ void store_tile(const uint4 (*sm)[Cfg::PITCH], unsigned char* dst,
                                           std::uint64_t out_pitch) {
#pragma unroll
  for (int j = 0; j < Cfg::NB; ++j) {
    int sc, y;
    b_coords<Cfg>(j * Cfg::THREADS + int(threadIdx.x), sc, y);
    uint4 s[Cfg::C];
#pragma unroll
    for (int i = 0; i < Cfg::C; ++i) s[i] = sm[y * Cfg::C + i][sc];
    unsigned char* q = dst + std::uint64_t(sc * Cfg::C) * out_pitch + y * 16;
#pragma unroll
    for (int jj = 0; jj < Cfg::C; ++jj) store16<Cfg::STREAM>(q + jj * out_pitch, gather<Cfg::S>(s, jj));
  }
}

// The element-wise path for tiles that are partial, skinny or unaligned:
// vr x vc valid elements starting at (r0, c0), one element per access,
// threads numbered linearly over the valid region so that reads walk input
// rows and writes walk output rows whatever the tile's shape (a 3-row tile
// still writes long runs when the output is packed). The shared pitch is
// odd, so column reads of 4-, 8- and 16-byte elements are conflict-free.
__host__ __device__ __forceinline__ unsigned edge_pitch(unsigned vc) { return vc | 1u; }

// Loads in batches of BATCH per thread, all issued before the first shared
// store, so each thread has several DRAM reads in flight: the skinny kernel
// lives on this path (BATCH 4); the tile kernels meet it only at edges and
// keep BATCH 1, which holds their register count (occupancy) down.
constexpr int kEdgeBatch = 4;

template <class T, int THREADS, int BATCH = 1>
__device__ __forceinline__ void edge_load(T* e, const T* in, std::uint64_t ld_in, std::uint64_t r0,
                                          std::uint64_t c0, unsigned vr, unsigned vc) {
  const unsigned pitch = edge_pitch(vc), n = vr * vc;
  unsigned r = threadIdx.x / vc, c = threadIdx.x % vc;
  const unsigned dr = THREADS / vc, dc = THREADS % vc;
  const T* src = in + r0 * ld_in + c0;
  for (unsigned base = threadIdx.x; base < n; base += BATCH * THREADS) {
    T x[BATCH];
    unsigned at[BATCH];
#pragma unroll
    for (int u = 0; u < BATCH; ++u) {
      if (base + u * THREADS < n) {
        x[u] = src[r * ld_in + c];
        at[u] = r * pitch + c;
      }
      c += dc;
      r += dr;
      if (c >= vc) {
        c -= vc;
        ++r;
      }
    }
#pragma unroll
    for (int u = 0; u < BATCH; ++u)
      if (base + u * THREADS < n) e[at[u]] = x[u];
  }
}

// Writes the transpose of the vr x vc elements in e to output rows c0.. and
// columns r0...
template <class T, int THREADS>
__device__ __forceinline__ void edge_store(const T* e, T* out, std::uint64_t ld_out, std::uint64_t r0,
                                           std::uint64_t c0, unsigned vr, unsigned vc) {
  const unsigned pitch = edge_pitch(vc), n = vr * vc;
  unsigned c = threadIdx.x / vr, r = threadIdx.x % vr;
  const unsigned dc = THREADS / vr, dr = THREADS % vr;
  T* dst = out + c0 * ld_out + r0;
  for (unsigned i = threadIdx.x; i < n; i += THREADS) {
    dst[c * ld_out + r] = e[r * pitch + c];
    r += dr;
    c += dc;
    if (r >= vr) {
      r -= vr;
      ++c;
    }
  }
}

// Element k of a 16-byte vector of S-byte elements, and the reverse.
template <std::size_t S>
__device__ __forceinline__ carrier_t<S> elem(const uint4& x, int k) {
  if constexpr (S == 16) return x;
  else if constexpr (S == 8) return k == 0 ? (std::uint64_t(x.y) << 32 | x.x) : (std::uint64_t(x.w) << 32 | x.z);
  else if constexpr (S == 4) return word(x, k);
  else if constexpr (S == 2) return std::uint16_t(word(x, k / 2) >> (16 * (k % 2)));
  else return std::uint8_t(word(x, k / 4) >> (8 * (k % 4)));
}

template <std::size_t S>
__device__ __forceinline__ uint4 pack(const carrier_t<S> (&e)[16 / S]) {
  if constexpr (S == 16) {
    return e[0];
  } else if constexpr (S == 8) {
    return make_uint4(unsigned(e[0]), unsigned(e[0] >> 32), unsigned(e[1]), unsigned(e[1] >> 32));
  } else {
    unsigned w[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      w[i] = 0;
#pragma unroll
      for (int k = 0; k < int(4 / S); ++k) w[i] |= unsigned(e[i * (4 / S) + k]) << (8 * S * k);
    }
    return make_uint4(w[0], w[1], w[2], w[3]);
  }
}

// Skinny matrices with 16-byte vectors on both sides, through shared memory
// in output order. Few rows (R = all rows, output packed: ld_out == R): a
// tile of R x tc elements is R input row segments and one contiguous run of
// output. Few columns (C = all columns, input packed: ld_in == C): a tile of
// tr x C is one contiguous run of input and C output row segments. tc and tr
// are multiples of 16/S and every base is 16-byte aligned (the launcher
// checks). The small dimension runs fastest across the lanes, which keeps
// the element-wise shared accesses near conflict-free.
template <std::size_t S, int THREADS, bool STREAM>
__device__ __forceinline__ void skinny_rows_tile(unsigned char* smem, const unsigned char* in, unsigned char* out,
                                                 std::uint64_t ld_in, std::uint64_t c0, unsigned R, unsigned tc) {
  constexpr int V = 16 / S;
  using T = carrier_t<S>;
  T* e = reinterpret_cast<T*>(smem);
  const unsigned nv = tc / V, n = R * nv;
  unsigned r = threadIdx.x % R, v = threadIdx.x / R;
  const unsigned dr = THREADS % R, dv = THREADS / R;
  for (unsigned base = threadIdx.x; base < n; base += kEdgeBatch * THREADS) {
    uint4 x[kEdgeBatch];
    unsigned xr[kEdgeBatch], xv[kEdgeBatch];
#pragma unroll
    for (int u = 0; u < kEdgeBatch; ++u) {
      if (base + u * THREADS < n) {
        x[u] = load16<STREAM>(in + (r * ld_in + c0 + v * V) * S);
        xr[u] = r;
        xv[u] = v;
      }
      r += dr;
      v += dv;
      if (r >= R) {
        r -= R;
        ++v;
      }
    }
#pragma unroll
    for (int u = 0; u < kEdgeBatch; ++u)
      if (base + u * THREADS < n) {
#pragma unroll
        for (int k = 0; k < V; ++k) e[(xv[u] * V + k) * R + xr[u]] = elem<S>(x[u], k);
      }
  }
  __syncthreads();
  const uint4* s4 = reinterpret_cast<const uint4*>(smem);
  unsigned char* dst = out + c0 * R * S;
  for (unsigned i = threadIdx.x; i < n; i += THREADS) store16<STREAM>(dst + std::uint64_t(i) * 16, s4[i]);
}

template <std::size_t S, int THREADS, bool STREAM>
__device__ __forceinline__ void skinny_cols_tile(unsigned char* smem, const unsigned char* in, unsigned char* out,
                                                 std::uint64_t ld_out, std::uint64_t r0, unsigned C, unsigned tr) {
  constexpr int V = 16 / S;
  using T = carrier_t<S>;
  const unsigned nv = tr / V, n = C * nv;
  uint4* s4 = reinterpret_cast<uint4*>(smem);
  const unsigned char* src = in + r0 * C * S;
  for (unsigned base = threadIdx.x; base < n; base += kEdgeBatch * THREADS) {
    uint4 x[kEdgeBatch];
#pragma unroll
    for (int u = 0; u < kEdgeBatch; ++u)
      if (base + u * THREADS < n) x[u] = load16<STREAM>(src + std::uint64_t(base + u * THREADS) * 16);
#pragma unroll
    for (int u = 0; u < kEdgeBatch; ++u)
      if (base + u * THREADS < n) s4[base + u * THREADS] = x[u];
  }
  __syncthreads();
  const T* e = reinterpret_cast<const T*>(smem);
  unsigned c = threadIdx.x % C, v = threadIdx.x / C;
  const unsigned dc = THREADS % C, dv = THREADS / C;
  for (unsigned i = threadIdx.x; i < n; i += THREADS) {
    T x[V];
#pragma unroll
    for (int k = 0; k < V; ++k) x[k] = e[(v * V + k) * C + c];
    store16<STREAM>(out + (c * ld_out + r0 + v * V) * S, pack<S>(x));
    c += dc;
    v += dv;
    if (c >= C) {
      c -= C;
      ++v;
    }
  }
}

}  // namespace gt::kernels::detail
