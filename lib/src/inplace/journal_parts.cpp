// A pair's parts (journal_internal.hpp): what of a tile pair the journal
// holds, what goes to the matrix first and what second, and recovery's ways
// to redo, rewrite and check each from the matrix and the journal.
//
// Off the diagonal, tile a (h x w) and tile b (w x h) are whole: J and the B
// part are tile b's new content, the A part tile a's. On the diagonal
// (s x s) the two triangles are a sub-pair: the A part is the new strictly
// upper triangle (from the original lower one), J and the B part the new
// strictly lower triangle, row i holding its first i elements; the diagonal
// itself stays. So a diagonal tile journals s(s-1)/2 elements, not s*s.
//
// Recovery's buffers hold strips of rows (Scratch::bytes each), never a
// whole tile.
#include <algorithm>
#include <cstring>

#include "gtranspose/cpu_transpose.hpp"
#include "inplace/journal_internal.hpp"

namespace gt::journal_impl {

namespace {

unsigned char* grow(std::vector<unsigned char>& v, std::uint64_t bytes) {
  if (v.size() < bytes) v.resize(std::size_t(bytes));
  return v.data();
}

// Rows of `row_elems` elements that fit one scratch buffer (at least one).
std::uint64_t rows_per_strip(const Scratch& s, std::uint64_t row_elems, std::size_t es) {
  return std::max<std::uint64_t>(1, s.bytes / std::max<std::uint64_t>(1, row_elems * es));
}

const unsigned char* bytes_of(const void* p) { return static_cast<const unsigned char*>(p); }

}  // namespace

std::uint64_t journal_bytes_of(const TilePair& p, std::size_t es) {
  if (!p.diagonal()) return p.b.elems() * es;
  const std::uint64_t s = p.a.h;
  return s * (s - 1) / 2 * es;
}

void write_a_part(InplaceMatrix& m, const PairWrite& w, std::size_t es) {
  const Tile& a = w.pair.a;
  if (!w.pair.diagonal()) return m.write(a.r0, a.c0, a.h, a.w, w.new_a, a.w);
  for (std::uint64_t i = 0; i + 1 < a.h; ++i)  // row i's part right of the diagonal
    m.write(a.r0 + i, a.c0 + i + 1, 1, a.h - i - 1, bytes_of(w.new_b) + (i * a.h + i + 1) * es, a.h - i - 1);
}

void write_b_part(InplaceMatrix& m, const PairWrite& w, std::size_t es) {
  const Tile& b = w.pair.b;
  if (!w.pair.diagonal()) return m.write(b.r0, b.c0, b.h, b.w, w.new_b, b.w);
  for (std::uint64_t i = 1; i < b.h; ++i)  // row i's part left of the diagonal
    m.write(b.r0 + i, b.c0, 1, i, bytes_of(w.new_b) + i * b.h * es, i);
}

std::uint64_t a_sum_from_new_b(const PairWrite& w, std::size_t es, Scratch& s) {
  // Tile a (h x w) is the transpose of new_b (w x h, ld h): its rows
  // [r, r+k) are new_b's columns [r, r+k), transposed back a strip at a time.
  const Tile& a = w.pair.a;
  StreamHash sum;
  const std::uint64_t rows = std::min(a.h, rows_per_strip(s, a.w, es));
  unsigned char* buf = grow(s.a, rows * a.w * es);
  for (std::uint64_t r = 0; r < a.h; r += rows) {
    const std::uint64_t k = std::min(rows, a.h - r);
    cpu_transpose(bytes_of(w.new_b) + r * es, a.w, k, a.h, buf, a.w, es, 1);
    sum.update(buf, std::size_t(k * a.w * es));
  }
  return sum.digest();
}

void redo_a_part(InplaceMatrix& m, const TilePair& p, std::size_t es, Scratch& s) {
  const Tile& a = p.a;
  const Tile& b = p.b;
  if (!p.diagonal()) {
    // Strips of tile b's rows become strips of tile a's columns.
    const std::uint64_t rows = std::min(b.h, rows_per_strip(s, b.w, es));
    unsigned char* in = grow(s.a, rows * b.w * es);
    unsigned char* out = grow(s.b, rows * b.w * es);
    for (std::uint64_t r = 0; r < b.h; r += rows) {
      const std::uint64_t h = std::min(rows, b.h - r);
      m.read(b.r0 + r, b.c0, h, b.w, in, b.w);
      // One thread: recovery moves a batch or two, and a pool is not worth starting for it.
      cpu_transpose(in, h, b.w, b.w, out, h, es, 1);
      m.write(a.r0, a.c0 + r, b.w, h, out, h);
    }
    return;
  }
  // New upper (i, j > i) = original lower (j, i): for rows [i0, i1), the
  // original's columns [i0, i1) below row i0, transposed.
  const std::uint64_t side = a.h;
  for (std::uint64_t i0 = 0; i0 + 1 < side;) {
    const std::uint64_t below = side - i0 - 1;  // rows of the original under row i0
    const std::uint64_t k = std::min(side - 1 - i0, rows_per_strip(s, below, es));
    unsigned char* in = grow(s.a, below * k * es);
    unsigned char* out = grow(s.b, below * k * es);
    m.read(a.r0 + i0 + 1, a.c0 + i0, below, k, in, k);
    cpu_transpose(in, below, k, k, out, below, es, 1);  // out: k x below, out[i-i0][j-i0-1] = orig(j, i)
    for (std::uint64_t i = i0; i < i0 + k; ++i)
      m.write(a.r0 + i, a.c0 + i + 1, 1, side - i - 1, out + ((i - i0) * below + (i - i0)) * es, side - i - 1);
    i0 += k;
  }
}

std::uint64_t rewrite_b_part(InplaceMatrix& m, const TilePair& p, std::size_t es, int fd, const std::string& name,
                             std::uint64_t off, Scratch& s) {
  const Tile& b = p.b;
  const std::uint64_t n = journal_bytes_of(p, es);
  if (!p.diagonal()) {
    const std::uint64_t rows = std::min(b.h, rows_per_strip(s, b.w, es));
    unsigned char* buf = grow(s.a, rows * b.w * es);
    for (std::uint64_t r = 0, at = off; r < b.h; r += rows) {
      const std::uint64_t h = std::min(rows, b.h - r);
      fmt::pread_full(fd, buf, h * b.w * es, at, name);
      m.write(b.r0 + r, b.c0, h, b.w, buf, b.w);
      at += h * b.w * es;
    }
    return n;
  }
  // Rows [i0, i1) of the lower triangle lie back to back in J.
  std::uint64_t at = off;
  for (std::uint64_t i0 = 1; i0 < b.h;) {
    std::uint64_t i1 = i0, bytes = 0;
    while (i1 < b.h && (i1 == i0 || bytes + i1 * es <= s.bytes)) bytes += i1++ * es;
    unsigned char* buf = grow(s.a, bytes);
    fmt::pread_full(fd, buf, bytes, at, name);
    for (std::uint64_t i = i0, o = 0; i < i1; o += i * es, ++i) m.write(b.r0 + i, b.c0, 1, i, buf + o, i);
    at += bytes;
    i0 = i1;
  }
  return n;
}

namespace {

// A whole tile, read in strips of rows, into `sum` (StreamHash or ChunkedHash).
template <class Hash>
void hash_tile(InplaceMatrix& m, const Tile& t, std::size_t es, Scratch& s, Hash& sum) {
  const std::uint64_t rows = std::min(t.h, rows_per_strip(s, t.w, es));
  unsigned char* buf = grow(s.a, rows * t.w * es);
  for (std::uint64_t r = 0; r < t.h; r += rows) {
    const std::uint64_t h = std::min(rows, t.h - r);
    m.read(t.r0 + r, t.c0, h, t.w, buf, t.w);
    sum.update(buf, std::size_t(h * t.w * es));
  }
}

}  // namespace

void hash_b_part(InplaceMatrix& m, const TilePair& p, std::size_t es, ChunkedHash& sum, Scratch& s) {
  const Tile& b = p.b;
  if (!p.diagonal()) return hash_tile(m, b, es, s, sum);
  unsigned char* buf = grow(s.a, b.h * es);
  for (std::uint64_t i = 1; i < b.h; ++i) {
    m.read(b.r0 + i, b.c0, 1, i, buf, i);
    sum.update(buf, std::size_t(i * es));
  }
}

std::uint64_t hash_tile_a(InplaceMatrix& m, const TilePair& p, std::size_t es, Scratch& s) {
  StreamHash sum;
  hash_tile(m, p.a, es, s, sum);
  return sum.digest();
}

}  // namespace gt::journal_impl
