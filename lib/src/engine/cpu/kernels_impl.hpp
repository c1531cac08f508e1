// Micro-kernels and block loops of the CPU transposer, templated on the
// element size, compiled once per instruction set. Each including file
// defines GT_CPU_ISA (the namespace that keeps the copies apart: inline
// functions compiled for AVX2 must never be merged with the baseline ones by
// the linker) and, for the AVX2 copy, GT_CPU_AVX2 after switching the
// compiler's target. A micro-kernel transposes one K x K register block;
// x86-64 has SSE2 as its baseline, other targets use plain loops.
//
// No include guard on purpose: each ISA's translation unit includes it once.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "engine/cpu/kernels_api.hpp"

#ifndef GT_CPU_ISA
#error "define GT_CPU_ISA before including kernels_impl.hpp"
#endif

namespace gt::cpu::GT_CPU_ISA {

template <std::size_t ES>
inline void copy_elem(byte* dst, const byte* src) {
  std::memcpy(dst, src, ES);
}

// A register block of KR input rows x KC input columns per element size;
// the portable one is one 16-byte row of elements square.
template <std::size_t ES>
struct Micro {
  static constexpr std::size_t KR = ES >= 16 ? 1 : 16 / ES, KC = KR;
  static void run(const byte* in, std::size_t ldi, byte* out, std::size_t ldo) {
    for (std::size_t i = 0; i < KR; ++i)
      for (std::size_t j = 0; j < KC; ++j) copy_elem<ES>(out + j * ldo + i * ES, in + i * ldi + j * ES);
  }
};

#if GT_CPU_X86
inline __m128i ld(const byte* p) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)); }
inline void st(byte* p, __m128i v) { _mm_storeu_si128(reinterpret_cast<__m128i*>(p), v); }

#if GT_CPU_AVX2
inline __m256i ld256(const byte* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
inline void st256(byte* p, __m256i v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v); }
// Rows p and q's 16-byte halves side by side: [p | q].
inline __m256i ld2x128(const byte* p, const byte* q) {
  return _mm256_inserti128_si256(_mm256_castsi128_si256(ld(p)), ld(q), 1);
}

// 1 and 2 bytes: the SSE2 interleaving network run on both 128-bit lanes
// at once, so one pass transposes two blocks side by side (columns 0-15 and
// 16-31 for bytes); each result vector holds two output rows.
inline void st_lanes(byte* lo, byte* hi, __m256i v) {
  st(lo, _mm256_castsi256_si128(v));
  st(hi, _mm256_extracti128_si256(v, 1));
}

template <>
struct Micro<1> {
  static constexpr std::size_t KR = 16, KC = 32;
  static void run(const byte* in, std::size_t ldi, byte* out, std::size_t ldo) {
    __m256i r[16], a[16], b[16], c[16];
    for (int k = 0; k < 16; ++k) r[k] = ld256(in + k * ldi);
    for (int p = 0; p < 8; ++p) {
      a[2 * p] = _mm256_unpacklo_epi8(r[2 * p], r[2 * p + 1]);
      a[2 * p + 1] = _mm256_unpackhi_epi8(r[2 * p], r[2 * p + 1]);
    }
    for (int q = 0; q < 4; ++q) {
      b[4 * q + 0] = _mm256_unpacklo_epi16(a[4 * q], a[4 * q + 2]);
      b[4 * q + 1] = _mm256_unpackhi_epi16(a[4 * q], a[4 * q + 2]);
      b[4 * q + 2] = _mm256_unpacklo_epi16(a[4 * q + 1], a[4 * q + 3]);
      b[4 * q + 3] = _mm256_unpackhi_epi16(a[4 * q + 1], a[4 * q + 3]);
    }
    for (int o = 0; o < 2; ++o)
      for (int g = 0; g < 4; ++g) {
        c[8 * o + 2 * g] = _mm256_unpacklo_epi32(b[8 * o + g], b[8 * o + 4 + g]);
        c[8 * o + 2 * g + 1] = _mm256_unpackhi_epi32(b[8 * o + g], b[8 * o + 4 + g]);
      }
    for (int m = 0; m < 8; ++m) {
      st_lanes(out + (2 * m) * ldo, out + (16 + 2 * m) * ldo, _mm256_unpacklo_epi64(c[m], c[8 + m]));
      st_lanes(out + (2 * m + 1) * ldo, out + (17 + 2 * m) * ldo, _mm256_unpackhi_epi64(c[m], c[8 + m]));
    }
  }
};

