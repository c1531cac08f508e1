// Rows not 16-byte aligned, realigned through shared memory ("skew tiles").
//
// The misaligned tile path of super.cuh keeps every word in registers: each
// 16-byte word is shuffled between lanes and rotated with selects on both
// sides, and Nsight (run 149) counted 4-7 times the aligned kernel's
// instructions for it. A skew tile moves the realignment into the shared
// memory addresses instead:
//
// - Load side: row r of the tile starts s_r = p_r mod 16 bytes into its first
//   aligned word. The row's aligned words (TCB/16 of them, one more when
//   s_r != 0) are read whole and written to shared memory s_r bytes lower
//   than their place, so that element (r, c) sits at row_r + c*S whatever
//   s_r. For 4- and 8-byte elements s_r is a multiple of the store width
//   (4 or 8 bytes), so that is a plain shared store at a shifted address.
//   For 1- and 2-byte elements the bytes are first shifted within 32-bit
//   words by s_r mod 4 (a funnel shift with the next word's first 4 bytes,
//   passed over by one shuffle), then stored at a 4-byte aligned address.
// - Store side: output row c's segment starts h_c = q_c mod 16 bytes into
//   its first aligned word. Its aligned words are gathered element by
//   element down column c (word i holds tile rows (16i - h_c)/S ...), so
//   every global store is one aligned 16-byte word; the first and the last
//   word of a segment hold only bytes of this tile (store_head/store_tail),
//   and their other elements come from guard rows above and below the tile,
//   which are never stored.
//
// No shuffle or select realigns a whole word on either side.
//
// Measured (H100, % of a device-to-device copy in the same process, runs
// 163-168): `padded` f32 at 12345x6789 / 16383x16385 / 16383x32769 90.9 /
// 90.6 / 90.5 against the register path's 86.6 / 84.9 / 84.1, f64 93.2 /
// 92.6 / 92.1 against 91.9 / 91.4 / 91.0; `inplace-tiled` f32 16385^2 /
// 12345^2 85.3 / 95.2 against 76.5 / 87.6, f64 11585^2 / 12345^2 86.7 / 86.6
// against 82.0 / 83.0. What decided was residency (bytes in flight an SM):
// the same f32 tiling ran 72.7% at two blocks an SM and 86.3% at three, and
// every tiling that spilled lost 10-15 points. 1- and 2-byte elements lose
// here (f16 75-78% against 82-83, u8 44-46 against 72-79) and keep the
// register path. Their gathers read shared memory 2 or 1 bytes at a time,
// the lanes of a warp 8 or 16 rows apart: 8- and 16-way bank conflicts in
// this layout. Run 172 moved each group of 16/S rows one bank further on
// (every lane of a gather in its own bank; a branch on the row's group
// offset picked constant offsets): u8 50.1-51.5 (512 rows, 512 threads),
// f16 63.2-73.5, and f32 83.7-85.9 / f64 unchanged against 90.4-90.9 /
// 92.1-93.1 unspread; in place lower at every size. So the conflicts were
// not what held 1- and 2-byte skew tiles back; the per-word cost of their
// gathers (16 or 8 shared loads and 12 or 4 byte permutes a word) is the
// likelier limit (not profiled). That layout is not kept.
//
// T2 (SkewCfg's last parameter) takes that per-word cost away: after the
// load, skew_transpose turns the tile into a second shared tile, its
// transpose, 4 x 4 bytes (2 x 2 halves) at a time (4 shared loads, 8 byte
// permutes, 4 shared stores), and each output word is then 16 bytes of a
// transposed row, read as they lie (five 4-byte loads, four funnel shifts),
// both passes free of bank conflicts. Run 197: u8 61.5-66.8% and f16
// 75.0-76.7% (the best tilings), against 42.3-44.4 and 69.9-73.8 for the
// gathers above, but the register path still leads at 76.6-79.4 and
// 82.8-84.0; in place, T2 pairs lost to both (u8 32769^2 51.0 and 45.1
// against 62.0, f16 23169^2 55.9-63.4 against 70.3). Nsight (runs 202-203,
// u8 16383x16385, each launch alone) says why: T2 issues 164 M warp
// instructions against the register path's 115 M, at 11.0 cycles an
// instruction against 13.9, with fewer barrier and memory stalls per issue
// (0.70 and 1.90 against 0.99 and 3.04): it is bound by its instructions,
// which its index and 64-bit address arithmetic dominate, not by the shared
// accesses the design counted. T2 stays a variant of `padded` for 1- and
// 2-byte elements.
#pragma once
#include <type_traits>

