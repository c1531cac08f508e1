// The index maps of an in-place rectangular transpose: the host's
// (inplace/general.cpp), the device kernel `inplace-rect`'s
// (kernels/inplace_rect.cu), and the tests that check them without a GPU
// (tests/host/core/test_rect_maps.cpp). Plain C++: under nvcc every function
// is also a device function.
//
// An m x n row-major matrix becomes its n x m transpose in the same memory by
// the decomposition of Catanzaro, Keller and Garland ("A decomposition for
// in-place matrix transposition", PPoPP 2014), in three steps:
//   1. (only when c = gcd(m, n) > 1) each column j is rotated:
//        new[i][j] = old[(i + j / b) mod m][j];
//   2. each row i is shuffled:        new[i][j] = old[i][shuffle(i, j)];
//   3. each column is permuted:       new[i][j] = old[(permuted_row(i) + j) mod m][j];
// with a = m / c, b = n / c and k the inverse of a modulo b (of m modulo n
// when c = 1). Steps 1 and 3 are column gathers "row R(i) + C(j) mod m";
// step 2 a gather inside one row. The kernels walk both with the iterators
// below, which step by a fixed stride without a division per element; the
// host calls the maps directly.
#pragma once
#include <cstdint>

#if defined(__CUDACC__)
#define GT_RECT_HD __host__ __device__ __forceinline__
#else
#define GT_RECT_HD inline
#endif