template <>
struct Micro<2> {
  static constexpr std::size_t KR = 8, KC = 16;
  static void run(const byte* in, std::size_t ldi, byte* out, std::size_t ldo) {
    __m256i r[8], a[8], b[8];
    for (int k = 0; k < 8; ++k) r[k] = ld256(in + k * ldi);
    for (int p = 0; p < 4; ++p) {
      a[2 * p] = _mm256_unpacklo_epi16(r[2 * p], r[2 * p + 1]);
      a[2 * p + 1] = _mm256_unpackhi_epi16(r[2 * p], r[2 * p + 1]);
    }
    for (int o = 0; o < 2; ++o) {
      b[4 * o + 0] = _mm256_unpacklo_epi32(a[4 * o], a[4 * o + 2]);
      b[4 * o + 1] = _mm256_unpackhi_epi32(a[4 * o], a[4 * o + 2]);
      b[4 * o + 2] = _mm256_unpacklo_epi32(a[4 * o + 1], a[4 * o + 3]);
      b[4 * o + 3] = _mm256_unpackhi_epi32(a[4 * o + 1], a[4 * o + 3]);
    }
    for (int m = 0; m < 4; ++m) {
      st_lanes(out + (2 * m) * ldo, out + (8 + 2 * m) * ldo, _mm256_unpacklo_epi64(b[m], b[4 + m]));
      st_lanes(out + (2 * m + 1) * ldo, out + (9 + 2 * m) * ldo, _mm256_unpackhi_epi64(b[m], b[4 + m]));
    }
  }
};

template <>
struct Micro<4> {
  static constexpr std::size_t KR = 8, KC = 8;
  static void run(const byte* in, std::size_t ldi, byte* out, std::size_t ldo) {
    // Lane 0 holds rows 0-3, lane 1 rows 4-7, so two 4x4 transposes in
    // lanes finish the job without cross-lane shuffles.
    __m256i r[8], a[8];
    for (int k = 0; k < 4; ++k) {
      r[k] = ld2x128(in + k * ldi, in + (k + 4) * ldi);
      r[k + 4] = ld2x128(in + k * ldi + 16, in + (k + 4) * ldi + 16);
    }
    for (int h = 0; h < 2; ++h) {
      __m256i* x = r + 4 * h;
      a[4 * h + 0] = _mm256_unpacklo_epi32(x[0], x[1]);
      a[4 * h + 1] = _mm256_unpackhi_epi32(x[0], x[1]);
      a[4 * h + 2] = _mm256_unpacklo_epi32(x[2], x[3]);
      a[4 * h + 3] = _mm256_unpackhi_epi32(x[2], x[3]);
      st256(out + (4 * h + 0) * ldo, _mm256_unpacklo_epi64(a[4 * h], a[4 * h + 2]));
      st256(out + (4 * h + 1) * ldo, _mm256_unpackhi_epi64(a[4 * h], a[4 * h + 2]));
      st256(out + (4 * h + 2) * ldo, _mm256_unpacklo_epi64(a[4 * h + 1], a[4 * h + 3]));
      st256(out + (4 * h + 3) * ldo, _mm256_unpackhi_epi64(a[4 * h + 1], a[4 * h + 3]));
    }
  }
};

