// Rectangles in place in host memory by the gcd decomposition
// (inplace/general.cpp): every element size, shapes with gcd 1 and gcd > 1,
// one row, one column, primes, R = kC shapes run through it directly, a
// budget that holds one thread's scratch only, and the refusal of a budget
// that does not hold it. Bit-exact against the reference transpose.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "gtranspose/error.hpp"
#include "gtranspose/host.hpp"
#include "support/errors.hpp"
#include "support/gpu.hpp"
#include "support/reference.hpp"
#include "testing.hpp"

namespace gt {
namespace {

using test::catch_error;
using test::random_bytes;
using test::transposed;

struct Dims {
  std::uint64_t r, c;
};

// Through the decomposition itself, so R = kC shapes (which the API sends
// to the engines' stages) are checked here too.
void check_direct(std::uint64_t r, std::uint64_t c, std::size_t es, int threads, std::uint64_t budget) {
  SCOPED_TRACE(std::to_string(r) + "x" + std::to_string(c) + " es " + std::to_string(es) + " threads " +
               std::to_string(threads));
  test::Bytes m = random_bytes(r * c * es, r * 131 + c * 7 + es);
  const test::Bytes want = transposed(m, r, c, es);
  const inplace::GeneralRun run = inplace::plan_general(r, c, es, threads, budget);
  inplace::transpose_general(m.data(), r, c, es, run);
  ASSERT_TRUE(m == want) << test::first_difference(m.data(), want.data(), m.size(), es, c);
}

TEST(InplaceGeneral, EveryShapeUpTo23BitExact) {
  for (std::uint64_t r = 1; r <= 23; ++r)
    for (std::uint64_t c = 1; c <= 23; ++c) check_direct(r, c, 4, 3, 1ull << 30);
}

TEST(InplaceGeneral, EveryElementSizeAtOddAndSharedFactorShapes) {
  const Dims shapes[] = {{1, 1000}, {1000, 1}, {6, 4}, {12, 18}, {97, 89}, {100, 35}, {360, 150}, {1031, 257},
                         {64, 48}, {2, 3}, {255, 256}, {513, 96}};
  for (std::size_t es : {1, 2, 4, 8, 16})
    for (const Dims& d : shapes) check_direct(d.r, d.c, es, 4, 1ull << 30);
}

TEST(InplaceGeneral, OneThreadAndNarrowBandsUnderASmallBudget) {
  // 700x300 f64: a row is 2400 B, a column 5600 B; a budget of 6000 B holds
  // one thread with bands of one column.
  const inplace::GeneralRun run = inplace::plan_general(700, 300, 8, 8, 6000);
  EXPECT_EQ(run.threads, 1);
  EXPECT_EQ(run.band, 1u);
  EXPECT_LE(run.scratch, 6000u);
  check_direct(700, 300, 8, 8, 6000);
  Error e = catch_error([] { (void)inplace::plan_general(700, 300, 8, 1, 5599); });
  EXPECT_EQ(e.kind(), ErrorKind::usage);
  EXPECT_NE(e.message().find("give {host_mem} of at least"), std::string::npos) << e.what();
}

TEST(InplaceGeneral, ThroughTheApiWithItsReport) {
  const std::uint64_t r = 1000, c = 1537;  // gcd 1: no R = kC, no rotation
  test::Bytes m = random_bytes(r * c * 2, 5);
  const test::Bytes want = transposed(m, r, c, 2);
  HostOptions o;
  o.engine = EngineChoice::cpu;
  RunReport rep = transpose_inplace(m.data(), r, c, 2, o);
  EXPECT_TRUE(m == want);
  EXPECT_EQ(rep.mode, "in-place");
  EXPECT_EQ(rep.kernel, "gcd decomposition");
  EXPECT_EQ(rep.bytes, r * c * 2);
  EXPECT_LE(rep.host_buffers, rep.host_mem_budget);
  ASSERT_FALSE(rep.notes.empty());
  EXPECT_NE(rep.notes.back().find("a row shuffle and a column shuffle"), std::string::npos) << rep.notes.back();
  // 6x4 (gcd 2): the column rotation runs too; and back again.
  test::Bytes s = random_bytes(6 * 4 * 16, 9);
  const test::Bytes orig = s;
  rep = transpose_inplace(s.data(), 6, 4, 16, o);
  EXPECT_TRUE(s == transposed(orig, 6, 4, 16));
  EXPECT_NE(rep.notes.back().find("a column rotation"), std::string::npos) << rep.notes.back();
  transpose_inplace(s.data(), 4, 6, 16, o);
  EXPECT_TRUE(s == orig);
  // A budget below a row's scratch is refused before anything moves.
  o.run.host_mem = 100;
  const test::Bytes before = m;
  Error e = catch_error([&] { (void)transpose_inplace(m.data(), r, c, 2, o); });
  EXPECT_EQ(e.kind(), ErrorKind::usage);
  EXPECT_TRUE(m == before);
}

// On the CUDA engine a rectangle the device budget holds goes through the
// GPU (engine/host_rect.hpp): copied whole, inplace-rect, copied back; one
// the budget does not hold takes the decomposition on the CPU, saying why.
TEST(InplaceGeneral, ThroughTheGpuWhereTheDeviceBudgetHoldsIt) {
  GT_SKIP_WITHOUT_GPU();
  HostOptions o;
  o.engine = EngineChoice::cuda;
  {
    // Under kHostRectGpuMinBytes (1 GiB) the CPU's decomposition, saying why.
    test::Bytes m = random_bytes(1009 * 769 * 4, 9);
    const test::Bytes orig = m;
    const RunReport rep = transpose_inplace(m.data(), 1009, 769, 4, o);
    EXPECT_TRUE(m == transposed(orig, 1009, 769, 4));
    EXPECT_EQ(rep.kernel, "gcd decomposition");
    bool said = false;
    for (const auto& n : rep.notes) said = said || n.find("where the CPU's decomposition is faster") != std::string::npos;
    EXPECT_TRUE(said);
  }
  // The small matrices below through the GPU.
  setenv("GT_TEST_HOST_RECT_MIN_BYTES", "0", 1);
  // gcd 7 and gcd 1 (the coprime walk): the decomposition's shapes, not R = kC.
  for (const auto& [r, c] : {std::pair<std::uint64_t, std::uint64_t>{1001, 777}, {1009, 769}}) {
    for (std::size_t es : {1, 2, 4, 8, 16}) {
      SCOPED_TRACE("es " + std::to_string(es) + ", " + std::to_string(r) + "x" + std::to_string(c));
      test::Bytes m = random_bytes(r * c * es, 11 + es);
      const test::Bytes orig = m;
      RunReport rep = transpose_inplace(m.data(), r, c, es, o);
      const test::Bytes want = transposed(orig, r, c, es);
      ASSERT_TRUE(m == want) << test::first_difference(m.data(), want.data(), m.size(), es, r);
      EXPECT_EQ(rep.engine, "cuda");
      EXPECT_EQ(rep.kernel, "inplace-rect");
      ASSERT_EQ(rep.stages.size(), 4u);
      EXPECT_EQ(rep.stages[0].name, "allocate");
      EXPECT_EQ(rep.stages[1].name, "h2d");
      EXPECT_EQ(rep.stages[2].name, "kernel");
      EXPECT_EQ(rep.stages[3].name, "d2h");
      EXPECT_LE(rep.device_mem_peak, rep.device_mem_budget);
      transpose_inplace(m.data(), c, r, es, o);
      EXPECT_TRUE(m == orig);
    }
  }
  // A pageable matrix of several 8 MiB pieces (the last one partial) staged
  // through the threads' pinned slots; the same by the driver's copy (the
  // measurement switch), and where the host budget holds no slot.
  {
    const std::uint64_t r = 2003, c = 1511;  // f32: 12.1 MB, coprime
    const test::Bytes orig = random_bytes(r * c * 4, 5);
    const test::Bytes want = transposed(orig, r, c, 4);
    for (int way = 0; way < 3; ++way) {
      SCOPED_TRACE("way " + std::to_string(way));
      HostOptions w = o;
      if (way == 1) setenv("GT_TEST_HOST_RECT_DRIVER_COPY", "1", 1);
      if (way == 2) w.run.host_mem = 4 << 20;
      test::Bytes m = orig;
      const RunReport rep = transpose_inplace(m.data(), r, c, 4, w);
      unsetenv("GT_TEST_HOST_RECT_DRIVER_COPY");
      ASSERT_TRUE(m == want) << test::first_difference(m.data(), want.data(), m.size(), 4, r);
      EXPECT_EQ(rep.kernel, "inplace-rect");
      if (way == 0) {
        const int threads = int(std::min(2u, std::max(1u, std::thread::hardware_concurrency())));  // two pieces
        EXPECT_EQ(rep.threads, threads);
        EXPECT_EQ(rep.host_buffers, std::uint64_t(threads) * (8u << 20));
      } else {
        EXPECT_EQ(rep.threads, 0);
        EXPECT_EQ(rep.host_buffers, 0u);
      }
      EXPECT_LE(rep.host_buffers, rep.host_mem_budget);
    }
  }
  // A device budget below the matrix: the CPU's decomposition, with the reason.
  o.run.device_mem = 1 << 20;
  test::Bytes m = random_bytes(1001 * 777 * 4, 3);
  const test::Bytes orig = m;
  RunReport rep = transpose_inplace(m.data(), 1001, 777, 4, o);
  EXPECT_TRUE(m == transposed(orig, 1001, 777, 4));
  EXPECT_EQ(rep.kernel, "gcd decomposition");
  bool said = false;
  for (const auto& n : rep.notes) said = said || n.find("not through the GPU") != std::string::npos;
  EXPECT_TRUE(said);
  unsetenv("GT_TEST_HOST_RECT_MIN_BYTES");
}

// Step 3 runs two ways: a skew of bands of columns written back in the row
// map's order (rotate_band's `rows`) where rows are 64 bytes or more, else
// one gather down bands of columns. Each here at every shape, forced either
// way, at gcd 1 and gcd > 1, every element size, bands of one column (the
// least budget) and of a cache line (the skew's scatter down the diagonal),
// bit-exact.
//
// Step 1 (gcd > 1) runs two ways as well: down runs of whole rows where a
// thread's scratch holds the gcd - 1 rows past its run, else in bands of
// columns; both must run here.
TEST(InplaceGeneral, BothColumnRoutesBitExact) {
  const Dims shapes[] = {{97, 89}, {360, 150}, {1031, 257}, {513, 96},  {700, 300},
                         {64, 1000}, {1000, 64}, {30, 4096}, {320, 480}, {6, 4000}, {1000, 7}, {4, 9}};
  int streamed = 0, banded = 0, wide_bands = 0;
  for (std::size_t es : {1, 2, 4, 8, 16})
    for (const Dims& d : shapes) {
      const std::uint64_t per = inplace::general_scratch_per_thread(d.r, d.c, es, 1);
      for (const std::uint64_t budget : {per, std::uint64_t(1) << 30}) {
        // One thread: a band of one column at the least budget, else a cache line's.
        const inplace::GeneralRun planned = inplace::plan_general(d.r, d.c, es, 1, budget);
        EXPECT_EQ(planned.skew, d.c * es >= 64);
        EXPECT_LE(planned.scratch, budget);
        if (planned.band > 1) ++wide_bands;
        inplace::GeneralRun gather = planned, skew = planned;
        gather.skew = false;
        skew.skew = true;
        for (const inplace::GeneralRun& run : {gather, skew}) {
          if (run.rotated) ++(run.stream_rotation ? streamed : banded);
          SCOPED_TRACE(std::to_string(d.r) + "x" + std::to_string(d.c) + " es " + std::to_string(es) + " band " +
                       std::to_string(run.band) + (run.skew ? " skew" : " gather"));
          test::Bytes m = random_bytes(d.r * d.c * es, d.r * 31 + d.c + es);
          const test::Bytes want = transposed(m, d.r, d.c, es);
          const std::vector<StageStat> st = inplace::transpose_general(m.data(), d.r, d.c, es, run);
          ASSERT_TRUE(m == want) << test::first_difference(m.data(), want.data(), m.size(), es, d.c);
          ASSERT_FALSE(st.empty());
          EXPECT_EQ(st.back().name, "shuffle columns");
        }
      }
    }
  EXPECT_GT(streamed, 0);
  EXPECT_GT(banded, 0);
  EXPECT_GT(wide_bands, 0);
}

// The streamed rotation where each thread's run of rows is shorter than the
// gcd - 1 rows it saves past it: u8 60x90 (gcd 30) on 5 threads, runs of 12;
// f32 200x30 (gcd 10) on 40 threads, runs of 5.
TEST(InplaceGeneral, StreamedRotationRunsShorterThanTheirHalo) {
  struct Case {
    std::uint64_t r, c;
    std::size_t es;
    int threads;
  };
  for (const Case k : {Case{60, 90, 1, 5}, Case{200, 30, 4, 40}}) {
    const inplace::GeneralRun run = inplace::plan_general(k.r, k.c, k.es, k.threads, 1ull << 30);
    ASSERT_TRUE(run.stream_rotation) << k.r << "x" << k.c;
    ASSERT_EQ(run.threads, k.threads);
    test::Bytes m = random_bytes(k.r * k.c * k.es, k.es);
    const test::Bytes want = transposed(m, k.r, k.c, k.es);
    inplace::transpose_general(m.data(), k.r, k.c, k.es, run);
    ASSERT_TRUE(m == want) << test::first_difference(m.data(), want.data(), m.size(), k.es, k.r);
  }
}

// Random shapes, element sizes and thread counts under the default plan,
// and each transposed back to where it began.
TEST(InplaceGeneral, RandomShapesThereAndBack) {
  std::uint64_t x = 0x9e3779b97f4a7c15ull;
  auto next = [&x](std::uint64_t lo, std::uint64_t hi) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    return lo + x % (hi - lo + 1);
  };
  const std::size_t sizes[] = {1, 2, 4, 8, 16};
  for (int k = 0; k < 60; ++k) {
    const std::uint64_t r = next(1, 600), c = next(1, 600);
    const std::size_t es = sizes[next(0, 4)];
    const int threads = int(next(1, 5));
    SCOPED_TRACE(std::to_string(r) + "x" + std::to_string(c) + " es " + std::to_string(es) + " threads " +
                 std::to_string(threads));
    test::Bytes m = random_bytes(r * c * es, std::uint64_t(k) + 1);
    const test::Bytes orig = m;
    inplace::transpose_general(m.data(), r, c, es, inplace::plan_general(r, c, es, threads, 1ull << 30));
    ASSERT_TRUE(m == transposed(orig, r, c, es)) << test::first_difference(m.data(), transposed(orig, r, c, es).data(), m.size(), es, r);
    inplace::transpose_general(m.data(), c, r, es, inplace::plan_general(c, r, es, threads, 1ull << 30));
    ASSERT_TRUE(m == orig);
  }
}

// The API's report has each step's time, and the stage hook hears of each:
// gcd 30, so a rotation first, in one pass with the row shuffle where a
// thread's scratch holds 30 rows (the default budget), else in bands of
// columns before it (a budget of one column's scratch).
TEST(InplaceGeneral, ReportNamesEachStep) {
  struct Case {
    std::uint64_t host_mem;
    std::vector<std::string> names;
  };
  const Case cases[] = {{0, {"rotate and shuffle rows", "shuffle columns"}},
                        {360 * 4, {"rotate columns", "shuffle rows", "shuffle columns"}}};
  for (const Case& k : cases) {
    HostOptions o;
    o.engine = EngineChoice::cpu;
    o.run.host_mem = k.host_mem;
    std::vector<std::string> heard;
    o.run.stage = [&heard](const std::string& s) { heard.push_back(s); };
    test::Bytes m = random_bytes(360 * 150 * 4, 3);
    const test::Bytes want = transposed(m, 360, 150, 4);
    const RunReport rep = transpose_inplace(m.data(), 360, 150, 4, o);
    ASSERT_TRUE(m == want);
    EXPECT_EQ(heard, k.names);
    ASSERT_EQ(rep.stages.size(), k.names.size());
    for (std::size_t i = 0; i < k.names.size(); ++i) {
      EXPECT_EQ(rep.stages[i].name, k.names[i]);
      EXPECT_EQ(rep.stages[i].bytes, 360u * 150 * 4);
      EXPECT_GE(rep.stages[i].busy_s, 0);
    }
    EXPECT_NE(rep.notes.back().find("written back in the row map's order"), std::string::npos) << rep.notes.back();
  }
}

}  // namespace
}  // namespace gt
