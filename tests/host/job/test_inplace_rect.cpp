// Rectangles in place (plan.hpp InplaceShape, inplace/permute.cpp): the
// permutation's groups against a model, host memory through the API (every
// element size, tall and wide, k from 2 to 40, one row, one column), files
// (raw and .npy) through the job with small budgets so blocks have many
// pairs and the permutation many groups; general shapes (every other
// rectangle: the gcd decomposition in bands) through the job, their plan,
// and the budget too small for one band.
// Crashes and power loss on rectangles are in test_journal_crash.cpp and
// test_journal_powerloss.cpp.
#include <gtest/gtest.h>

#include <algorithm>

#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "gtranspose/error.hpp"
#include "gtranspose/format.hpp"
#include "gtranspose/host.hpp"
#include "gtranspose/job.hpp"
#include "gtranspose/journal.hpp"
#include "gtranspose/memory.hpp"
#include "gtranspose/engine.hpp"
#include "host/job/journal_test_util.hpp"
#include "support/errors.hpp"
#include "support/reference.hpp"
#include "testing.hpp"

namespace gt {
namespace {

using namespace journal_test;
using test::catch_error;
using test::random_bytes;
using test::reference_transpose;

// --- the permutation's groups --------------------------------------------------------

// Runs the groups' steps as the journal does (every chain's move t in step
// t; a chain's last move from the saved copy of the next chain's first
// destination) on segment numbers, and checks the result is the P x Q
// transpose: segment x = p*Q + q at q*P + p.
void check_groups(std::uint64_t P, std::uint64_t Q, std::uint64_t chains, std::uint64_t length) {
  const std::uint64_t n = P * Q;
  std::vector<std::uint64_t> at(n);
  std::iota(at.begin(), at.end(), 0);  // at[d]: the segment destination d holds
  permute::GroupWalker walker(P, Q, chains, length);
  permute::Group g;
  std::uint64_t groups = 0, moves = 0;
  while (walker.next(g)) {
    ++groups;
    ASSERT_LE(g.chains.size(), chains);
    std::vector<std::uint64_t> saved, pos;
    for (const auto& c : g.chains) {
      ASSERT_GE(c.len, 1u);
      ASSERT_LE(c.len, std::max(length, (n + chains - 1) / chains));
      ASSERT_LT(c.next, g.chains.size());
      saved.push_back(at[c.first]);
      pos.push_back(c.first);
    }
    for (std::uint64_t t = 0; t < g.steps; ++t) {
      // Every source is read before any destination of the step is written.
      std::vector<std::pair<std::uint64_t, std::uint64_t>> writes;
      for (std::size_t i = 0; i < g.chains.size(); ++i) {
        const auto& c = g.chains[i];
        if (t >= c.len) continue;
        const std::uint64_t src = permute::src_of(pos[i], P, Q);
        writes.emplace_back(pos[i], t + 1 == c.len ? saved[c.next] : at[src]);
        pos[i] = src;
      }
      for (const auto& [d, v] : writes) at[d] = v;
      moves += writes.size();
    }
  }
  for (std::uint64_t x = 0; x < n; ++x)
    ASSERT_EQ(at[(x % Q) * P + x / Q], x) << P << "x" << Q << " chains " << chains << " length " << length;
  EXPECT_LE(moves, n);
  EXPECT_GE(groups, 1u - (moves == 0));
}

TEST(InplacePermute, GroupsMoveEverySegmentOnce) {
  for (std::uint64_t P : {1, 2, 3, 5, 16, 37})
    for (std::uint64_t Q : {1, 2, 7, 12, 33})
      for (std::uint64_t chains : {1, 2, 5, 1000})
        for (std::uint64_t length : {1, 3, 64}) check_groups(P, Q, chains, length);
}

// --- the shapes -----------------------------------------------------------------------

TEST(InplaceShape, SquareTallWideAndTheRest) {
  InplaceShape s = plan_inplace_shape({7, 7}, "m");
  EXPECT_EQ(s.kind, InplaceShape::square);
  s = plan_inplace_shape({30, 10}, "m");
  EXPECT_EQ(s.kind, InplaceShape::tall);
  EXPECT_EQ(s.blocks, 3u);
  EXPECT_EQ(s.side, 10u);
  EXPECT_EQ(s.segments(), 30u);
  s = plan_inplace_shape({10, 40}, "m");
  EXPECT_EQ(s.kind, InplaceShape::wide);
  EXPECT_EQ(s.blocks, 4u);
  // 6 x 4 (g = 2: blocks too small) is general; only an empty matrix is refused.
  s = plan_inplace_shape({6, 4}, "m.raw");
  EXPECT_EQ(s.kind, InplaceShape::general);
  EXPECT_EQ(s.side, 2u);
  EXPECT_EQ(s.blocks, 0u);
  const Error e = catch_error([] { (void)plan_inplace_shape({0, 4}, "m.raw"); });
  EXPECT_EQ(e.kind(), ErrorKind::usage);
  EXPECT_NE(e.message().find("empty matrix in place (m.raw)"), std::string::npos) << e.what();
  EXPECT_EQ(inplace_stages(plan_inplace_shape({30, 10}, "m")).size(), 5u);  // 3 blocks, rows, end
  const auto wide = inplace_stages(plan_inplace_shape({10, 20}, "m"));
  ASSERT_EQ(wide.size(), 4u);
  EXPECT_EQ(wide.front().kind, InplaceStage::permute);
  // A grid: 3000 x 2000 is 3 x 2 blocks of 1000; a permutation in each row
  // of blocks (1000 x 2 segments), the 6 blocks, one of the whole (3 x 2000).
  s = plan_inplace_shape({3000, 2000}, "m");
  EXPECT_EQ(s.kind, InplaceShape::grid);
  EXPECT_EQ(s.side, 1000u);
  EXPECT_EQ(s.blocks, 6u);
  EXPECT_EQ(s.segments(), 6000u);  // every segment
  const auto grid = inplace_stages(s);
  ASSERT_EQ(grid.size(), 11u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(grid[i].kind, InplaceStage::permute);
    const PermuteRegion r = permute_region(s, grid[i].index);
    EXPECT_EQ(r.P, 1000u);
    EXPECT_EQ(r.Q, 2u);
    EXPECT_EQ(r.offset, i * 2000);
  }
  EXPECT_EQ(grid[3].kind, InplaceStage::block);
  EXPECT_EQ(grid[9].kind, InplaceStage::permute);
  const PermuteRegion whole = permute_region(s, grid[9].index);
  EXPECT_EQ(whole.P, 3u);
  EXPECT_EQ(whole.Q, 2000u);
  EXPECT_EQ(whole.offset, 0u);
  EXPECT_EQ(grid[10].kind, InplaceStage::end);
  // The limits: g = 16 takes up to 256 blocks (15 x 17 here); g = 15, or
  // 16 x 17 blocks, go the general way.
  EXPECT_EQ(plan_inplace_shape({16 * 15, 16 * 17}, "m").blocks, 15u * 17u);
  EXPECT_EQ(plan_inplace_shape({16 * 16, 16 * 15}, "m").kind, InplaceShape::grid);
  EXPECT_EQ(plan_inplace_shape({15 * 2, 15 * 3}, "m").kind, InplaceShape::general);
  EXPECT_EQ(plan_inplace_shape({16 * 17, 16 * 16}, "m").kind, InplaceShape::general);
  EXPECT_EQ(plan_inplace_shape({13001, 20651}, "m").kind, InplaceShape::general);
}

TEST(InplaceShape, GeneralStagesAndBands) {
  // gcd > 1: the columns' rotation, the rows' shuffle, the columns' shuffle, the end.
  const auto with_rotation = inplace_stages(plan_inplace_shape({12, 18}, "m"));
  ASSERT_EQ(with_rotation.size(), 4u);
  EXPECT_EQ(with_rotation[0].kind, InplaceStage::rotate);
  EXPECT_EQ(with_rotation[1].kind, InplaceStage::row_shuffle);
  EXPECT_EQ(with_rotation[2].kind, InplaceStage::col_shuffle);
  EXPECT_EQ(with_rotation[3].kind, InplaceStage::end);
  // gcd 1: no rotation.
  const auto coprime = inplace_stages(plan_inplace_shape({13, 7}, "m"));
  ASSERT_EQ(coprime.size(), 3u);
  EXPECT_EQ(coprime[0].kind, InplaceStage::row_shuffle);
  EXPECT_EQ(coprime[1].kind, InplaceStage::col_shuffle);

  // 13001 x 20651 f32 (gcd 1) under 1 GiB: row bands of 256 MiB
  // (kBandBytes), 3249 rows of 82,604 bytes; 256 MiB of columns would be
  // pieces of 20,644 bytes, so column bands take half the budget: 10323
  // columns, 41,292-byte pieces (13001 of them).
  BandPlan p = plan_bands({13001, 20651}, 4, std::uint64_t(1) << 30, 0, 2);
  EXPECT_EQ(p.rows, kBandBytes / (20651 * 4));
  EXPECT_EQ(p.cols, (std::uint64_t(1) << 29) / (13001 * 4));
  EXPECT_EQ(p.band_bytes, std::max(p.rows * 20651 * 4, p.cols * 13001 * 4));
  EXPECT_EQ(p.buffer_bytes, 2 * p.band_bytes);
  EXPECT_LE(p.buffer_bytes, std::uint64_t(1) << 30);
  EXPECT_EQ(p.passes, 2u);
  EXPECT_EQ(p.bands, (20651 + p.cols - 1) / p.cols + (13001 + p.rows - 1) / p.rows);
  EXPECT_EQ(p.threads, 2);
  EXPECT_EQ(p.group, 16u);  // a cache line of f32
  // A tall 10,000,000 x 7 u16 matrix (gcd 1) under 64 MiB less 8 MiB held
  // by the formats: 28 MiB a band, so a column band holds one column of 20
  // MB (2-byte pieces: longer ones do not fit) and a row band 2 Mi rows.
  p = plan_bands({10000000, 7}, 2, std::uint64_t(64) << 20, std::uint64_t(8) << 20, 1);
  EXPECT_EQ(p.cols, 1u);
  EXPECT_EQ(p.rows, (std::uint64_t(28) << 20) / 14);
  EXPECT_LE(p.buffer_bytes, std::uint64_t(56) << 20);
  // Longer pieces where the band cap alone would give less, up to
  // kBandMaxBytes a band: 100,000 x 99,999 u8 under 16 GiB, 256 MiB bands
  // would be 2684 columns (2.6 KiB pieces), 64 KiB pieces a band of 6.5 GB
  // (and a journal of two): kBandMaxBytes stops them at 10737 columns.
  p = plan_bands({100000, 99999}, 1, std::uint64_t(16) << 30, 0, 1);
  EXPECT_EQ(p.cols, kBandMaxBytes / 100000);
  EXPECT_LE(p.band_bytes, kBandMaxBytes);
  EXPECT_EQ(p.rows, kBandBytes / 99999);
  // Where the budget holds 64 KiB pieces under that cap, they are taken:
  // 10,000 x 99,999 u8 (26843 columns of 10,000 rows at 256 MiB) gets 65536.
  p = plan_bands({10000, 99999}, 1, std::uint64_t(16) << 30, 0, 1);
  EXPECT_EQ(p.cols, kBandPieceBytes);
  EXPECT_EQ(p.passes, 2u);
  // gcd 5: three passes.
  EXPECT_EQ(plan_bands({40, 25}, 8, 1 << 20, 0, 1).passes, 3u);
  // Too small for one row and one column band: one line says what would do.
  const Error e = catch_error([] { (void)plan_bands({5000, 3001}, 1, 8 << 10, 0, 1); });
  EXPECT_EQ(e.kind(), ErrorKind::usage);
  EXPECT_EQ(e.message(), "in place, a 5000x3001 matrix of 1-byte elements moves in bands of whole rows and columns, "
                         "and {host_mem} 8K holds no two of them: give {host_mem} 10K or more");
}

// --- host memory ------------------------------------------------------------------------

TEST(InplaceRectHost, EveryElementSizeTallAndWide) {
  struct S {
    std::uint64_t r, c;
  };
  for (std::size_t es : {1, 2, 4, 8, 16}) {
    for (S s : {S{6, 3}, S{3, 6}, S{200, 40}, S{40, 200}, S{1, 9}, S{9, 1}, S{123, 41}, S{17, 680}, S{2, 1}}) {
      const Bytes in = random_bytes(std::size_t(s.r * s.c * es), s.r * 131 + s.c + es);
      Bytes want(in.size());
      reference_transpose(in.data(), s.r, s.c, s.c, want.data(), s.r, es);
      Bytes m = in;
      HostOptions o;
      o.engine = EngineChoice::cpu;
      o.run.host_mem = 64 << 10;  // many tiles per block
      const RunReport r = transpose_inplace(m.data(), s.r, s.c, es, o);
      ASSERT_TRUE(m == want) << s.r << "x" << s.c << " es " << es << ": "
                             << test::first_difference(m.data(), want.data(), m.size(), es, s.r);
      EXPECT_EQ(r.bytes, s.r * s.c * es);
    }
  }
}

// The permutation in host memory runs on the run's threads, each on a
// stripe of every segment (permute_memory): tall and wide shapes whose
// segments split into several stripes (4000 bytes into 5, edges on 64-byte
// lines; 6400 and 12800 bytes), and one stripe (500 bytes), each at 1, 3
// and 5 threads, bit-exact. (A grid in host memory takes the gcd
// decomposition, test_inplace_general.cpp.)
TEST(InplaceRectHost, PermutationOnStripesOfThreads) {
  struct S {
    std::uint64_t r, c;
    std::size_t es;
  };
  for (S s : {S{3000, 1000, 4}, S{1000, 3000, 4}, S{500, 1500, 1}, S{2400, 800, 8}, S{800, 2400, 16}}) {
    for (int threads : {1, 3, 5}) {
      const Bytes in = random_bytes(std::size_t(s.r * s.c * s.es), s.r * 7 + s.c + s.es + std::uint64_t(threads));
      Bytes want(in.size());
      reference_transpose(in.data(), s.r, s.c, s.c, want.data(), s.r, s.es);
      Bytes m = in;
      HostOptions o;
      o.engine = EngineChoice::cpu;
      o.run.threads = threads;
      const RunReport r = transpose_inplace(m.data(), s.r, s.c, s.es, o);
      ASSERT_TRUE(m == want) << s.r << "x" << s.c << " es " << s.es << " threads " << threads << ": "
                             << test::first_difference(m.data(), want.data(), m.size(), s.es, s.r);
      EXPECT_TRUE(std::any_of(r.stages.begin(), r.stages.end(), [](const StageStat& st) { return st.name == "permute"; }))
          << s.r << "x" << s.c << ": no permutation stage";
    }
  }
}

TEST(InplaceRectHost, RefusesLayoutsItCannotDo) {
  // Other shapes than R = kC are taken in memory (test_inplace_general.cpp);
  // a rectangle with gaps between its rows is not.
  HostOptions o;
  o.engine = EngineChoice::cpu;
  o.ld_in = 5;
  Bytes w(8 * 5 * 4);
  Error e = catch_error([&] { (void)transpose_inplace(w.data(), 8, 4, 4, o); });
  EXPECT_NE(e.message().find("leave ld_in 0"), std::string::npos) << e.what();
}

// A general shape's stages without a journal (plain_inplace_stages: the
// bands read, permuted and written straight back), on host memory: the
// same bytes as the reference, in bands of a few rows and columns.
TEST(InplaceRectHost, GeneralStagesWithoutAJournal) {
  struct S {
    std::uint64_t r, c;
  };
  const auto engine = make_engine(EngineKind::cpu);
  for (std::size_t es : {1, 4, 16}) {
    for (S s : {S{13, 7}, S{12, 18}, S{40, 25}, S{6, 4}}) {
      const Bytes in = random_bytes(std::size_t(s.r * s.c * es), s.r * 7 + s.c + es);
      Bytes want(in.size());
      reference_transpose(in.data(), s.r, s.c, s.c, want.data(), s.r, es);
      Bytes m = in;
      HostMatrix hm{m.data(), {s.r, s.c}, es, s.c};
      auto matrix = memory_inplace(hm);
      auto stages = plain_inplace_stages(hm.shape);
      RunOptions o;
      o.host_mem = 4 * std::max(s.r, s.c) * es;  // bands of 2 lines of the longer side
      o.threads = 2;
      RunReport r = execute_inplace_stages(*engine, *matrix, *stages, o);
      ASSERT_TRUE(m == want) << s.r << "x" << s.c << " es " << es << ": "
                             << test::first_difference(m.data(), want.data(), m.size(), es, s.r);
      EXPECT_GT(r.tiles, 2u);
      EXPECT_EQ(r.stage("shuffle rows").bytes, s.r * s.c * es);
    }
  }
}

// --- files -------------------------------------------------------------------------------

// Transposes the transposed file again (a raw file needs its new shape):
// the original bytes, and a .npy says the original shape.
void expect_back_to_original(const Dir& d, const Case& c) {
  JobOptions back = job_of(d, c, false);
  if (c.ext == ".raw") back.open.shape = shape_of(c).transposed();
  run_job(back);
  Shape s;
  EXPECT_TRUE(read_matrix(d, c, &s) == pattern_of(c)) << c.name << ": not back to the original";
  if (c.ext == ".npy") {
    EXPECT_EQ(s, shape_of(c));
  }
}

class InplaceRectFiles : public ::testing::TestWithParam<Case> {};

std::uint64_t shape_blocks(const Case& c) {
  const std::uint64_t g = std::gcd(c.n, cols_of(c));
  return (c.n / g) * (cols_of(c) / g);
}

TEST_P(InplaceRectFiles, TransposedBitExactAndTheShapeSaysSo) {
  const Case& c = GetParam();
  Dir d;
  create(d, c);
  JobOptions job = job_of(d, c, false);
  std::vector<std::string> stages;  // what the CLI's progress line names
  job.run.stage = [&](const std::string& s) { stages.push_back(s); };
  RunReport r = run_job(job);
  EXPECT_TRUE(is_transposed(d, c)) << c.name;
  ASSERT_GE(stages.size(), 3u);
  // Tall: the blocks, then the rows' permutation; wide: the other way round;
  // a grid: a permutation per row of blocks, the blocks, one of the whole.
  const auto first_block = std::find_if(stages.begin(), stages.end(),
                                        [](const std::string& s) { return s.rfind("transpose block ", 0) == 0; });
  ASSERT_NE(first_block, stages.end());
  EXPECT_EQ(first_block->rfind("transpose block 1 of " + std::to_string(shape_blocks(c)), 0), 0u) << *first_block;
  const auto permutes = std::count(stages.begin(), stages.end(), "permute rows");
  const std::uint64_t g = std::gcd(c.n, cols_of(c)), a = c.n / g, b = cols_of(c) / g;
  EXPECT_EQ(std::uint64_t(permutes), (b > 1 ? a : 0) + (a > 1 ? 1 : 0)) << c.name;
  EXPECT_EQ(stages.back(), "finish");
  EXPECT_NE(std::find(stages.begin(), stages.end(), "permute rows"), stages.end());
  EXPECT_EQ(d.entries(), std::vector<std::string>{"m" + c.ext}) << "stray files";
  if (std::min(c.n, cols_of(c)) > 1) {
    EXPECT_GT(r.stage("permute").bytes, 0u);  // a column's rows stay put
  }
  EXPECT_GT(r.stage("journal").bytes, 0u);
  // And back: the transpose is a rectangle too.
  expect_back_to_original(d, c);
}

INSTANTIATE_TEST_SUITE_P(
    RectShapes, InplaceRectFiles,
    ::testing::Values(Case{"raw_u8_tall_96x24", ".raw", 1, 96, 8, 0, 24}, Case{"raw_f64_wide_10x70", ".raw", 8, 10, 4, 0, 70},
                      Case{"npy_f32_tall_120x30", ".npy", 4, 120, 8, 0, 30},
                      Case{"npy_c128_wide_5x40", ".npy", 16, 5, 2, 0, 40},
                      Case{"npy_u16_column_50x1", ".npy", 2, 50, 1, 0, 1},
                      // Grids: blocks of gcd x gcd, a x b of them.
                      Case{"raw_f32_grid_48x72", ".raw", 4, 48, 8, 0, 72}, Case{"npy_u8_grid_96x64", ".npy", 1, 96, 8, 0, 64},
                      Case{"npy_c128_grid_80x48", ".npy", 16, 80, 4, 0, 48},
                      Case{"raw_u16_grid_34x51", ".raw", 2, 34, 8, 0, 51}),
    [](const ::testing::TestParamInfo<Case>& i) { return i.param.name; });

// General shapes: every element size, gcd 1 (prime x prime among them) and
// small gcds (2, 5, 6), in bands of a few rows and columns (budget_of), there
// and back, bit-exact, raw and .npy.
class InplaceGeneralFiles : public ::testing::TestWithParam<Case> {};

TEST_P(InplaceGeneralFiles, TransposedBitExactThereAndBack) {
  const Case& c = GetParam();
  ASSERT_TRUE(is_general(c)) << c.name << " is not a general shape";
  Dir d;
  create(d, c);
  JobOptions job = job_of(d, c, false);
  std::vector<std::string> stages;
  job.run.stage = [&](const std::string& s) { stages.push_back(s); };
  RunReport r = run_job(job);
  EXPECT_TRUE(is_transposed(d, c)) << c.name;
  const std::uint64_t g = std::gcd(c.n, cols_of(c));
  std::vector<std::string> want;
  if (g > 1) want.push_back("rotate columns");
  want.insert(want.end(), {"shuffle rows", "shuffle columns", "finish"});
  EXPECT_EQ(stages, want) << c.name;
  // Every pass journals the whole matrix, and reads and writes it.
  const BandPlan bp = plan_bands(shape_of(c), c.es, budget_of(c), 0, 1);
  const std::uint64_t bytes = c.n * cols_of(c) * c.es;
  // (and a header of less than 4 KiB a band, and a few more)
  EXPECT_GE(r.stage("journal").bytes, bp.passes * bytes);
  EXPECT_LT(r.stage("journal").bytes, bp.passes * bytes + (bp.bands + 4) * 4096);
  EXPECT_EQ(r.stage("shuffle rows").bytes, bytes);
  EXPECT_EQ(r.tiles, bp.bands);
  EXPECT_GT(bp.bands, bp.passes) << c.name << ": the budget should give several bands a pass";
  EXPECT_EQ(r.plan.journal_bytes, bp.passes * bytes);
  EXPECT_EQ(r.host_buffers, bp.buffer_bytes);
  EXPECT_LE(r.host_buffers, budget_of(c));
  EXPECT_EQ(d.entries(), std::vector<std::string>{"m" + c.ext}) << "stray files";
  // And back: C x R is general too.
  expect_back_to_original(d, c);
}

INSTANTIATE_TEST_SUITE_P(
    GeneralShapes, InplaceGeneralFiles,
    ::testing::Values(Case{"raw_f32_13x7", ".raw", 4, 13, 2, 0, 7}, Case{"npy_f32_13x7", ".npy", 4, 13, 1, 0, 7},
                      Case{"npy_u8_1000x999", ".npy", 1, 1000, 64, 0, 999},
                      Case{"raw_u8_1000x999", ".raw", 1, 1000, 300, 0, 999},
                      Case{"raw_c128_31x17", ".raw", 16, 31, 3, 0, 17}, Case{"npy_c128_31x17", ".npy", 16, 31, 5, 0, 17},
                      Case{"raw_u16_101x103_primes", ".raw", 2, 101, 9, 0, 103},
                      Case{"npy_f64_7x5", ".npy", 8, 7, 1, 0, 5},
                      Case{"npy_u16_12x18_gcd6", ".npy", 2, 12, 2, 0, 18},
                      Case{"raw_u16_12x18_gcd6", ".raw", 2, 12, 5, 0, 18},
                      Case{"raw_f64_40x25_gcd5", ".raw", 8, 40, 3, 0, 25},
                      Case{"npy_f32_40x25_gcd5", ".npy", 4, 40, 7, 0, 25},
                      Case{"raw_u8_6x4_gcd2", ".raw", 1, 6, 1, 0, 4},
                      Case{"npy_c128_30x45_gcd15", ".npy", 16, 30, 4, 0, 45},
                      Case{"raw_f32_272x256_too_many_blocks", ".raw", 4, 272, 16, 0, 256}),
    [](const ::testing::TestParamInfo<Case>& i) { return i.param.name; });

TEST(InplaceGeneralFiles, ABudgetTooSmallForOneBandIsRefusedUntouched) {
  const Case c{"raw_u8_5000x3001", ".raw", 1, 5000, 1, 0, 3001};
  Dir d;
  create(d, c);
  JobOptions job = job_of(d, c, false);
  job.run.host_mem = 8 << 10;
  const Error e = catch_error([&] { run_job(job); });
  EXPECT_EQ(e.kind(), ErrorKind::usage);
  EXPECT_NE(e.message().find("holds no two of them: give {host_mem} 10K or more"), std::string::npos) << e.what();
  EXPECT_TRUE(read_matrix(d, c) == pattern_of(c));
  EXPECT_EQ(d.entries(), std::vector<std::string>{"m.raw"}) << "no journal may be left";
}

TEST(InplaceRectFiles, AFortranOrderRectangleIsRefused) {
  Dir d;
  // A .npy file as NumPy writes a Fortran-order 4 x 2 float32 array.
  std::string dict = "{'descr': '<f4', 'fortran_order': True, 'shape': (4, 2), }";
  while ((10 + dict.size() + 1) % 64) dict += ' ';
  dict += '\n';
  std::string file = std::string("\x93NUMPY\x01\x00", 8);
  file += char(dict.size() & 0xff);
  file += char(dict.size() >> 8);
  file += dict + std::string(4 * 2 * 4, '\x01');
  test::write_file(d / "f.npy", file);
  const Error e = catch_error([&] { (void)open_inplace(d / "f.npy", {}); });
  EXPECT_EQ(e.kind(), ErrorKind::input);
  EXPECT_NE(e.message().find("Fortran-order 4x2 rectangle"), std::string::npos) << e.what();
}

}  // namespace
}  // namespace gt