template <>
struct Micro<8> {
  static constexpr std::size_t KR = 4, KC = 4;
  static void run(const byte* in, std::size_t ldi, byte* out, std::size_t ldo) {
    __m256i r0 = ld2x128(in, in + 2 * ldi), r1 = ld2x128(in + ldi, in + 3 * ldi);
    __m256i r2 = ld2x128(in + 16, in + 2 * ldi + 16), r3 = ld2x128(in + ldi + 16, in + 3 * ldi + 16);
    st256(out, _mm256_unpacklo_epi64(r0, r1));
    st256(out + ldo, _mm256_unpackhi_epi64(r0, r1));
    st256(out + 2 * ldo, _mm256_unpacklo_epi64(r2, r3));
    st256(out + 3 * ldo, _mm256_unpackhi_epi64(r2, r3));
  }
};
#else
template <>
struct Micro<1> {
  static constexpr std::size_t KR = 16, KC = 16;
  static void run(const byte* in, std::size_t ldi, byte* out, std::size_t ldo) {
    __m128i r[16], a[16], b[16], c[16];
    for (int k = 0; k < 16; ++k) r[k] = ld(in + k * ldi);
    // Four rounds of interleaving: bytes, then 2-, 4- and 8-byte groups.
    for (int p = 0; p < 8; ++p) {
      a[2 * p] = _mm_unpacklo_epi8(r[2 * p], r[2 * p + 1]);
      a[2 * p + 1] = _mm_unpackhi_epi8(r[2 * p], r[2 * p + 1]);
    }
    for (int q = 0; q < 4; ++q) {
      b[4 * q + 0] = _mm_unpacklo_epi16(a[4 * q], a[4 * q + 2]);
      b[4 * q + 1] = _mm_unpackhi_epi16(a[4 * q], a[4 * q + 2]);
      b[4 * q + 2] = _mm_unpacklo_epi16(a[4 * q + 1], a[4 * q + 3]);
      b[4 * q + 3] = _mm_unpackhi_epi16(a[4 * q + 1], a[4 * q + 3]);
    }
    for (int o = 0; o < 2; ++o)
      for (int g = 0; g < 4; ++g) {
        c[8 * o + 2 * g] = _mm_unpacklo_epi32(b[8 * o + g], b[8 * o + 4 + g]);
        c[8 * o + 2 * g + 1] = _mm_unpackhi_epi32(b[8 * o + g], b[8 * o + 4 + g]);
      }
    for (int m = 0; m < 8; ++m) {
      st(out + (2 * m) * ldo, _mm_unpacklo_epi64(c[m], c[8 + m]));
      st(out + (2 * m + 1) * ldo, _mm_unpackhi_epi64(c[m], c[8 + m]));
    }
  }
};

template <>
struct Micro<2> {
  static constexpr std::size_t KR = 8, KC = 8;
  static void run(const byte* in, std::size_t ldi, byte* out, std::size_t ldo) {
    __m128i r[8], a[8], b[8];
    for (int k = 0; k < 8; ++k) r[k] = ld(in + k * ldi);
    for (int p = 0; p < 4; ++p) {
      a[2 * p] = _mm_unpacklo_epi16(r[2 * p], r[2 * p + 1]);
      a[2 * p + 1] = _mm_unpackhi_epi16(r[2 * p], r[2 * p + 1]);
    }
    for (int o = 0; o < 2; ++o) {
      b[4 * o + 0] = _mm_unpacklo_epi32(a[4 * o], a[4 * o + 2]);
      b[4 * o + 1] = _mm_unpackhi_epi32(a[4 * o], a[4 * o + 2]);
      b[4 * o + 2] = _mm_unpacklo_epi32(a[4 * o + 1], a[4 * o + 3]);
      b[4 * o + 3] = _mm_unpackhi_epi32(a[4 * o + 1], a[4 * o + 3]);
    }
    for (int m = 0; m < 4; ++m) {
      st(out + (2 * m) * ldo, _mm_unpacklo_epi64(b[m], b[4 + m]));
      st(out + (2 * m + 1) * ldo, _mm_unpackhi_epi64(b[m], b[4 + m]));
    }
  }
};

template <>
struct Micro<4> {
  static constexpr std::size_t KR = 4, KC = 4;
  static void run(const byte* in, std::size_t ldi, byte* out, std::size_t ldo) {
    __m128i r0 = ld(in), r1 = ld(in + ldi), r2 = ld(in + 2 * ldi), r3 = ld(in + 3 * ldi);
    __m128i a0 = _mm_unpacklo_epi32(r0, r1), a1 = _mm_unpackhi_epi32(r0, r1);
    __m128i a2 = _mm_unpacklo_epi32(r2, r3), a3 = _mm_unpackhi_epi32(r2, r3);
    st(out, _mm_unpacklo_epi64(a0, a2));
    st(out + ldo, _mm_unpackhi_epi64(a0, a2));
    st(out + 2 * ldo, _mm_unpacklo_epi64(a1, a3));
    st(out + 3 * ldo, _mm_unpackhi_epi64(a1, a3));
  }
};

template <>
struct Micro<8> {
  static constexpr std::size_t KR = 2, KC = 2;
  static void run(const byte* in, std::size_t ldi, byte* out, std::size_t ldo) {
    __m128i r0 = ld(in), r1 = ld(in + ldi);
    st(out, _mm_unpacklo_epi64(r0, r1));
    st(out + ldo, _mm_unpackhi_epi64(r0, r1));
  }
};
#endif

