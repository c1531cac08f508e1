// The device kernel `inplace-rect` walks the in-place decomposition's maps
// with iterators (gtranspose/rect_maps.hpp) instead of dividing per element.
// These tests check them without a GPU: each iterator against the direct
// maps at every stride the kernels use, and the three steps applied on the
// host through the iterators against the transpose, at shapes that take
// every branch (c = 1, c > 1, m | n, n | m, the last c - 1 rows' extra term).
#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <string>
#include <type_traits>
#include <vector>

#include "gtranspose/rect_maps.hpp"

namespace {

namespace rect = gt::rect;
using u64 = std::uint64_t;

const u64 kShapes[][2] = {{2, 3},   {3, 2},    {4, 6},    {6, 4},   {6, 9},    {9, 6},     {12, 18}, {18, 12},
                          {5, 5},   {7, 1},    {1, 7},    {2, 2},   {8, 32},   {32, 8},    {3, 33},  {33, 3},
                          {30, 42}, {42, 30},  {64, 96},  {97, 61}, {100, 75}, {75, 100},  {2, 1000}, {1000, 2},
                          {7, 49},  {49, 7},   {60, 84},  {84, 60}, {128, 48}, {48, 128},  {210, 330}, {331, 210}};

// Steps 1 to 3 on the host, through the same iterators and strides the
// kernels take (each "thread" t of `threads` starts at t and steps by threads).
std::vector<u64> apply(u64 m, u64 n, u64 threads) {
  const rect::Maps p = rect::make_maps(m, n);
  std::vector<u64> a(m * n), t(m * n);
  std::iota(a.begin(), a.end(), u64(0));
  auto columns = [&](auto iter) {
    using It = decltype(iter);
    const bool rotate = std::is_same_v<It, rect::RotIter>;
    t = a;
    for (u64 j = 0; j < n; ++j) {
      const u64 cj = rect::col_shift(p, rotate, j);
      for (u64 start = 0; start < threads && start < m; ++start) {
        It it(p, start, threads);
        for (u64 i = start; i < m; i += threads, it.advance(p)) {
          u64 src = it.value(p) + cj;
          if (src >= m) src -= m;
          a[i * n + j] = t[src * n + j];
        }
      }
    }
  };
  if (p.c > 1) columns(rect::RotIter(p, 0, 1));
  t = a;
  for (u64 i = 0; i < m; ++i)
    for (u64 start = 0; start < threads && start < n; ++start) {
      rect::ShuffleIter it(p, i, start, threads);
      for (u64 j = start; j < n; j += threads, it.advance(p)) a[i * n + j] = t[i * n + it.value(p)];
    }
  columns(rect::PermIter(p, 0, 1));
  return a;
}

TEST(RectMaps, IteratorsMatchTheDirectMaps) {
  for (const auto& s : kShapes) {
    const u64 m = s[0], n = s[1];
    const rect::Maps p = rect::make_maps(m, n);
    for (u64 step : {u64(1), u64(2), u64(3), u64(7), u64(32), u64(512), m * n + 5}) {
      // The kernels' 32-bit iterators step the same way (their state and
      // the narrowed maps in 32 bits).
      const rect::Maps32 p32 = rect::narrow(p);
      for (u64 i = 0; i < m; ++i) {
        rect::ShuffleIter it(p, i, i % n, step);
        rect::ShuffleIterT<std::uint32_t> it32(p, i, i % n, step);
        for (u64 j = i % n; j < n; j += step, it.advance(p), it32.advance(p32)) {
          ASSERT_EQ(it.value(p), rect::shuffle(p, i, j)) << m << "x" << n << " row " << i << " col " << j << " step " << step;
          ASSERT_EQ(it32.value(p32), it.value(p)) << m << "x" << n << " row " << i << " col " << j << " step " << step;
        }
        // Coprime sides: the two-instruction walk, from every start.
        if (p.c == 1)
          for (u64 j0 : {u64(0), i % n, n - 1}) {
            rect::ShuffleIter ref(p, i, j0, step);
            rect::CoprimeShuffleIterT<std::uint32_t> co(p, i, j0, step);
            for (u64 j = j0; j < n; j += step, ref.advance(p), co.advance(p32))
              ASSERT_EQ(co.value(p32), ref.value(p)) << m << "x" << n << " row " << i << " col " << j << " step " << step;
          }
      }
      for (u64 i0 = 0; i0 < std::min<u64>(m, 5); ++i0) {
        rect::RotIter rot(p, i0, step);
        rect::RotIterT<std::uint32_t> rot32(p, i0, step);
        rect::PermIter per(p, i0, step);
        for (u64 i = i0; i < m; i += step, rot.advance(p), rot32.advance(p32), per.advance(p)) {
          ASSERT_EQ(rot.value(p), i) << m << "x" << n;
          ASSERT_EQ(rot32.value(p32), i) << m << "x" << n;
          ASSERT_EQ(per.value(p), rect::permuted_row(p, i)) << m << "x" << n << " row " << i << " step " << step;
        }
      }
    }
  }
}

TEST(RectMaps, ThreeStepsTranspose) {
  for (const auto& s : kShapes) {
    const u64 m = s[0], n = s[1];
    for (u64 threads : {u64(1), u64(4), u64(512)}) {
      const std::vector<u64> a = apply(m, n, threads);
      u64 wrong = 0;
      for (u64 r = 0; r < n; ++r)
        for (u64 c = 0; c < m; ++c) wrong += a[r * m + c] != c * n + r;
      EXPECT_EQ(wrong, 0u) << m << "x" << n << " with " << threads << " threads";
    }
  }
}

// The blocked route: every c x c block transposed where it lies, then the
// segments gathered through segment_source, is the transpose.
TEST(RectMaps, BlocksThenSegmentsTranspose) {
  for (const auto& s : kShapes) {
    const u64 m = s[0], n = s[1];
    const u64 c = std::gcd(m, n), a = m / c, b = n / c;
    const rect::SegMap sm{a, b, c};
    std::vector<u64> x(m * n);
    std::iota(x.begin(), x.end(), u64(0));
    for (u64 I = 0; I < a; ++I)
      for (u64 q = 0; q < b; ++q)
        for (u64 r = 0; r < c; ++r)
          for (u64 k = r + 1; k < c; ++k) std::swap(x[(I * c + r) * n + q * c + k], x[(I * c + k) * n + q * c + r]);
    const std::vector<u64> t = x;
    const u64 segs = a * b * c;
    for (u64 y = 0; y < segs; ++y)
      for (u64 e = 0; e < c; ++e) x[y * c + e] = t[rect::segment_source(sm, y) * c + e];
    u64 wrong = 0;
    for (u64 r = 0; r < n; ++r)
      for (u64 col = 0; col < m; ++col) wrong += x[r * m + col] != col * n + r;
    EXPECT_EQ(wrong, 0u) << m << "x" << n;
  }
}

// Extents past 2^32: the maps' products stay exact (128-bit), and the
// iterators agree with them far along a row and a column.
TEST(RectMaps, LargeExtents) {
  const u64 m = (u64(1) << 33) + 7, n = 6;  // c = 1
  const u64 m2 = (u64(1) << 32) * 3, n2 = 18;  // c = 6
  for (auto [mm, nn] : {std::pair<u64, u64>{m, n}, std::pair<u64, u64>{m2, n2}}) {
    const rect::Maps p = rect::make_maps(mm, nn);
    for (u64 i : {u64(0), u64(1), mm / 2, mm - 3, mm - 1}) {
      rect::ShuffleIter it(p, i, 0, 1);
      for (u64 j = 0; j < nn; ++j, it.advance(p)) ASSERT_EQ(it.value(p), rect::shuffle(p, i, j));
    }
    const u64 i0 = mm / 3;
    rect::PermIter per(p, i0, 1000003);
    for (u64 i = i0, k = 0; i < mm && k < 2000; i += 1000003, ++k, per.advance(p))
      ASSERT_EQ(per.value(p), rect::permuted_row(p, i)) << i;
  }
}

}  // namespace