namespace gt::rect {

using u64 = std::uint64_t;

GT_RECT_HD u64 mulmod(u64 x, u64 y, u64 m) { return u64((unsigned __int128)x * y % m); }

template <class T>
struct MapsT {
  T m = 0, n = 0;  // rows and columns of the input
  T c = 0, a = 0, b = 0, k = 0;
  T shift_a = 0;   // k * ((m mod n) / c) mod b: step 2's extra term for its last c - 1 rows
  T n_mod_m = 0;
};
using Maps = MapsT<u64>;
using Maps32 = MapsT<std::uint32_t>;

// The maps in 32 bits, for a kernel whose iterators step in 32-bit
// arithmetic (half the instructions of 64-bit steps). Each field is exact
// where it is below 2^32; ShuffleIterT<uint32_t> reads only b, c and
// shift_a (all below n), RotIterT<uint32_t> only m.
inline Maps32 narrow(const Maps& p) {
  using T = std::uint32_t;
  return {T(p.m), T(p.n), T(p.c), T(p.a), T(p.b), T(p.k), T(p.shift_a), T(p.n_mod_m)};
}

// gcd(x, y) and x's inverse modulo y when they are coprime (else 0).
inline void gcd_inverse(u64 x, u64 y, u64* g, u64* inverse) {
  __int128 a = x, b = y, s = 1, s_next = 0;
  while (b != 0) {
    const __int128 q = a / b;
    const __int128 r = a - q * b;
    a = b;
    b = r;
    const __int128 t = s - q * s_next;
    s = s_next;
    s_next = t;
  }
  *g = u64(a);
  *inverse = 0;
  if (a == 1) {
    __int128 v = s % __int128(y);
    if (v < 0) v += y;
    *inverse = u64(v);
  }
}

inline Maps make_maps(u64 m, u64 n) {
  Maps p;
  p.m = m;
  p.n = n;
  u64 t = 0;
  gcd_inverse(m, n, &p.c, &t);
  p.a = m / p.c;
  p.b = n / p.c;
  if (p.c > 1) {
    u64 g = 0;
    gcd_inverse(p.a, p.b, &g, &p.k);
  } else {
    p.k = t;
  }
  p.shift_a = mulmod(p.k % p.b, ((m % n) / p.c) % p.b, p.b);
  p.n_mod_m = n % m;
  return p;
}

// The maps written directly, as inplace/general.cpp has them.
GT_RECT_HD u64 rotation_col(const Maps& p, u64 j) { return (j / p.b) % p.m; }
// (i mod m) * (n mod m) fits 64 bits where m <= 2^32: no 128-bit division
// (the host's cycle walk of step 3 calls this once a row per thread).
GT_RECT_HD u64 permuted_row(const Maps& p, u64 i) {
  const u64 im = i % p.m;
  const u64 pm = p.m <= (u64(1) << 32) ? im * p.n_mod_m % p.m : mulmod(im, p.n_mod_m, p.m);
  return (pm + p.m - (i / p.a) % p.m) % p.m;
}
GT_RECT_HD u64 shuffle(const Maps& p, u64 i, u64 j) {
  u64 f = j + i * (p.n - 1);  // only f mod n matters below: wrap-around is harmless
  const u64 fm = (f % p.n + ((i + p.c > p.m + j % p.c) ? p.m % p.n : 0)) % p.n;
  return mulmod(p.k, fm / p.c, p.b) + (fm % p.c) * p.b;
}

// The iterators below keep only what changes as they step; the matrix's
// constants come from the Maps (or SegMap) passed to value() and advance(),
// which in a kernel is its parameter: no register holds them. Their state is
// of type T: u64 on the host, uint32_t in kernels whose rows fit 32 bits
// (the constructor computes in 64 bits either way; value() and advance()
// then take a Maps32).

// Step 2 along one row: the column that row i's element j comes from, for
// j = j0, j0 + step, j0 + 2 step, ... With g = (j - i) mod n = q c + r,
// shuffle(i, j) = (k q mod b) + r b, plus shift_a inside the mod b where
// j mod c < i + c - m (the matrix's last c - 1 rows only).
template <class T>
struct ShuffleIterT {
  T r, kq, jc, thr;
  T dr, kdq, kdq1;  // the stride's parts
  GT_RECT_HD ShuffleIterT(const Maps& p, u64 i, u64 j0, u64 step) {
    const u64 n = p.n, c = p.c, b = p.b;
    const u64 g = (j0 % n + n - i % n) % n;
    r = T(g % c);
    kq = T(mulmod(p.k, g / c, b));
    jc = T(j0 % c);
    thr = T((i + c > p.m) ? i + c - p.m : 0);
    const u64 s = step % n;
    dr = T(s % c);
    kdq = T(mulmod(p.k, s / c, b));
    kdq1 = T(mulmod(p.k, (s / c + 1) % b, b));
  }
  template <class M>
  GT_RECT_HD T value(const M& p) const {
    T v = kq;
    if (jc < thr) {
      v += p.shift_a;
      if (v >= p.b) v -= p.b;
    }
    return v + r * p.b;
  }
  template <class M>
  GT_RECT_HD void advance(const M& p) {
    r += dr;
    const bool carry = r >= p.c;
    if (carry) r -= p.c;
    kq += carry ? kdq1 : kdq;
    if (kq >= p.b) kq -= p.b;
    jc += dr;
    if (jc >= p.c) jc -= p.c;
  }
};
using ShuffleIter = ShuffleIterT<u64>;

// ShuffleIterT where c = 1 (coprime sides): then r = 0, b = n and no row
// takes shift_a, so shuffle(i, j) = k (j - i) mod n and a step adds
// k * step mod n: two instructions a step where ShuffleIterT takes about
// ten (the device row step's per-element cost for 1- and 2-byte elements).
template <class T>
struct CoprimeShuffleIterT {
  T v, dv;
  GT_RECT_HD CoprimeShuffleIterT(const Maps& p, u64 i, u64 j0, u64 step) {
    const u64 n = p.n;
    v = T(mulmod(p.k, (j0 % n + n - i % n) % n, p.b));
    dv = T(mulmod(p.k, step % n, p.b));
  }
  template <class M>
  GT_RECT_HD T value(const M&) const {
    return v;
  }
  template <class M>
  GT_RECT_HD void advance(const M& p) {
    v += dv;
    if (v >= p.b) v -= p.b;
  }
};

// Step 1 down a column band: R(i) = i for i = i0, i0 + step, ...
template <class T>
struct RotIterT {
  T i, step_m;
  GT_RECT_HD RotIterT(const Maps& p, u64 i0, u64 step) : i(T(i0 % p.m)), step_m(T(step % p.m)) {}
  template <class M>
  GT_RECT_HD T value(const M&) const { return i; }
  template <class M>
  GT_RECT_HD void advance(const M& p) {
    i += step_m;
    if (i >= p.m) i -= p.m;
  }
};
using RotIter = RotIterT<u64>;

// Step 3 down a column band: R(i) = permuted_row(i) for i = i0, i0 + step, ...
struct PermIter {
  u64 pm, iq, ir;          // i * (n mod m) mod m, i / a, i mod a
  u64 p_step, a_q, a_r;    // the stride's parts
  GT_RECT_HD PermIter(const Maps& p, u64 i0, u64 step) {
    pm = mulmod(i0 % p.m, p.n_mod_m, p.m);
    p_step = mulmod(step % p.m, p.n_mod_m, p.m);
    iq = i0 / p.a;
    ir = i0 % p.a;
    a_q = step / p.a;
    a_r = step % p.a;
  }
  GT_RECT_HD u64 value(const Maps& p) const {
    return pm >= iq ? pm - iq : pm + p.m - iq;  // iq = i / a < c <= m inside the matrix
  }
  GT_RECT_HD void advance(const Maps& p) {
    pm += p_step;
    if (pm >= p.m) pm -= p.m;
    ir += a_r;
    const bool carry = ir >= p.a;
    if (carry) ir -= p.a;
    iq += a_q + (carry ? 1 : 0);
  }
};

// C(j): column j's shift in steps 1 and 3.
GT_RECT_HD u64 col_shift(const Maps& p, bool rotate, u64 j) { return rotate ? rotation_col(p, j) : j % p.m; }

// The blocked route, for m = a c and n = b c with c large: once every c x c
// block is transposed where it lies, the matrix is a*b*c segments of c
// elements each (a row of the matrix is b of them), and the segment at
// (block row I, row r in the block, block column q), index (I c + r) b + q,
// belongs at (q c + r) a + I. segment_source(s, y) is the segment that
// position y takes.
struct SegMap {
  u64 a = 1, b = 1, c = 1;
};

inline u64 segment_source(const SegMap& s, u64 y) {
  const u64 I = y % s.a, r = (y / s.a) % s.c, q = y / s.a / s.c;
  return (I * s.c + r) * s.b + q;
}

}  // namespace gt::rect