template <>
struct Micro<16> {
  static constexpr std::size_t KR = 1, KC = 1;
  static void run(const byte* in, std::size_t, byte* out, std::size_t) { st(out, ld(in)); }
};
#endif  // GT_CPU_X86

// Prefetch of rows further down the same columns, spread over a block's
// work so the strided rows of a later block arrive while this one runs.
struct RowPrefetch {
  const byte* base = nullptr;  // first row to fetch
  std::size_t rows = 0;        // 0: no prefetch
  bool l2 = false;
};

inline void prefetch_row(const RowPrefetch& pf, std::size_t r, std::size_t ldi, std::size_t bytes) {
  const byte* p = pf.base + r * ldi;
  if (pf.l2)
    for (std::size_t off = 0; off < bytes; off += 64) __builtin_prefetch(p + off, 0, 2);
  else
    for (std::size_t off = 0; off < bytes; off += 64) __builtin_prefetch(p + off, 0, 3);
}

// out (w x h, rows ldo bytes apart) = transpose of in (h x w, rows ldi bytes
// apart), any h and w: whole register blocks, then plain loops for the edges.
template <std::size_t ES>
inline void transpose_block(const byte* in, std::size_t ldi, byte* out, std::size_t ldo, std::size_t h,
                            std::size_t w, const RowPrefetch& pf = {}) {
  constexpr std::size_t KR = Micro<ES>::KR, KC = Micro<ES>::KC;
  const std::size_t hk = h / KR * KR, wk = w / KC * KC;
  const std::size_t row_bytes = w * ES;
  for (std::size_t i = 0; i < hk; i += KR) {
    for (std::size_t r = i; r < i + KR && r < pf.rows; ++r) prefetch_row(pf, r, ldi, row_bytes);
    for (std::size_t j = 0; j < wk; j += KC) Micro<ES>::run(in + i * ldi + j * ES, ldi, out + j * ldo + i * ES, ldo);
    for (std::size_t j = wk; j < w; ++j)
      for (std::size_t r = i; r < i + KR; ++r) copy_elem<ES>(out + j * ldo + r * ES, in + r * ldi + j * ES);
  }
  for (std::size_t r = hk; r < h; ++r)
    for (std::size_t j = 0; j < w; ++j) copy_elem<ES>(out + j * ldo + r * ES, in + r * ldi + j * ES);
}

// One staged output row segment to memory with non-temporal stores; the
// common case (aligned, whole vectors) without the general routine's calls.
inline void stream_row(byte* dst, const byte* src, std::size_t n) {
#if GT_CPU_AVX2
  if ((reinterpret_cast<std::uintptr_t>(dst) & 31) == 0 && (n & 31) == 0) {
    for (std::size_t k = 0; k < n; k += 32)
      _mm256_stream_si256(reinterpret_cast<__m256i*>(dst + k), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + k)));
    return;
  }
#elif GT_CPU_X86
  if ((reinterpret_cast<std::uintptr_t>(dst) & 15) == 0 && (n & 15) == 0) {
    for (std::size_t k = 0; k < n; k += 16) _mm_stream_si128(reinterpret_cast<__m128i*>(dst + k), ld(src + k));
    return;
  }
#endif
  stream_copy(dst, src, n);
}

// Output rows that do not start on a 64-byte line: each row's segments are
// streamed as whole lines, the bytes of a line not yet complete carried to
// the row's next segment (64 bytes a row of the column block), so no line is
// written both by a non-temporal store and an ordinary one. A row's first
// line, shared with the row before it, and its last line in the region are
// written with ordinary stores.
inline void nt_line(byte* dst, const byte* src) {
#if GT_CPU_AVX2
  _mm256_stream_si256(reinterpret_cast<__m256i*>(dst), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src)));
  _mm256_stream_si256(reinterpret_cast<__m256i*>(dst + 32), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + 32)));
#elif GT_CPU_X86
  for (int q = 0; q < 64; q += 16) _mm_stream_si128(reinterpret_cast<__m128i*>(dst + q), ld(src + q));
#else
  std::memcpy(dst, src, 64);
#endif
}

