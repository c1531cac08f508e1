#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "gtranspose/error.hpp"
#include "gtranspose/tiles.hpp"

namespace {

using gt::TileGrid;
using gt::GridRequest;
using gt::Shape;
using gt::Tile;

GridRequest request(std::uint64_t rows, std::uint64_t cols, std::size_t es, std::uint64_t tile_bytes,
                    Shape block = {0, 0}, std::uint64_t chunk = 0) {
  GridRequest r;
  r.shape = {rows, cols};
  r.elem_size = es;
  r.tile_bytes = tile_bytes;
  r.preferred_block = block;
  r.tile_elems = chunk;
  return r;
}

std::string describe(const GridRequest& r) {
  return gt::to_string(r.shape) + " es=" + std::to_string(r.elem_size) + " tile_bytes=" +
         std::to_string(r.tile_bytes) + " block=" + gt::to_string(r.preferred_block) + " chunk=" +
         std::to_string(r.tile_elems);
}

// Walks every tile and proves the tiles partition the matrix: row-major grid
// order, each tile starting where the previous one ended (so no overlap and
// no gap), rows of tiles stacked exactly, total area equal to the matrix's.
void check_partition(const TileGrid& p, const GridRequest& req) {
  SCOPED_TRACE(describe(req));
  const std::uint64_t R = req.shape.rows, C = req.shape.cols;
  const std::uint64_t cap = req.tile_elems ? std::min(req.tile_bytes / req.elem_size, req.tile_elems)
                                            : req.tile_bytes / req.elem_size;
  ASSERT_LE(p.tile_h() * p.tile_w(), cap);
  ASSERT_EQ(p.count(), p.tile_rows() * p.tile_cols());
  std::uint64_t area = 0, row_r0 = 0, row_h = 0, next_c0 = 0;
  for (std::uint64_t k = 0; k < p.count(); ++k) {
    const Tile t = p.tile(k);
    ASSERT_GT(t.h, 0u);
    ASSERT_GT(t.w, 0u);
    ASSERT_LE(t.elems(), cap);
    if (t.c0 == 0) {
      ASSERT_EQ(next_c0, k == 0 ? 0 : C) << "tile " << k;
      ASSERT_EQ(t.r0, k == 0 ? 0 : row_r0 + row_h) << "tile " << k;
      row_r0 = t.r0;
      row_h = t.h;
    } else {
      ASSERT_EQ(t.c0, next_c0) << "tile " << k;
      ASSERT_EQ(t.r0, row_r0) << "tile " << k;
      ASSERT_EQ(t.h, row_h) << "tile " << k;
    }
    ASSERT_LE(t.c0 + t.w, C);
    ASSERT_LE(t.r0 + t.h, R);
    next_c0 = t.c0 + t.w;
    area += t.elems();
  }
  EXPECT_EQ(next_c0, C);
  EXPECT_EQ(row_r0 + row_h, R);
  EXPECT_EQ(area, R * C);
}

// Counts every element with a bitmap: each covered exactly once.
void check_bitmap(const TileGrid& p, const GridRequest& req) {
  SCOPED_TRACE(describe(req));
  const std::uint64_t R = req.shape.rows, C = req.shape.cols;
  std::vector<std::uint8_t> hits(R * C, 0);
  for (std::uint64_t k = 0; k < p.count(); ++k) {
    const Tile t = p.tile(k);
    for (std::uint64_t r = t.r0; r < t.r0 + t.h; ++r)
      for (std::uint64_t c = t.c0; c < t.c0 + t.w; ++c) ++hits[r * C + c];
  }
  for (std::uint64_t i = 0; i < R * C; ++i) ASSERT_EQ(hits[i], 1) << "element (" << i / C << ", " << i % C << ")";
}

TEST(Planner, SmallShapesCoveredExactlyOnce) {
  const std::vector<Shape> shapes = {{1, 1},   {1, 37},  {37, 1},   {31, 33},  {64, 64},  {65, 63},
                                     {100, 3}, {3, 100}, {127, 131}, {1000, 999}, {4097, 65}, {7, 4099}};
  const std::vector<std::uint64_t> budgets_in_elems = {1, 2, 3, 7, 64, 100, 1000, 4096, 65536, 1u << 20, 1u << 30};
  const std::vector<Shape> blocks = {{0, 0}, {10, 7}, {64, 64}, {1, 1000}};
  for (const Shape& s : shapes)
    for (std::size_t es : {1, 4, 16})
      for (std::uint64_t be : budgets_in_elems)
        for (const Shape& b : blocks)
          for (std::uint64_t chunk : {0, 50}) {
            if (s.rows * s.cols / be > 300000) continue;  // keep the bitmap walk quick
            const GridRequest req = request(s.rows, s.cols, es, be * es + (es > 1 ? es - 1 : 0), b, chunk);
            const TileGrid p(req);
            check_partition(p, req);
            check_bitmap(p, req);
            if (HasFatalFailure()) return;
          }
}

TEST(Planner, LongThinMatricesUseWholeSides) {
  // 3 x 50,000,000: the tile spans all 3 rows and as many columns as fit.
  GridRequest req = request(3, 50000000, 4, 1 << 20);
  TileGrid a(req);
  EXPECT_EQ(a.tile_h(), 3u);
  EXPECT_EQ(a.tile_w() % 64, 0u);
  EXPECT_GE(a.tile_w() * 3 * 4, (1u << 20) - 3 * 64 * 4);
  check_partition(a, req);
  // 50,000,000 x 3: full-width stripes.
  req = request(50000000, 3, 4, 1 << 20);
  TileGrid b(req);
  EXPECT_EQ(b.tile_w(), 3u);
  EXPECT_EQ(b.tile_h() % 64, 0u);
  check_partition(b, req);
}

TEST(Planner, StripesWhenColumnsAreFew) {
  const GridRequest req = request(1000000, 100, 4, 4 << 20);
  const TileGrid p(req);
  EXPECT_EQ(p.tile_w(), 100u);
  EXPECT_EQ(p.tile_h() % 64, 0u);
  EXPECT_GT(p.tile_h(), 5000u);  // a run of 5000+ elements per written row
  check_partition(p, req);
}

TEST(Planner, NearSquareAndAlignedWhenBothSidesAreLarge) {
  const GridRequest req = request(100000, 70000, 4, 64 << 20);
  const TileGrid p(req);
  EXPECT_EQ(p.tile_h() % 64, 0u);
  EXPECT_EQ(p.tile_w() % 64, 0u);
  EXPECT_LE(std::max(p.tile_h(), p.tile_w()), 2 * std::min(p.tile_h(), p.tile_w()));
  EXPECT_GT(p.tile_h() * p.tile_w() * 4, (64u << 20) * 9 / 10);  // uses most of the budget
  check_partition(p, req);
}

TEST(Planner, HonoursPreferredBlockAndChunk) {
  GridRequest req = request(100000, 100000, 4, 64 << 20, {100, 300});
  TileGrid p(req);
  EXPECT_EQ(p.tile_h() % 100, 0u);
  EXPECT_EQ(p.tile_w() % 300, 0u);
  check_partition(p, req);
  // A chunk larger than the tile cannot be honoured: fall back to 64.
  req = request(100000, 100000, 4, 1 << 20, {5000, 5000});
  TileGrid q(req);
  EXPECT_EQ(q.tile_h() % 64, 0u);
  check_partition(q, req);
  // --chunk caps the elements per tile below the byte budget.
  req = request(10000, 10000, 4, 64 << 20, {0, 0}, 100000);
  TileGrid c(req);
  EXPECT_LE(c.tile_h() * c.tile_w(), 100000u);
  EXPECT_GT(c.tile_h() * c.tile_w(), 50000u);
  check_partition(c, req);
}

// Tiles are whole source blocks (HDF5 chunks) wherever one block fits the
// budget: a tile then reads its chunks whole, and covers whole chunks of a
// chunked output (the transposed blocks).
TEST(Planner, TilesAreWholeBlocksWhereABlockFits) {
  // A row chunk far wider than a square tile: full-width stripes of whole rows.
  GridRequest req = request(100000, 100000, 4, 64 << 20, {1, 100000});
  TileGrid rows(req);
  EXPECT_EQ(rows.tile_w(), 100000u);
  EXPECT_EQ(rows.tile_h(), (64u << 20) / 4 / 100000);
  check_partition(rows, req);
  // A tall column chunk, taller than a square tile.
  req = request(50000, 30000, 4, 16 << 20, {10000, 10});
  TileGrid cols(req);
  EXPECT_EQ(cols.tile_h() % 10000, 0u);
  EXPECT_EQ(cols.tile_w() % 10, 0u);
  EXPECT_GT(cols.tile_h() * cols.tile_w() * 4, (16u << 20) * 9 / 10);
  check_partition(cols, req);
  // A chunk as wide as the matrix and a short side: whole-width tiles.
  req = request(1000, 300, 2, 2 * 64 * 300 * 2, {64, 300});  // room for two chunks
  TileGrid wide(req);
  EXPECT_EQ(wide.tile_w(), 300u);
  EXPECT_EQ(wide.tile_h(), 128u);
  check_partition(wide, req);
  // Random shapes, blocks and budgets: whenever one block fits, both tile
  // extents are whole blocks (or the whole side).
  std::mt19937_64 rng(11);
  for (int i = 0; i < 20000; ++i) {
    const std::uint64_t R = 1 + rng() % 5000, C = 1 + rng() % 5000;
    const Shape block{1 + rng() % 700, 1 + rng() % 700};
    const std::size_t es = std::size_t(1) << (rng() % 5);
    const std::uint64_t cap = 1 + rng() % 400000;
    req = request(R, C, es, cap * es, block);
    const TileGrid p(req);
    ASSERT_LE(p.tile_h() * p.tile_w(), cap) << describe(req);
    ASSERT_LE(p.tile_h(), R);
    ASSERT_LE(p.tile_w(), C);
    const std::uint64_t br = std::min(block.rows, R), bc = std::min(block.cols, C);
    if (br * bc > cap) continue;
    EXPECT_TRUE(p.tile_h() == R || p.tile_h() % br == 0) << describe(req) << " h=" << p.tile_h();
    EXPECT_TRUE(p.tile_w() == C || p.tile_w() % bc == 0) << describe(req) << " w=" << p.tile_w();
    if (HasFailure()) return;
  }
}

TEST(Planner, HugeMatricesWith64BitExtents) {
  // 2^40 elements, 1 MiB tiles: four million tiles, all walked.
  GridRequest req = request(std::uint64_t(1) << 20, std::uint64_t(1) << 20, 4, 1 << 20);
  TileGrid p(req);
  EXPECT_EQ(p.count(), (std::uint64_t(1) << 40) / (std::uint64_t(1) << 18));
  check_partition(p, req);
  // A side longer than 2^32 and a tiny budget: too many tiles to walk, so
  // check the grid's arithmetic at its corners and at random places.
  req = request(std::uint64_t(5) << 32, 3, 8, 4096);
  TileGrid q(req);
  EXPECT_EQ(q.tile_w(), 3u);
  const Tile last = q.tile(q.count() - 1);
  EXPECT_EQ(last.r0 + last.h, std::uint64_t(5) << 32);
  EXPECT_EQ(last.c0 + last.w, 3u);
  req = request(std::uint64_t(1) << 30, std::uint64_t(1) << 30, 2, 64);
  TileGrid h(req);
  std::mt19937_64 rng(7);
  for (int i = 0; i < 1000; ++i) {
    const std::uint64_t k = rng() % h.count();
    const Tile t = h.tile(k);
    EXPECT_EQ(t.r0, k / h.tile_cols() * h.tile_h());
    EXPECT_EQ(t.c0, k % h.tile_cols() * h.tile_w());
    EXPECT_LE(t.elems() * 2, 64u);
  }
  const Tile end = h.tile(h.count() - 1);
  EXPECT_EQ(end.r0 + end.h, std::uint64_t(1) << 30);
  EXPECT_EQ(end.c0 + end.w, std::uint64_t(1) << 30);
}

TEST(Planner, BudgetBelowOneElementIsAUsageError) {
  try {
    TileGrid p(request(10, 10, 8, 7));
    FAIL() << "expected gt::Error";
  } catch (const gt::Error& e) {
    EXPECT_EQ(e.kind(), gt::ErrorKind::usage);
  }
  EXPECT_THROW(gt::PairGrid(10, 16, 15), gt::Error);
  EXPECT_THROW(TileGrid(request(0, 10, 4, 1024)), gt::Error);
}

// In place: pairs (i, j), i <= j, row-major over the upper triangle; every
// tile of the grid appears exactly once (as a or as b), mirrors match, and
// every element is covered exactly once.
void check_inplace(std::uint64_t n, std::size_t es, std::uint64_t tile_bytes, bool bitmap) {
  SCOPED_TRACE("n=" + std::to_string(n) + " es=" + std::to_string(es) + " tile_bytes=" + std::to_string(tile_bytes));
  const gt::PairGrid p(n, es, tile_bytes);
  const std::uint64_t b = p.block(), t = p.tiles_per_side();
  ASSERT_LE(b * b * es, tile_bytes);
  ASSERT_EQ(t, (n + b - 1) / b);
  std::vector<std::uint8_t> tile_hits(bitmap ? t * t : 0, 0), elem_hits(bitmap ? n * n : 0, 0);
  std::uint64_t i = 0, j = 0, area = 0;
  for (std::uint64_t k = 0; k < p.count(); ++k) {
    const gt::TilePair q = p.pair(k);
    ASSERT_EQ(q.a.r0, i * b) << "pair " << k;
    ASSERT_EQ(q.a.c0, j * b) << "pair " << k;
    ASSERT_EQ(q.b.r0, q.a.c0);
    ASSERT_EQ(q.b.c0, q.a.r0);
    ASSERT_EQ(q.b.h, q.a.w);
    ASSERT_EQ(q.b.w, q.a.h);
    ASSERT_EQ(q.diagonal(), i == j);
    ASSERT_LE(q.a.r0 + q.a.h, n);
    ASSERT_LE(q.a.c0 + q.a.w, n);
    area += q.a.elems() * (q.diagonal() ? 1 : 2);
    if (bitmap) {
      ++tile_hits[i * t + j];
      if (!q.diagonal()) ++tile_hits[j * t + i];
      for (const Tile& x : q.diagonal() ? std::vector<Tile>{q.a} : std::vector<Tile>{q.a, q.b})
        for (std::uint64_t r = x.r0; r < x.r0 + x.h; ++r)
          for (std::uint64_t c = x.c0; c < x.c0 + x.w; ++c) ++elem_hits[r * n + c];
    }
    if (++j == t) j = ++i;
  }
  EXPECT_EQ(i, t);
  EXPECT_EQ(area, n * n);
  for (std::uint64_t x = 0; x < tile_hits.size(); ++x) ASSERT_EQ(tile_hits[x], 1) << "tile " << x / t << "," << x % t;
  for (std::uint64_t x = 0; x < elem_hits.size(); ++x) ASSERT_EQ(elem_hits[x], 1) << "element " << x;
}

TEST(PairGrid, PairsCoverTheUpperTriangleOnce) {
  for (std::uint64_t n : {1, 2, 3, 63, 64, 65, 200, 1000, 4097})
    for (std::size_t es : {1, 8, 16})
      for (std::uint64_t elems : {1, 4, 9, 4096, 5000, 1 << 20}) {
        check_inplace(n, es, elems * es, n <= 1000);
        if (HasFatalFailure()) return;
      }
}

TEST(PairGrid, HugeSquare) {
  const std::uint64_t n = std::uint64_t(3) << 20;  // 9 * 2^40 elements
  check_inplace(n, 4, 64 << 20, false);
  const gt::PairGrid p(n, 4, 4096);
  const gt::TilePair last = p.pair(p.count() - 1);
  EXPECT_TRUE(last.diagonal());
  EXPECT_EQ(last.a.r0 + last.a.h, n);
  const gt::TilePair second = p.pair(1);
  EXPECT_EQ(second.a.r0, 0u);
  EXPECT_EQ(second.a.c0, p.block());
  const gt::TilePair row1 = p.pair(p.tiles_per_side());
  EXPECT_EQ(row1.a.r0, p.block());
  EXPECT_EQ(row1.a.c0, p.block());
}

}  // namespace
