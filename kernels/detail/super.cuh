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

// --- rows that are not 16-byte aligned ---------------------------------------
// An odd row length (12345 x 6789 f32: 27156 bytes per row) leaves every row
// at its own offset from a 16-byte boundary. The misaligned path keeps the
// tile machinery's 16-byte accesses: the G lanes that read (or write)
// consecutive 16-byte chunks of one row use only aligned 16-byte words,
// exchange neighbouring words with warp shuffles, and realign in registers.
// Per row segment that is one extra aligned load (the word after the last
// chunk) and, on the store side, two partial words (the segment's first and
// last), written with the widest aligned stores that touch only the tile's
// own bytes.

// 16 bytes starting at byte s (0..15) of the 32 bytes lo || hi, for rows
// of S-byte elements (s is a multiple of S: for S >= 4 a word rotation
// alone, for S = 8 one select): a rotation by s/4 words in two select
// stages (by 1 word, then by 2; static indices, so no local memory), then a
// funnel shift by the rest. Run 67 profiled the misaligned path as issue
// bound (1-byte rows: 8x the aligned kernel's instructions, half of them
// selects), so the stages share their first-level selects.
template <std::size_t S>
__device__ __forceinline__ uint4 window16(const uint4& lo, const uint4& hi, unsigned s) {
  if constexpr (S >= 16) {
    return lo;
  } else if constexpr (S == 8) {
    return s ? make_uint4(lo.z, lo.w, hi.x, hi.y) : lo;
  } else {
    const unsigned x[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
    constexpr int N = S >= 4 ? 4 : 5;  // words needed: one more when bytes shift within a word
    const bool by1 = (s & 4u) != 0, by2 = (s & 8u) != 0;
    unsigned u[N + 2];
#pragma unroll
    for (int j = 0; j < N + 2; ++j) u[j] = by1 ? x[j + 1] : x[j];  // j + 1 <= 7
    unsigned y[N];
#pragma unroll
    for (int i = 0; i < N; ++i) y[i] = by2 ? u[i + 2] : u[i];
    if constexpr (S >= 4) {
      return make_uint4(y[0], y[1], y[2], y[3]);
    } else {
      const unsigned bs = (s & 3u) * 8u;
      return make_uint4(__funnelshift_r(y[0], y[1], bs), __funnelshift_r(y[1], y[2], bs),
                        __funnelshift_r(y[2], y[3], bs), __funnelshift_r(y[3], y[4], bs));
    }
  }
}

__device__ __forceinline__ uint4 shfl_down16(const uint4& v, int width) {
  return make_uint4(__shfl_down_sync(0xffffffffu, v.x, 1, width), __shfl_down_sync(0xffffffffu, v.y, 1, width),
                    __shfl_down_sync(0xffffffffu, v.z, 1, width), __shfl_down_sync(0xffffffffu, v.w, 1, width));
}
// Lane g - 1's v (lane 0: lane G - 1's), within groups of G lanes.
template <int G>
__device__ __forceinline__ uint4 shfl_prev16(const uint4& v) {
  const int src = (int(threadIdx.x) - 1) & (G - 1);
  return make_uint4(__shfl_sync(0xffffffffu, v.x, src, G), __shfl_sync(0xffffffffu, v.y, src, G),
                    __shfl_sync(0xffffffffu, v.z, src, G), __shfl_sync(0xffffffffu, v.w, src, G));
}

// Bytes [m, 16) of w at the 16-byte aligned address a (0 < m < 16), and
// bytes [0, m): a row segment's first and last partial words, whose other
// bytes belong to another tile and are not touched. Straight-line stores of
// the widest aligned pieces (at most four), predicated rather than looped,
// so the lanes that skip them do not wait on a loop.
template <std::size_t S>
__device__ __forceinline__ void store_head(unsigned char* a, const uint4& w, unsigned m) {
  unsigned o = m;  // a multiple of S: pieces narrower than S never occur
  if (S == 1 && (o & 1u)) {
    a[o] = static_cast<unsigned char>(word(w, int(o >> 2)) >> (8 * (o & 3u)));
    o += 1;
  }
  if (S <= 2 && (o & 2u) && o < 16) {
    *reinterpret_cast<unsigned short*>(a + o) = static_cast<unsigned short>(word(w, int(o >> 2)) >> (8 * (o & 3u)));
    o += 2;
  }
  if (S <= 4 && (o & 4u) && o < 16) {
    *reinterpret_cast<unsigned*>(a + o) = word(w, int(o >> 2));
    o += 4;
  }
  if ((o & 8u) && o < 16) *reinterpret_cast<uint2*>(a + o) = make_uint2(w.z, w.w);
}
template <std::size_t S>
__device__ __forceinline__ void store_tail(unsigned char* a, const uint4& w, unsigned m) {
  unsigned o = 0;
  if (m & 8u) {
    *reinterpret_cast<uint2*>(a) = make_uint2(w.x, w.y);
    o = 8;
  }
  if (S <= 4 && (m & 4u)) {
    *reinterpret_cast<unsigned*>(a + o) = word(w, int(o >> 2));
    o += 4;
  }
  if (S <= 2 && (m & 2u)) {
    *reinterpret_cast<unsigned short*>(a + o) = static_cast<unsigned short>(word(w, int(o >> 2)) >> (8 * (o & 3u)));
    o += 2;
  }
  if (S == 1 && (m & 1u)) a[o] = static_cast<unsigned char>(word(w, int(o >> 2)) >> (8 * (o & 3u)));
}

// Reading a misaligned 16-byte chunk at p takes two aligned words: the one
// holding p (read by the lane itself) and the next (read by the next lane of
// the group, and passed over by a shuffle), so the group reads each aligned
// word once; the group's last lane also reads the word after the segment.
// The reads are issued together (load_tile issues all of a thread's reads
// before any shuffle), the realignment follows. `limit` is one past the last
// byte the matrix holds: the extra word is read whole only below it, else
// byte by byte (only at the very end of the matrix).
struct MisalignedRead {
  const unsigned char* a;  // the aligned word holding p
  unsigned m;              // p - a
};

__device__ __forceinline__ MisalignedRead misaligned_at(const unsigned char* p) {
  const unsigned m = unsigned(reinterpret_cast<std::uintptr_t>(p) & 15u);
  return {p - m, m};
}

template <bool STREAM>
__device__ __forceinline__ uint4 extra_word(const MisalignedRead& r, bool last, const unsigned char* limit) {
  return last && r.m != 0 && r.a + 32 <= limit ? load16<STREAM>(r.a + 16) : make_uint4(0, 0, 0, 0);
}

// The word after a segment that ends the matrix: only its first m bytes
// are the matrix's, read byte by byte.
__device__ __forceinline__ uint4 tail_word(const MisalignedRead& r) {
  unsigned b0 = 0, b1 = 0, b2 = 0, b3 = 0;
  for (unsigned i = 0; i < r.m; ++i) {
    const unsigned v = unsigned(r.a[16 + i]) << (8 * (i & 3u));
    if (i < 4) b0 |= v;
    else if (i < 8) b1 |= v;
    else if (i < 12) b2 |= v;
    else b3 |= v;
  }
  return make_uint4(b0, b1, b2, b3);
}

template <std::size_t S, int G>
__device__ __forceinline__ uint4 realign(const uint4& w, uint4 extra, const MisalignedRead& r, bool last,
                                         const unsigned char* limit) {
  uint4 next = shfl_down16(w, G);
  if (last && r.m != 0) {
    if (r.a + 32 > limit) extra = tail_word(r);  // the matrix's last bytes
    next = extra;
  }
  return window16<S>(w, next, r.m);
}

// Stores v as the 16 bytes at q (any address), lane g of a group of G lanes
// whose q are consecutive 16-byte chunks of one row. Every lane of the warp
// must call it (it shuffles). Each lane stores the aligned word holding the
// end of the previous lane's chunk and the start of its own: one window of
// (prev, v). Lane 0's prev is the group's last chunk (a rotation), so its
// one window holds both partial words: bytes [m, 16), the segment's head,
// and bytes [0, m), its tail (lane G - 1's last m bytes, one word past it).
//
// Overlapping tile rows (the misaligned paths' OVERLAP: padded_kernel,
// skew_kernel): a tile's first 16 bytes of output rows (16 / S input rows)
// are the last 16 of the tile above it, so tile rows start TR - 16 / S rows
// apart (overlap_stride), and the last one ends at the matrix's last row.
// Each output row segment then starts where the tile above stopped storing
// whole words: lane 0's word is the tile above's, and lane G - 1's tail
// word the tile below's, so only the first tile of a column stores a head
// (Ends::head) and only the last a tail (Ends::tail). Every other tile's
// lanes store whole words alone, where otherwise every warp waited on one
// lane's head and tail pieces: Nsight (run 238, u8 16383x16385) counted
// those at half the misaligned kernel's instructions, 108 of 218 a 16-byte
// word. The overlap is read twice.
struct Ends {
  bool head = true, tail = true;
};

template <class Cfg>
__host__ __device__ constexpr std::uint64_t overlap_stride() {
  return std::uint64_t(Cfg::TR) - 16 / Cfg::S;
}
// The launchers' side: how many overlapping tile rows, the last one's
// origin set to end at the last row (d.rows >= TR: the skinny kernel takes
// fewer rows).
template <class Cfg>
std::uint64_t overlap_tile_rows(const Dims& d, LastTile& last) {
  if (d.rows < std::uint64_t(Cfg::TR)) throw Error(ErrorKind::internal, "overlapping tile rows need a whole tile");
  last.r = d.rows - Cfg::TR;
  return d.rows == std::uint64_t(Cfg::TR) ? 1 : 1 + ceil_div(d.rows - Cfg::TR, overlap_stride<Cfg>());
}

template <std::size_t S, int G, bool STREAM>
__device__ __forceinline__ void store16_any(unsigned char* q, const uint4& v, int g, Ends ends = {}) {
  const unsigned m = unsigned(reinterpret_cast<std::uintptr_t>(q) & 15u);
  const uint4 prev = shfl_prev16<G>(v);
  if (m == 0) {  // the same for the whole group: one row
    if (g != 0 || ends.head) store16<STREAM>(q, v);
    return;
  }
  unsigned char* a = q - m;
  const uint4 w = window16<S>(prev, v, 16 - m);
  if (g != 0) {
    store16<STREAM>(a, w);
  } else if (ends.head || ends.tail) {
    if (ends.head) store_head<S>(a, w, m);
    if (ends.tail) store_tail<S>(a + 16 * G, w, m);
  }
}

// store16_any() with the partial words spread over the group's lanes
// (SpreadEnds<C> below). store16_any leaves both partial words of a segment
// to lane 0, whose head and tail pieces (up to four stores each) every warp
// waits on: run 238 counted them at half of `padded`'s misaligned u8 kernel's
// instructions. Here lane g of the 8 stores bytes 2g and 2g + 1 of lane 0's
// window (the boundary word): below m they are tail (at a + 16 G), from m on
// head (at a); a pair of 1-byte elements that m splits goes as two bytes.
// Every lane of the warp must call it (it shuffles before any branch).
template <std::size_t S, int G, bool STREAM>
__device__ __forceinline__ void store16_spread(unsigned char* q, const uint4& v, int g, Ends ends = {}) {
  static_assert(S <= 2 && G == 8, "2-byte units: 1- or 2-byte elements, 8 lanes an output row");
  const unsigned m = unsigned(reinterpret_cast<std::uintptr_t>(q) & 15u);
  const uint4 prev = shfl_prev16<G>(v);
  const uint4 w = window16<S>(prev, v, (16u - m) & 15u);  // lane 0's: the segment's head || tail
  // Lane 0's window, word by word, in every lane of its group.
  const int src = int(threadIdx.x) & ~(G - 1) & 31;
  const unsigned o = unsigned(2 * g);  // this lane's unit
  const unsigned k = (o >> 2) & 3u;
  const unsigned x0 = __shfl_sync(0xffffffffu, w.x, src), x1 = __shfl_sync(0xffffffffu, w.y, src),
                 x2 = __shfl_sync(0xffffffffu, w.z, src), x3 = __shfl_sync(0xffffffffu, w.w, src);
  if (m == 0) {  // the same for the whole group: one row
    if (g != 0 || ends.head) store16<STREAM>(q, v);
    return;
  }
  unsigned char* a = q - m;
  if (g != 0) store16<STREAM>(a, w);
  unsigned char* a0 = a - 16 * g;  // lane 0's word: the head's
  const unsigned u = ((k & 2u) ? ((k & 1u) ? x3 : x2) : ((k & 1u) ? x1 : x0)) >> (8 * (o & 3u));
  if (o >= m) {
    if (ends.head) *reinterpret_cast<unsigned short*>(a0 + o) = static_cast<unsigned short>(u);
  } else if (o + 2 <= m) {
    if (ends.tail) *reinterpret_cast<unsigned short*>(a0 + 16 * G + o) = static_cast<unsigned short>(u);
  } else {  // 1-byte elements, m = o + 1: a tail byte, then a head byte
    if (ends.tail) a0[16 * G + o] = static_cast<unsigned char>(u);
    if (ends.head) a0[o + 1] = static_cast<unsigned char>(u >> 8);
  }
}

// --- the same, where every lane of a warp shares one offset -------------------
// When the groups of lanes in a warp take rows (or output rows) whose starts
// lie at the same offset from a 16-byte boundary (the spread order below),
// the offset is the same in every lane, so the realignment can branch on it:
// each case shuffles only the neighbour's words it needs (1 to 4, 2.5 on
// average for 1- and 2-byte rows) and takes them with static indices, where
// window16 shuffles all four and picks among them with selects in every lane
// (run 67 found half the 1-byte path's instructions were such selects). The
// branch is the same in every lane, so the shuffles inside it see the whole
// warp. It gained only at 1-byte rows (Realign below, runs 141-142).

// The 16 bytes at byte offset m (0..15, a multiple of S, the same in every
// lane of the warp) of the 32 bytes lo || hi, whose word j (0..7, always a
// constant here) is x(j): a rotation by whole words, then a funnel shift by
// the rest. Each case asks x only for the words it reads, so a side that x
// shuffles in from another lane is shuffled word by word, as needed.
template <std::size_t S, class X>
__device__ __forceinline__ uint4 window_uniform(unsigned m, X x) {
  if constexpr (S >= 16) {
    return make_uint4(x(0), x(1), x(2), x(3));
  } else if constexpr (S == 8) {
    if (m == 0) return make_uint4(x(0), x(1), x(2), x(3));
    return make_uint4(x(2), x(3), x(4), x(5));
  } else {
    const unsigned bs = (m & 3u) * 8u;
    if (S >= 4 || bs == 0) {
      switch (m >> 2) {
        case 0: return make_uint4(x(0), x(1), x(2), x(3));
        case 1: return make_uint4(x(1), x(2), x(3), x(4));
        case 2: return make_uint4(x(2), x(3), x(4), x(5));
        default: return make_uint4(x(3), x(4), x(5), x(6));
      }
    }
    const auto f = [bs](unsigned a, unsigned b) { return __funnelshift_r(a, b, bs); };
    const auto shifted = [&](unsigned a0, unsigned a1, unsigned a2, unsigned a3, unsigned a4) {
      return make_uint4(f(a0, a1), f(a1, a2), f(a2, a3), f(a3, a4));
    };
    switch (m >> 2) {
      case 0: return shifted(x(0), x(1), x(2), x(3), x(4));
      case 1: return shifted(x(1), x(2), x(3), x(4), x(5));
      case 2: return shifted(x(2), x(3), x(4), x(5), x(6));
      default: return shifted(x(3), x(4), x(5), x(6), x(7));
    }
  }
}

// realign() for a warp whose lanes share r.m: w || the next lane's w.
template <std::size_t S, int G>
__device__ __forceinline__ uint4 realign_uniform(const uint4& w, uint4 extra, const MisalignedRead& r, bool last,
                                                 const unsigned char* limit) {
  if (last && r.m != 0 && r.a + 32 > limit) extra = tail_word(r);  // the matrix's last bytes
  return window_uniform<S>(r.m, [&](int j) {
    if (j < 4) return word(w, j);
    const unsigned n = __shfl_down_sync(0xffffffffu, word(w, j - 4), 1, G);
    return last ? word(extra, j - 4) : n;
  });
}

// store16_any() for a warp whose lanes share q's offset from a 16-byte
// boundary: bytes [16 - m, 16) of the previous lane's v, then bytes
// [0, 16 - m) of v, the window at 16 - m of prev || v.
template <std::size_t S, int G, bool STREAM>
__device__ __forceinline__ void store16_uniform(unsigned char* q, const uint4& v, int g, Ends ends = {}) {
  const unsigned m = unsigned(reinterpret_cast<std::uintptr_t>(q) & 15u);
  if (m == 0) {
    if (g != 0 || ends.head) store16<STREAM>(q, v);
    return;
  }
  const int src = (int(threadIdx.x) - 1) & (G - 1);
  const uint4 w = window_uniform<S>(16u - m, [&](int j) {
    return j < 4 ? __shfl_sync(0xffffffffu, word(v, j), src, G) : word(v, j - 4);
  });
  unsigned char* a = q - m;
  if (g != 0) {
    store16<STREAM>(a, w);
  } else if (ends.head || ends.tail) {
    if (ends.head) store_head<S>(a, w, m);
    if (ends.tail) store_tail<S>(a + 16 * G, w, m);
  }
}

// A tiling: TSR x TSC supers per tile, THREADS threads, at least MINB blocks
// per SM (launch bounds), lane walk directions, cache policy.
template <std::size_t S_, int TSR_, int TSC_, int THREADS_, int MINB_, bool A_DOWN_, bool B_ACROSS_, bool STREAM_>
struct SuperCfg {
  static constexpr std::size_t S = S_;
  static constexpr int K = SuperShape<S>::K, C = SuperShape<S>::C;
  static constexpr int TSR = TSR_, TSC = TSC_, THREADS = THREADS_, MINB = MINB_;
  static constexpr bool A_DOWN = A_DOWN_, B_ACROSS = B_ACROSS_, STREAM = STREAM_;
  // The misaligned path's realignment: false, every lane on its own
  // (window16); true, one offset a warp (window_uniform, in the spread
  // order). Realign<C, true> sets it.
  static constexpr bool UNIFORM_REALIGN = false;
  // The lane-by-lane path's partial words: false, lane 0 of a group stores
  // both (store16_any); true, every lane of the group a unit (store16_spread).
  // SpreadEnds<C> sets it.
  static constexpr bool SPREAD_ENDS = false;
  static constexpr int TR = TSR * K, TC = TSC * C;  // tile in elements
  static constexpr int PITCH = TSC + 1;             // supers per shared row (odd)
  static constexpr int XA = TSC / K;                // A-blocks per super-row
  static constexpr int NA = TSR * XA / THREADS;     // A-blocks per thread
  static constexpr int Y = TSR / C;                 // B-blocks per super-column
  static constexpr int NB = TSC * Y / THREADS;      // B-blocks per thread
  static constexpr std::size_t SMEM = std::size_t(TSR) * PITCH * 16;
  // Lanes that read consecutive 16-byte chunks of one input row (A lanes
  // along) and that write consecutive chunks of one output row (B lanes
  // down): the groups of the misaligned path.
  static constexpr int GA = XA < 32 ? XA : 32;
  static constexpr int GB = Y < 32 ? Y : 32;
  static_assert(TSC % K == 0 && TSR % C == 0, "tile must hold whole A- and B-blocks");
  static_assert(NA >= 1 && NA * THREADS == TSR * XA, "A-blocks must divide evenly among threads");
  static_assert(NB >= 1 && NB * THREADS == TSC * Y, "B-blocks must divide evenly among threads");
  static_assert(!A_DOWN || TSR % 8 == 0, "A_DOWN walks 8 super-rows per quarter-warp");
  static_assert(!B_ACROSS || TSC % 8 == 0, "B_ACROSS walks 8 super-cols per quarter-warp");
  static_assert(THREADS % 32 == 0, "whole warps");
};

// Whether a tiling's lanes can take rows at any byte offset: grouped along
// rows on both sides (MisalignedRead, store16_any below).
template <class C>
constexpr bool can_misalign_v = !C::A_DOWN && !C::B_ACROSS && 32 % C::GA == 0 && 32 % C::GB == 0;

// A tiling whose misaligned path realigns one offset a warp (U) or lane by
// lane. Runs 141-142 (H100, % of a copy, same process, lane by lane -> one
// offset a warp; 12345x6789, 16383x16385, 16383x32769): `padded` u8 77.1 ->
// 79.8, 71.1 -> 72.6, 71.8 -> 73.3 (run 142: 76.8 -> 79.4, 71.2 -> 72.4, 71.6
// -> 73.1); f16 84.3 -> 84.9, 81.8 -> 82.4, 81.7 -> 82.3 in run 141 but 89.0
// -> 83.4, 81.7 -> 76.5, 81.4 -> 75.6 in run 142; f32 100.2 -> 82.9, 84.9 ->
// 71.2 and f64 106.8 -> 93.4, 91.3 -> 80.1 (77 -> 95 and 66 -> 96 registers:
// three blocks an SM -> two); `inplace-tiled` f16 67.4 -> 65.3, 70.5 -> 67.4,
// f32 75.2 -> 73.6, u8 and f64 the same. So only `padded`'s 1-byte Mis
// tiling takes it.
template <class C, bool U>
struct Realign : C {
  static constexpr bool UNIFORM_REALIGN = U;
};

// A tiling whose lane-by-lane misaligned path stores its partial words
// spread over the lanes (store16_spread).
template <class C>
struct SpreadEnds : C {
  static_assert(C::S <= 2 && C::GB == 8, "store16_spread: 1- or 2-byte elements, 8 lanes an output row");
  static constexpr bool SPREAD_ENDS = true;
};

// The spread order (the misaligned path's, where the tiling allows it): the
// groups of a warp (32 / GA on the load side, 32 / GB on the store side)
// take super-rows (super-columns) 4 apart, instead of side by side. Four
// super-rows are 4K input rows, whose byte distance 4K * S * ld is a
// multiple of 16 at every element size (K * S is 4, 8 or 16), and four
// super-columns are 4C output rows (C * S is 4, 8 or 16): so every lane of a
// warp reads (writes) rows at the same offset from a 16-byte boundary, and
// realigns with window_uniform. A line count that is not a multiple of four
// warps' groups keeps the lane-by-lane path.
template <int LINES, int PER>
constexpr bool spreads_v = PER >= 32 || LINES % (4 * (32 / PER)) == 0;
template <class C>
constexpr bool warp_uniform_v = can_misalign_v<C> && C::UNIFORM_REALIGN && spreads_v<C::TSR, C::XA> &&
                                spreads_v<C::TSC, C::Y>;

// Block index a -> (line, position along it) in the spread order, PER
// blocks a line (PER < 32: a warp holds 32 / PER lines).
template <int PER>
__device__ __forceinline__ void spread_coords(int a, int& line, int& pos) {
  if constexpr (PER >= 32) {
    line = a / PER;
    pos = a % PER;
  } else {
    constexpr int NG = 32 / PER;
    const int w = a >> 5, l = a & 31;
    line = (w >> 2) * (4 * NG) + (w & 3) + 4 * (l / PER);
    pos = l % PER;
  }
}

// A-block a -> (super-row, A-block column).
template <class Cfg, bool SPREAD = false>
__device__ __forceinline__ void a_coords(int a, int& sr, int& xa) {
  if constexpr (SPREAD) {
    spread_coords<Cfg::XA>(a, sr, xa);
  } else if constexpr (Cfg::A_DOWN) {
    sr = (a & 7) + 8 * ((a >> 3) / Cfg::XA);
    xa = (a >> 3) % Cfg::XA;
  } else {
    sr = a / Cfg::XA;
    xa = a % Cfg::XA;
  }
}

// B-block b -> (super-column, B-block row).
template <class Cfg, bool SPREAD = false>
__device__ __forceinline__ void b_coords(int b, int& sc, int& y) {
  if constexpr (SPREAD) {
    spread_coords<Cfg::Y>(b, sc, y);
  } else if constexpr (Cfg::B_ACROSS) {
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

// Global -> registers. src: the tile's first element; in_pitch: bytes per
// input row. MISALIGNED: rows at any element-aligned offset (see
// MisalignedRead; limit is one past the matrix's last byte); the tiling must
// walk A lanes along the rows.
template <class Cfg, bool MISALIGNED = false>
__device__ __forceinline__ void load_tile(TileRegs<Cfg>& regs, const unsigned char* src, std::uint64_t in_pitch,
                                          const unsigned char* limit = nullptr) {
  static_assert(!MISALIGNED || (!Cfg::A_DOWN && 32 % Cfg::GA == 0 && Cfg::XA % Cfg::GA == 0),
                "the misaligned path needs groups of lanes along one row");
  if constexpr (MISALIGNED) {
    constexpr bool U = warp_uniform_v<Cfg>;
    uint4 extra[Cfg::NA][Cfg::K];
    MisalignedRead at[Cfg::NA][Cfg::K];
    bool last[Cfg::NA];
#pragma unroll
    for (int i = 0; i < Cfg::NA; ++i) {
      int sr, xa;
      a_coords<Cfg, U>(i * Cfg::THREADS + int(threadIdx.x), sr, xa);
      last[i] = xa % Cfg::GA == Cfg::GA - 1;
      const unsigned char* p = src + std::uint64_t(sr * Cfg::K) * in_pitch + xa * 16;
#pragma unroll
      for (int k = 0; k < Cfg::K; ++k) {
        at[i][k] = misaligned_at(p + k * in_pitch);
        regs.v[i][k] = load16<Cfg::STREAM>(at[i][k].a);
        extra[i][k] = extra_word<Cfg::STREAM>(at[i][k], last[i], limit);
      }
    }
#pragma unroll
    for (int i = 0; i < Cfg::NA; ++i)
#pragma unroll
      for (int k = 0; k < Cfg::K; ++k) {
        if constexpr (U)
          regs.v[i][k] = realign_uniform<Cfg::S, Cfg::GA>(regs.v[i][k], extra[i][k], at[i][k], last[i], limit);
        else
          regs.v[i][k] = realign<Cfg::S, Cfg::GA>(regs.v[i][k], extra[i][k], at[i][k], last[i], limit);
      }
  } else {
#pragma unroll
    for (int i = 0; i < Cfg::NA; ++i) {
      int sr, xa;
      a_coords<Cfg>(i * Cfg::THREADS + int(threadIdx.x), sr, xa);
      const unsigned char* p = src + std::uint64_t(sr * Cfg::K) * in_pitch + xa * 16;
#pragma unroll
      for (int k = 0; k < Cfg::K; ++k) regs.v[i][k] = load16<Cfg::STREAM>(p + k * in_pitch);
    }
  }
}

// Registers -> shared supers (transposed in registers on the way).
// MISALIGNED: as load_tile's (the same order).
template <class Cfg, bool MISALIGNED = false>
__device__ __forceinline__ void stash_tile(const TileRegs<Cfg>& regs, uint4 (*sm)[Cfg::PITCH]) {
#pragma unroll
  for (int i = 0; i < Cfg::NA; ++i) {
    int sr, xa;
    a_coords<Cfg, MISALIGNED && warp_uniform_v<Cfg>>(i * Cfg::THREADS + int(threadIdx.x), sr, xa);
#pragma unroll
    for (int m = 0; m < Cfg::K; ++m) sm[sr][xa * Cfg::K + m] = to_super<Cfg::S>(regs.v[i], m);
  }
}

// Shared supers -> global, transposed. dst: the output tile's first element
// (row = the tile's first input column); out_pitch: bytes per output row.
// MISALIGNED: output rows at any element-aligned offset (store16_any); the
// tiling must walk B lanes down the output rows.
// ends: which partial words the tile stores (Ends; the misaligned path only).
template <class Cfg, bool MISALIGNED = false>
__device__ __forceinline__ void store_tile(const uint4 (*sm)[Cfg::PITCH], unsigned char* dst,
                                           std::uint64_t out_pitch, Ends ends = {}) {
  static_assert(!MISALIGNED || (!Cfg::B_ACROSS && 32 % Cfg::GB == 0 && Cfg::Y % Cfg::GB == 0),
                "the misaligned path needs groups of lanes along one row");
  constexpr bool U = MISALIGNED && warp_uniform_v<Cfg>;
#pragma unroll
  for (int j = 0; j < Cfg::NB; ++j) {
    int sc, y;
    b_coords<Cfg, U>(j * Cfg::THREADS + int(threadIdx.x), sc, y);
    uint4 s[Cfg::C];
#pragma unroll
    for (int i = 0; i < Cfg::C; ++i) s[i] = sm[y * Cfg::C + i][sc];
    unsigned char* q = dst + std::uint64_t(sc * Cfg::C) * out_pitch + y * 16;
#pragma unroll
    for (int jj = 0; jj < Cfg::C; ++jj) {
      if constexpr (U)
        store16_uniform<Cfg::S, Cfg::GB, Cfg::STREAM>(q + jj * out_pitch, gather<Cfg::S>(s, jj), y % Cfg::GB, ends);
      else if constexpr (MISALIGNED && Cfg::SPREAD_ENDS)
        store16_spread<Cfg::S, Cfg::GB, Cfg::STREAM>(q + jj * out_pitch, gather<Cfg::S>(s, jj), y % Cfg::GB, ends);
      else if constexpr (MISALIGNED)
        store16_any<Cfg::S, Cfg::GB, Cfg::STREAM>(q + jj * out_pitch, gather<Cfg::S>(s, jj), y % Cfg::GB, ends);
      else
        store16<Cfg::STREAM>(q + jj * out_pitch, gather<Cfg::S>(s, jj));
    }
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

// The out-of-place tile kernels' shared pieces (padded_kernel, skew_kernel):
// where tile t starts (the last tile row and column at `last`, last_origin),
// and a partial tile moved element by element through the shared bytes sm.
template <class Cfg>
__device__ __forceinline__ void tile_origin(const TileIdx& t, std::uint64_t ntr, std::uint64_t ntc, const LastTile& last,
                                            std::uint64_t& r0, std::uint64_t& c0) {
  r0 = t.r + 1 < ntr ? t.r * Cfg::TR : last.r;
  c0 = t.c + 1 < ntc ? t.c * Cfg::TC : last.c;
}

template <class Cfg>
__device__ __forceinline__ void edge_tile(void* sm, const unsigned char* in, unsigned char* out, const Dims& d,
                                          std::uint64_t r0, std::uint64_t c0) {
  using T = carrier_t<Cfg::S>;
  const unsigned vr = unsigned(d.rows - r0 < Cfg::TR ? d.rows - r0 : Cfg::TR);
  const unsigned vc = unsigned(d.cols - c0 < Cfg::TC ? d.cols - c0 : Cfg::TC);
  T* e = reinterpret_cast<T*>(sm);
  edge_load<T, Cfg::THREADS>(e, reinterpret_cast<const T*>(in), d.ld_in, r0, c0, vr, vc);
  __syncthreads();
  edge_store<T, Cfg::THREADS>(e, reinterpret_cast<T*>(out), d.ld_out, r0, c0, vr, vc);
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