// Row segment `seg` (n bytes) to dst, continuing the row: carry holds the
// bytes from dst's line start to dst (k of them), or k = 255 where that line
// began before the region (then written plainly up to the next line).
inline void stream_carried(byte* dst, const byte* seg, std::size_t n, byte* carry, unsigned char& k) {
  if (k == 255) {
    const std::size_t head = std::min<std::size_t>(n, (64 - (reinterpret_cast<std::uintptr_t>(dst) & 63)) & 63);
    std::memcpy(dst, seg, head);
    dst += head, seg += head, n -= head;
    if ((reinterpret_cast<std::uintptr_t>(dst) & 63) != 0) return;  // still inside the shared line
    k = 0;
  }
  if (k + n < 64) {
    std::memcpy(carry + k, seg, n);
    k = static_cast<unsigned char>(k + n);
    return;
  }
  byte* line = dst - k;
  if (k) {
    const std::size_t first = 64 - k;
    std::memcpy(carry + k, seg, first);
    nt_line(line, carry);
    line += 64, seg += first, n -= first;
  }
  const std::size_t body = n & ~std::size_t(63);
  for (std::size_t q = 0; q < body; q += 64) nt_line(line + q, seg + q);
  k = static_cast<unsigned char>(n - body);
  std::memcpy(carry, seg + body, k);
}

// One thread's share of an out-of-place transpose: column blocks outer, so
// the thread writes its band of output rows front to back; row blocks inner.
// Blocks go through an L1 staging copy even without streaming: written
// straight into an output whose row stride is a multiple of 4 KiB, a block's
// output rows all map to the same L1 set and evict each other (1024^2 f32,
// 1 thread: 4.7 GB/s direct against 31-36 GB/s staged).
template <std::size_t ES>
void region_es(const RegionJob& job) {
  const CpuTuning& t = *job.tuning;
  const std::uint64_t BR = t.block_rows, BC = t.block_cols;
  const Region g = job.region;
  byte* stage = job.stage;
  // Streamed output rows not on 64-byte lines: each row's last line carried
  // to its next segment (stream_carried). Where a segment streamed its whole
  // lines and wrote its partial ends plainly, the 2-core EPYC ran 4-5x
  // slower: f32 12345x6789 197 ms against 48, 13001x20651 618-670 against
  // 135-143 (docs/PERF.md, session of 2026-12-07, "The transposer's streamed stores at odd shapes").
  const bool carried = job.stream && ((job.ldo & 63) != 0 || (reinterpret_cast<std::uintptr_t>(job.out) & 63) != 0);
  std::vector<byte> carry_data(carried ? std::size_t(BC) * 64 : 0);
  std::vector<unsigned char> carry_k(carried ? std::size_t(BC) : 0);
  for (std::uint64_t cb = g.c0; cb < g.c1; cb += BC) {
    const std::size_t bc = std::size_t(std::min(BC, g.c1 - cb));
    if (carried) std::fill(carry_k.begin(), carry_k.end(), static_cast<unsigned char>(255));
    for (std::uint64_t rb = g.r0; rb < g.r1; rb += BR) {
      const std::size_t br = std::size_t(std::min(BR, g.r1 - rb));
      const byte* src = job.in + rb * job.ldi + cb * ES;
      byte* dst = job.out + cb * job.ldo + rb * ES;
      RowPrefetch pf;
      const std::uint64_t pf_r0 = rb + std::uint64_t(t.prefetch_ahead) * BR;
      if (t.prefetch_ahead && pf_r0 < g.r1) {
        pf.base = job.in + pf_r0 * job.ldi + cb * ES;
        pf.rows = std::size_t(std::min(BR, g.r1 - pf_r0));
        pf.l2 = t.prefetch_l2;
      }
      transpose_block<ES>(src, job.ldi, stage, br * ES, br, bc, pf);
      if (carried) {
        const bool last = rb + br >= g.r1;
        for (std::size_t c = 0; c < bc; ++c) {
          byte* d = dst + c * job.ldo;
          unsigned char& k = carry_k[c];
          stream_carried(d, stage + c * br * ES, br * ES, carry_data.data() + c * 64, k);
          if (last && k != 255 && k != 0) std::memcpy(d + br * ES - k, carry_data.data() + c * 64, k);
        }
      } else if (job.stream)
        for (std::size_t c = 0; c < bc; ++c) stream_row(dst + c * job.ldo, stage + c * br * ES, br * ES);
      else
        for (std::size_t c = 0; c < bc; ++c) std::memcpy(dst + c * job.ldo, stage + c * br * ES, br * ES);
    }
  }
  if (job.stream) stream_fence();
}