#include "element_tile.cuh"  // kDefaultSmem
#include "super.cuh"

namespace gt::kernels::detail {

// The smallest multiple of 4 of at least `bytes` whose count of 4-byte units
// is `residue` modulo `mod`: a shared row pitch that spreads the lanes of a
// warp over the banks (skew_transpose).
constexpr int pitch_units(int bytes, int residue, int mod) {
  int u = (bytes + 3) / 4;
  while (u % mod != residue) ++u;
  return 4 * u;
}

// TR x (TCB / S) elements a tile (TCB bytes of each input row), THREADS
// threads, at least MINB blocks an SM. T2 (1- and 2-byte elements only):
// the store side reads a second shared tile that skew_transpose fills with
// the transpose of the first, instead of gathering element by element.
template <std::size_t S_, int TR_, int TCB_, int THREADS_, int MINB_, bool T2_ = false>
struct SkewCfg {
  static constexpr std::size_t S = S_;
  static constexpr int TR = TR_, TCB = TCB_, THREADS = THREADS_, MINB = MINB_;
  static constexpr bool T2 = T2_;
  static constexpr int TC = TCB / int(S);
  static constexpr int NW = TCB / 16;          // aligned words of a row segment (one more when it is not aligned)
  static constexpr int NO = TR * int(S) / 16;  // aligned words of an output row segment (likewise)
  // Guard rows above and below: a partial word's other elements (T2 keeps
  // its guard bytes in the transposed rows instead).
  static constexpr int G = T2 ? 0 : 16 / int(S);
  static constexpr int RB = 4 / int(S);  // T2: rows (and columns) of a 32-bit block that skew_transpose turns
  // Bytes per shared row: a row's words land at 16 + 16w - s (w <= NW, s < 16),
  // so 16 NW + 32 bytes, rounded to an odd number of 4-byte (8-byte) units;
  // T2: to 32 / RB^2 units modulo 32 / RB, so that skew_transpose's reads
  // (32 / RB blocks across x RB down a warp) fall in 32 banks.
  static constexpr int PITCH = T2 ? pitch_units(TCB + 32, 32 / (RB * RB), 32 / RB) : S == 8 ? TCB + 40 : TCB + 36;
  static constexpr int ROWS = TR + 2 * G;
  static constexpr std::size_t A_BYTES = std::size_t(ROWS) * PITCH;
  // T2: the transposed tile, TC rows of BP bytes, element (c, r) at
  // A_BYTES + c BP + 16 + r S: 16 guard bytes before (a head word's other
  // bytes), 16 + 4 after (a tail word's, and the fifth 4-byte read of a
  // word that is not 4-byte aligned); 1 unit modulo 32 / RB, so that
  // skew_transpose's writes fall in 32 banks.
  static constexpr int BP = T2 ? pitch_units(TR * int(S) + 36, 1, 32 / RB) : 0;
  static constexpr std::size_t SMEM = A_BYTES + std::size_t(T2 ? TC : 0) * BP;
  static constexpr int NA = TR * NW / THREADS;  // aligned words per thread
  static constexpr int NX = (TR + THREADS - 1) / THREADS;  // rows' extra words per thread
  static_assert(S == 1 || S == 2 || S == 4 || S == 8, "skew tiles take 1- to 8-byte elements");
  static_assert(TCB % 16 == 0 && 32 % NW == 0, "a row segment's words fit whole in a warp");
  static_assert((TR * int(S)) % 16 == 0 && (NO % 32 == 0 || 32 % NO == 0), "output segments of whole words");
  static_assert(NA >= 1 && NA * THREADS == TR * NW, "the words divide evenly among threads");
  static_assert(THREADS % 32 == 0 && (TC * NO) % THREADS == 0, "whole warps; the output words divide evenly");
  static_assert(SMEM >= std::size_t(TR) * (TC + 1) * S, "room for the edge tiles' element buffer");
  static_assert(!T2 || (S <= 2 && (TCB / 4) % (32 / RB) == 0 && (TR / RB) % RB == 0 &&
                        (TR / RB) * (TCB / 4) % THREADS == 0),
                "T2: 1- or 2-byte elements, warps of whole blocks, the blocks divide evenly among threads");
};

template <class C>
struct IsSkew : std::false_type {};
template <std::size_t S, int TR, int TCB, int THREADS, int MINB, bool T2>
struct IsSkew<SkewCfg<S, TR, TCB, THREADS, MINB, T2>> : std::true_type {};
template <class C>
constexpr bool is_skew_v = IsSkew<C>::value;

// Whether a tiling takes rows at any offset: a skew tiling always, a super
// tiling where its lanes allow it (can_misalign_v).
template <class C>
constexpr bool mis_tiles_v() {
  if constexpr (is_skew_v<C>) return true;
  else return can_misalign_v<C>;
}

// The 16/S elements at p, p + P, p + 2P, ... (down one column of the
// shared tile), packed into one 16-byte word.
template <std::size_t S, int P>
__device__ __forceinline__ uint4 skew_gather(const unsigned char* p) {
  if constexpr (S == 8) {
    const uint2 a = *reinterpret_cast<const uint2*>(p), b = *reinterpret_cast<const uint2*>(p + P);
    return make_uint4(a.x, a.y, b.x, b.y);
  } else if constexpr (S == 4) {
    const auto* q = reinterpret_cast<const unsigned*>(p);
    return make_uint4(q[0], q[P / 4], q[2 * P / 4], q[3 * P / 4]);
  } else {
    unsigned v[16 / S];  // element j in its low S bytes
#pragma unroll
    for (int j = 0; j < 16 / int(S); ++j)
      v[j] = S == 2 ? unsigned(*reinterpret_cast<const unsigned short*>(p + j * P)) : unsigned(p[j * P]);
    return pack_word<S>(v);
  }
}

// Writes the aligned word v (bytes s.. of it are the row's bytes from
// 16w - s on) to the row's shared bytes at dst = row + 16w - s.
// x4: the next aligned word's first 4 bytes (1- and 2-byte elements).
template <std::size_t S>
__device__ __forceinline__ void skew_put(unsigned char* row, int w, unsigned s, const uint4& v, unsigned x4) {
  if constexpr (S == 8) {
    auto* d = reinterpret_cast<uint2*>(row + 16 * w - int(s));
    d[0] = make_uint2(v.x, v.y);
    d[1] = make_uint2(v.z, v.w);
  } else if constexpr (S == 4) {
    auto* d = reinterpret_cast<unsigned*>(row + 16 * w - int(s));
    d[0] = v.x;
    d[1] = v.y;
    d[2] = v.z;
    d[3] = v.w;
  } else {
    // Bytes [4m + sub, 4m + sub + 4) of v || x4 are row bytes 16w - s4 + 4m.
    const unsigned sub = (s & 3u) * 8u;
    auto* d = reinterpret_cast<unsigned*>(row + 16 * w - int(s & ~3u));
    d[0] = __funnelshift_r(v.x, v.y, sub);
    d[1] = __funnelshift_r(v.y, v.z, sub);
    d[2] = __funnelshift_r(v.z, v.w, sub);
    d[3] = __funnelshift_r(v.w, x4, sub);
  }
}

// A full tile's reads (TR rows of TCB bytes from `in`, rows ld_b bytes
// apart), held in registers between skew_fetch, which issues them all, and
// skew_stash, which writes them to the shared rows: element (r, c) at
// sm + (G + r) * PITCH + 16 + c*S. Two tiles' reads can be in flight at once
// (in place, a pair).
template <class Cfg>
struct SkewRegs {
  uint4 v[Cfg::NA];  // aligned word w = threadIdx % NW of rows (threadIdx + k THREADS) / NW
  uint4 x[Cfg::NX];  // the word after row threadIdx + k THREADS's segment, where it is not aligned
};

// Row r of a tile in global memory, rows ld_b bytes apart.
__device__ __forceinline__ const unsigned char* skew_row(const unsigned char* in, std::uint64_t ld_b, int r) {
  return in + std::uint64_t(r) * ld_b;
}

template <class Cfg>
__device__ __forceinline__ void skew_fetch(SkewRegs<Cfg>& g, const unsigned char* in, std::uint64_t ld_b,
                                           const unsigned char* limit) {
  constexpr int NW = Cfg::NW;
  const int w = int(threadIdx.x) % NW;
#pragma unroll
  for (int k = 0; k < Cfg::NA; ++k) {
    const int r = (int(threadIdx.x) + k * Cfg::THREADS) / NW;
    g.v[k] = load16<false>(misaligned_at(skew_row(in, ld_b, r)).a + 16 * w);
  }
  // At the matrix's very end only the extra word's first m bytes, byte by byte.
#pragma unroll
  for (int k = 0; k < Cfg::NX; ++k) {
    const int r = int(threadIdx.x) + k * Cfg::THREADS;
    g.x[k] = make_uint4(0, 0, 0, 0);
    if (r < Cfg::TR) {
      const MisalignedRead a = misaligned_at(skew_row(in, ld_b, r));
      if (a.m != 0)
        g.x[k] = a.a + 16 * NW + 16 <= limit ? load16<false>(a.a + 16 * NW) : tail_word({a.a + 16 * (NW - 1), a.m});
    }
  }
}

template <class Cfg>
__device__ __forceinline__ void skew_stash(const SkewRegs<Cfg>& g, unsigned char* sm, const unsigned char* in,
                                           std::uint64_t ld_b, const unsigned char* limit) {
  constexpr std::size_t S = Cfg::S;
  constexpr int NW = Cfg::NW;
  const int w = int(threadIdx.x) % NW;
#pragma unroll
  for (int k = 0; k < Cfg::NA; ++k) {
    const int r = (int(threadIdx.x) + k * Cfg::THREADS) / NW;
    const MisalignedRead a = misaligned_at(skew_row(in, ld_b, r));
    unsigned x4 = 0;
    if constexpr (S <= 2) {
      // The next word's first 4 bytes, for the funnel shift: the next lane's;
      // the row's last lane reads the extra word's (the sector its
      // neighbour read whole).
      x4 = __shfl_down_sync(0xffffffffu, g.v[k].x, 1, NW);
      if (w == NW - 1)
        x4 = (a.m & 3u) == 0                 ? 0u
             : a.a + 16 * NW + 4 <= limit ? *reinterpret_cast<const unsigned*>(a.a + 16 * NW)
                                          : tail_word({a.a + 16 * (NW - 1), a.m}).x;
    }
    skew_put<S>(sm + (Cfg::G + r) * Cfg::PITCH + 16, w, a.m, g.v[k], x4);
  }
#pragma unroll
  for (int k = 0; k < Cfg::NX; ++k) {
    const int r = int(threadIdx.x) + k * Cfg::THREADS;
    if (r < Cfg::TR) {
      const unsigned m = misaligned_at(skew_row(in, ld_b, r)).m;
      if (m != 0) skew_put<S>(sm + (Cfg::G + r) * Cfg::PITCH + 16, NW, m, g.x[k], 0);
    }
  }
}

template <class Cfg>
__device__ __forceinline__ void skew_load(unsigned char* sm, const unsigned char* in, std::uint64_t ld_b,
                                          const unsigned char* limit) {
  SkewRegs<Cfg> g;
  skew_fetch<Cfg>(g, in, ld_b, limit);
  skew_stash<Cfg>(g, sm, in, ld_b, limit);
}

// The 16 bytes at p in shared memory, p 4-byte aligned or not: five 32-bit
// loads and four funnel shifts.
__device__ __forceinline__ uint4 shared_word(const unsigned char* p) {
  // The offset from p itself (not a round trip through an integer), so the
  // loads stay shared-memory loads rather than generic ones.
  const unsigned o = unsigned(reinterpret_cast<std::uintptr_t>(p)) & 3u;
  const auto* q = reinterpret_cast<const unsigned*>(p - o);
  const unsigned sh = o * 8u;
  const unsigned u0 = q[0], u1 = q[1], u2 = q[2], u3 = q[3], u4 = q[4];
  return make_uint4(__funnelshift_r(u0, u1, sh), __funnelshift_r(u1, u2, sh), __funnelshift_r(u2, u3, sh),
                    __funnelshift_r(u3, u4, sh));
}

// Aligned word w of output row c, whose segment starts h bytes into its
// first word: gathered down column c of the tile at sm (word w holds tile
// rows (16 w - h) / S on), or with T2 read from row c of the transposed
// tile at sm.
template <class Cfg>
__device__ __forceinline__ uint4 skew_word(const unsigned char* sm, int c, int w, unsigned h) {
  if constexpr (Cfg::T2) {
    return shared_word(sm + c * Cfg::BP + 16 + 16 * w - int(h));
  } else {
    constexpr int P = Cfg::PITCH;
    return skew_gather<Cfg::S, P>(sm + Cfg::G * P + 16 + c * int(Cfg::S) + (16 * w - int(h)) / int(Cfg::S) * P);
  }
}

// Stores the transpose of the shared tile (T2: the transposed tile):
// output rows out, out + ld_b, ... (TC of them), TR elements each. ends:
// which partial words it stores (super.cuh: Ends; overlapping tile rows,
// skew_kernel's OVERLAP, store neither where another tile does).
template <class Cfg>
__device__ __forceinline__ void skew_store(const unsigned char* sm, unsigned char* out, std::uint64_t ld_b,
                                           Ends ends = {}) {
  constexpr std::size_t S = Cfg::S;
  constexpr int NO = Cfg::NO;
#pragma unroll(Cfg::T2 ? 2 : Cfg::TC * Cfg::NO / Cfg::THREADS)
  for (int k = 0; k < Cfg::TC * NO / Cfg::THREADS; ++k) {
    const int item = int(threadIdx.x) + k * Cfg::THREADS;
    const int c = item / NO, i = item % NO;
    const MisalignedRead q = misaligned_at(out + std::uint64_t(c) * ld_b);
    const unsigned h = q.m;
    unsigned char* a = const_cast<unsigned char*>(q.a);
    // The word read before any branch, as before the overlap: reading it
    // inside the branches cost 0.3-1.0 points at f32 shapes that keep
    // whole output words (run 243, random shapes, against run 236).
    const uint4 v = skew_word<Cfg>(sm, c, i, h);
    if (i != 0 || (h == 0 && ends.head)) {
      store16<false>(a + 16 * i, v);
    } else if (h != 0 && (ends.head || ends.tail)) {
      if (ends.head) store_head<S>(a, v, h);
      if (ends.tail) store_tail<S>(a + 16 * NO, skew_word<Cfg>(sm, c, NO, h), h);
    }
  }
}

// T2: the transpose of the shared tile at sm (element (r, c) at sm + r PITCH
// + 16 + c S) into the one at b (element (c, r) at b + c BP + 16 + r S), a
// block of RB x RB elements (one 32-bit word of each of RB rows) at a time:
// RB shared loads, byte permutes, RB shared stores. A warp takes 32 / RB
// blocks across by RB down, which the pitches spread over the 32 banks on
// both sides.
template <class Cfg>
__device__ __forceinline__ void skew_transpose(const unsigned char* sm, unsigned char* b) {
  constexpr int RB = Cfg::RB, NCB = Cfg::TCB / 4, LC = 32 / RB, WCB = NCB / LC;
  const unsigned char* a = sm + 16;  // element (0, 0)
#pragma unroll 1
  for (int k = 0; k < Cfg::TR / RB * NCB / Cfg::THREADS; ++k) {
    const int item = int(threadIdx.x) + k * Cfg::THREADS, lane = item & 31, wi = item >> 5;
    const int cb = wi % WCB * LC + lane % LC, rb = wi / WCB * RB + lane / LC;
    unsigned v[RB], t[RB];
#pragma unroll
    for (int j = 0; j < RB; ++j) v[j] = *reinterpret_cast<const unsigned*>(a + (RB * rb + j) * Cfg::PITCH + 4 * cb);
    if constexpr (RB == 4) {
      // Bytes: v[j] = row j's columns 0..3; t[m] = column m's rows 0..3.
      const unsigned p0 = __byte_perm(v[0], v[1], 0x5140), p1 = __byte_perm(v[0], v[1], 0x7362);
      const unsigned p2 = __byte_perm(v[2], v[3], 0x5140), p3 = __byte_perm(v[2], v[3], 0x7362);
      t[0] = __byte_perm(p0, p2, 0x5410);
      t[1] = __byte_perm(p0, p2, 0x7632);
      t[2] = __byte_perm(p1, p3, 0x5410);
      t[3] = __byte_perm(p1, p3, 0x7632);
    } else {
      t[0] = __byte_perm(v[0], v[1], 0x5410);
      t[1] = __byte_perm(v[0], v[1], 0x7632);
    }
#pragma unroll
    for (int m = 0; m < RB; ++m) *reinterpret_cast<unsigned*>(b + (RB * cb + m) * Cfg::BP + 16 + 4 * rb) = t[m];
  }
}

// OVERLAP: tile rows TR - 16 / S apart, each tile's first output word of
// every row the tile above's last (super.cuh: overlap_stride).
template <class Cfg, bool OVERLAP = false>
__global__ void __launch_bounds__(Cfg::THREADS, Cfg::MINB)
    skew_kernel(const unsigned char* __restrict__ in, unsigned char* __restrict__ out, Dims d, std::uint64_t ntr,
                std::uint64_t ntc, std::uint32_t group, LastTile last) {
  constexpr std::size_t S = Cfg::S;
  extern __shared__ uint4 skew_smem[];
  unsigned char* sm = reinterpret_cast<unsigned char*>(skew_smem);
  const std::uint64_t ntiles = ntr * ntc;
  const unsigned char* limit = in + ((d.rows - 1) * d.ld_in + d.cols) * S;  // one past the input's last byte
  for (std::uint64_t b = blockIdx.x; b < ntiles; b += gridDim.x) {
    const TileIdx t = grouped_tile(b, ntr, ntc, group);
    std::uint64_t r0, c0;
    tile_origin<Cfg>(t, ntr, ntc, last, r0, c0);
    Ends ends;
    if constexpr (OVERLAP) {
      if (t.r + 1 < ntr) r0 = t.r * overlap_stride<Cfg>();
      ends = {t.r == 0, t.r + 1 == ntr};
    }
    if (r0 + Cfg::TR <= d.rows && c0 + Cfg::TC <= d.cols) {
      skew_load<Cfg>(sm, in + (r0 * d.ld_in + c0) * S, d.ld_in * S, limit);
      __syncthreads();
      if constexpr (Cfg::T2) {
        skew_transpose<Cfg>(sm, sm + Cfg::A_BYTES);
        __syncthreads();
        skew_store<Cfg>(sm + Cfg::A_BYTES, out + (c0 * d.ld_out + r0) * S, d.ld_out * S, ends);
      } else {
        skew_store<Cfg>(sm, out + (c0 * d.ld_out + r0) * S, d.ld_out * S, ends);
      }
    } else {
      edge_tile<Cfg>(sm, in, out, d, r0, c0);
    }
    if (b + gridDim.x < ntiles) __syncthreads();  // the next tile reuses the shared rows
  }
}

template <class Cfg, bool OVERLAP = false>
void launch_skew_tiles(const void* in, void* out, const Dims& d, cudaStream_t stream, std::uint32_t group,
                       int origin = 0) {
  // The last tiles where last_origin puts them (any origin: rows at any
  // offset); overlapping tile rows end at the last row.
  LastTile last = last_tile(d, Cfg::TR, Cfg::TC, 1, origin);
  const std::uint64_t ntr = OVERLAP ? overlap_tile_rows<Cfg>(d, last) : ceil_div(d.rows, Cfg::TR);
  const std::uint64_t ntc = ceil_div(d.cols, Cfg::TC);
  auto kernel = skew_kernel<Cfg, OVERLAP>;
  if (Cfg::SMEM > kDefaultSmem)
    GT_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(Cfg::SMEM)));
  kernel<<<grid_1d(ntr * ntc), Cfg::THREADS, Cfg::SMEM, stream>>>(static_cast<const unsigned char*>(in),
                                                                 static_cast<unsigned char*>(out), d, ntr, ntc, group,
                                                                 last);
}

}  // namespace gt::kernels::detail
