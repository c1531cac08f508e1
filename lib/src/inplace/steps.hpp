// The gcd decomposition's steps (gtranspose/rect_maps.hpp) on one row or a
// band of columns held in memory: shared by host memory in place
// (general.cpp, which moves them through per-thread scratch) and files in
// place (bands.cpp, which moves a band from one buffer into another), each
// reaching the typed loops through gt::with_elem_size (gtranspose/
// elem_size.hpp, the kernels' dispatch too). The kernels' copy of these
// loops is kernels/inplace_rect.cu.
#pragma once
#include <cstddef>
#include <cstdint>

#include "gtranspose/elem_size.hpp"
#include "gtranspose/rect_maps.hpp"

namespace gt::inplace {

// An element of S bytes, moved whole.
template <std::size_t S>
struct Elem {
  unsigned char b[S];
};

// Step 2 on row i: out[j] = row[shuffle(i, j)] for its mp.n elements.
// Coprime sides take four of the two-instruction iterators stepping
// j = 4q + s side by side, so each load waits on no chain of index steps but
// its own; the general iterator keeps one (four of its seven fields each
// spill registers). docs/PERF.md, session of 2026-12-07, one thread, -O3:
// coprime u8 0.136 -> 0.074 s, f32 0.17 -> 0.12-0.15 s for 6501 rows of
// 20651; gcd 3 (12345x6789) four iterators 0.18-0.20 s against one 0.12-0.19.
template <class E>
void shuffle_row(const rect::Maps& mp, std::uint64_t i, const E* row, E* out) {
  const std::uint64_t n = mp.n;
  if (mp.c > 1) {
    rect::ShuffleIter it(mp, i, 0, 1);
    for (std::uint64_t j = 0; j < n; ++j, it.advance(mp)) out[j] = row[it.value(mp)];
    return;
  }
  using Iter = rect::CoprimeShuffleIterT<std::uint64_t>;
  Iter it[4] = {Iter(mp, i, 0, 4), Iter(mp, i, 1, 4), Iter(mp, i, 2, 4), Iter(mp, i, 3, 4)};
  std::uint64_t j = 0;
  for (; j + 4 <= n; j += 4)
    for (int s = 0; s < 4; ++s) {
      out[j + std::uint64_t(s)] = row[it[s].value(mp)];
      it[s].advance(mp);
    }
  for (int s = 0; j < n; ++j, ++s) out[j] = row[it[s].value(mp)];
}

// Step 1 (rotate) or 3 on columns c0 .. c0 + w - 1, all mp.m rows:
// to[i * ld_to + jj] = from[((R(i) + C(c0 + jj)) mod m) * ld_from + jj], with
// `from` and `to` at column c0. `shift`: scratch for w column shifts. A row of
// the band at a time, so each source row's few cache lines serve all w
// columns while they are cached.
template <class E>
void gather_columns(const rect::Maps& mp, bool rotate, std::uint64_t c0, std::uint64_t w, const E* from,
                    std::uint64_t ld_from, E* to, std::uint64_t ld_to, std::uint64_t* shift) {
  const std::uint64_t m = mp.m;
  for (std::uint64_t jj = 0; jj < w; ++jj) shift[jj] = rect::col_shift(mp, rotate, c0 + jj);
  rect::RotIter rot(mp, 0, 1);
  rect::PermIter perm(mp, 0, 1);
  for (std::uint64_t i = 0; i < m; ++i) {
    const std::uint64_t ri = rotate ? rot.value(mp) : perm.value(mp);
    E* dst = to + i * ld_to;
    for (std::uint64_t jj = 0; jj < w; ++jj) {
      std::uint64_t r = ri + shift[jj];  // both below m
      if (r >= m) r -= m;
      dst[jj] = from[r * ld_from + jj];
    }
    if (rotate)
      rot.advance(mp);
    else
      perm.advance(mp);
  }
}

}  // namespace gt::inplace