// In place: block rows of the upper triangle handed out one at a time
// (early rows hold the most pairs, so dynamic hand-out balances threads).
// Block (I, J) and block (J, I) are both staged before either is written.
//
// A pair of tiles (job.b): every block (I, J) of a against block (J, I) of
// b, the blocks of a's block row I handed out one at a time.
template <std::size_t ES>
void pair_es(const InplaceJob& job) {
  const std::uint64_t B = job.block, h = job.n, w = job.w, rb = (h + B - 1) / B, cb = (w + B - 1) / B;
  const std::size_t lda = job.lda;
  byte* s1 = job.stage;
  byte* s2 = s1 + B * B * ES;
  for (std::uint64_t I; (I = job.next_row->fetch_add(1)) < rb;) {
    const std::size_t hI = std::size_t(std::min(B, h - I * B));
    for (std::uint64_t J = 0; J < cb; ++J) {
      const std::size_t wJ = std::size_t(std::min(B, w - J * B));
      byte* x = job.a + I * B * lda + J * B * ES;  // hI x wJ
      byte* y = job.b + J * B * lda + I * B * ES;  // wJ x hI
      transpose_block<ES>(x, lda, s1, hI * ES, hI, wJ);
      transpose_block<ES>(y, lda, s2, wJ * ES, wJ, hI);
      for (std::size_t r = 0; r < wJ; ++r) std::memcpy(y + r * lda, s1 + r * hI * ES, hI * ES);
      for (std::size_t r = 0; r < hI; ++r) std::memcpy(x + r * lda, s2 + r * wJ * ES, wJ * ES);
    }
  }
}

template <std::size_t ES>
void inplace_es(const InplaceJob& job) {
  if (job.b) return pair_es<ES>(job);
  const std::uint64_t B = job.block, n = job.n, tb = (n + B - 1) / B;
  const std::size_t lda = job.lda;
  byte* s1 = job.stage;
  byte* s2 = s1 + B * B * ES;
  for (std::uint64_t I; (I = job.next_row->fetch_add(1)) < tb;) {
    const std::size_t hI = std::size_t(std::min(B, n - I * B));
    for (std::uint64_t J = I; J < tb; ++J) {
      const std::size_t hJ = std::size_t(std::min(B, n - J * B));
      byte* x = job.a + I * B * lda + J * B * ES;  // hI x hJ
      byte* y = job.a + J * B * lda + I * B * ES;  // hJ x hI
      transpose_block<ES>(x, lda, s1, hI * ES, hI, hJ);
      if (I == J) {
        for (std::size_t r = 0; r < hJ; ++r) std::memcpy(x + r * lda, s1 + r * hI * ES, hI * ES);
        continue;
      }
      transpose_block<ES>(y, lda, s2, hJ * ES, hJ, hI);
      for (std::size_t r = 0; r < hJ; ++r) std::memcpy(y + r * lda, s1 + r * hI * ES, hI * ES);
      for (std::size_t r = 0; r < hI; ++r) std::memcpy(x + r * lda, s2 + r * hJ * ES, hJ * ES);
    }
  }
}

template <std::size_t ES>
constexpr std::size_t micro_k() {
  return Micro<ES>::KR > Micro<ES>::KC ? Micro<ES>::KR : Micro<ES>::KC;
}

}  // namespace gt::cpu::GT_CPU_ISA

namespace gt::cpu {

// The exported entry points of this ISA's copy, dispatching on element size.
void GT_CPU_ISA_FN(region)(std::size_t es, const RegionJob& job) {
  using namespace GT_CPU_ISA;
  switch (es) {
    case 1: region_es<1>(job); break;
    case 2: region_es<2>(job); break;
    case 4: region_es<4>(job); break;
    case 8: region_es<8>(job); break;
    default: region_es<16>(job); break;
  }
}

void GT_CPU_ISA_FN(inplace)(std::size_t es, const InplaceJob& job) {
  using namespace GT_CPU_ISA;
  switch (es) {
    case 1: inplace_es<1>(job); break;
    case 2: inplace_es<2>(job); break;
    case 4: inplace_es<4>(job); break;
    case 8: inplace_es<8>(job); break;
    default: inplace_es<16>(job); break;
  }
}

std::size_t GT_CPU_ISA_FN(micro_k)(std::size_t es) {
  using namespace GT_CPU_ISA;
  switch (es) {
    case 1: return micro_k<1>();
    case 2: return micro_k<2>();
    case 4: return micro_k<4>();
    case 8: return micro_k<8>();
    default: return micro_k<16>();
  }
}

}  // namespace gt::cpu
