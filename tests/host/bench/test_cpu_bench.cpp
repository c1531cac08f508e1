#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>
#include <string>

#include "gtranspose/bench.hpp"
#include "gtranspose/types.hpp"

namespace {

TEST(CpuBench, SmallMatrixEveryTypeVerified) {
  for (gt::DType t : {gt::DType::u8, gt::DType::f16, gt::DType::f32, gt::DType::f64, gt::DType::c128}) {
    gt::BenchOptions o;
    o.shape = {300, 517};
    o.dtype = t;
    o.reps = 3;
    o.warmup = 1;
    o.threads = 2;
    o.seed = 77;
    const gt::BenchResult r = gt::run_cpu_bench(o);
    EXPECT_EQ(r.device, "CPU, 2 threads");
    EXPECT_EQ(r.reference, "memcpy");
    EXPECT_EQ(r.seed, 77u);
    ASSERT_EQ(r.rows.size(), 3u);
    EXPECT_EQ(r.rows[0].name, "memcpy");
    EXPECT_EQ(r.rows[1].name, "cpu-blocked");
    EXPECT_EQ(r.rows[2].name, "cpu-inplace");
    // 300x517 shares no factor: the gcd decomposition in memory.
    EXPECT_EQ(r.rows[2].config, "gcd decomposition");
    for (const gt::BenchRow& row : r.rows) {
      EXPECT_TRUE(row.verified) << row.name << ": " << row.note;
      EXPECT_EQ(row.dtype, gt::dtype_name(t));
      EXPECT_EQ(row.shape, o.shape);
      EXPECT_GT(row.gbps, 0);
      EXPECT_LE(row.min_ms, row.median_ms);
      EXPECT_LE(row.median_ms, row.max_ms);
      const double bytes = 300.0 * 517 * gt::dtype_size(t);
      EXPECT_NEAR(row.gbps, 2 * bytes / (row.median_ms * 1e-3) / 1e9, row.gbps * 1e-9);
    }
    EXPECT_DOUBLE_EQ(r.rows[0].pct_of_copy, 100.0);
    EXPECT_NEAR(r.rows[1].pct_of_copy, 100.0 * r.rows[1].gbps / r.rows[0].gbps, 1e-9);
    EXPECT_NEAR(r.rows[2].pct_of_copy, 100.0 * r.rows[2].gbps / r.rows[0].gbps, 1e-9);
  }
}

// The in-place row takes each route the host API has: a square and R = kC
// through the CPU engine's stages; a grid (2x3 blocks of 160), a rectangle
// with gcd 16 (a rotation first) and a coprime one by the gcd
// decomposition; each verified against the pattern.
TEST(CpuBench, InPlaceRowEveryRoute) {
  for (gt::Shape s : {gt::Shape{257, 257}, gt::Shape{600, 200}, gt::Shape{320, 480}, gt::Shape{320, 496}, gt::Shape{997, 211}}) {
    gt::BenchOptions o;
    o.shape = s;
    o.dtype = gt::DType::f64;
    o.reps = 2;
    o.warmup = 1;
    o.threads = 2;
    const gt::BenchResult r = gt::run_cpu_bench(o);
    ASSERT_EQ(r.rows.size(), 3u);
    EXPECT_EQ(r.rows[2].name, "cpu-inplace");
    EXPECT_TRUE(r.rows[2].verified) << s.rows << "x" << s.cols << ": " << r.rows[2].note;
    EXPECT_EQ(r.rows[2].status, gt::RowStatus::ok);
    EXPECT_FALSE(r.rows[2].config.empty());
  }
}

TEST(CpuBench, RejectsNoRepetitions) {
  gt::BenchOptions o;
  o.shape = {8, 8};
  o.reps = 0;
  EXPECT_THROW(gt::run_cpu_bench(o), std::exception);
}

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoi(v) : fallback;
}

// The CPU target, without the CLI: 1 GiB matrices (16384 rows) of
// every element size beside a memcpy of the same bytes. Run with
//   gt_bench_tests --gtest_also_run_disabled_tests --gtest_filter=CpuBench.DISABLED_OneGiB
// GT_BENCH_THREADS (default: all cores), GT_BENCH_REPS (10), GT_BENCH_DTYPES
// ("f32,f64,u8,f16,c128") choose what runs.
TEST(CpuBench, DISABLED_OneGiB) {
  const char* list = std::getenv("GT_BENCH_DTYPES");
  std::string dtypes = list && *list ? list : "f32,f64,u8,f16,c128";
  std::size_t pos = 0;
  while (pos <= dtypes.size()) {
    const std::size_t comma = std::min(dtypes.find(',', pos), dtypes.size());
    const auto t = gt::parse_dtype(dtypes.substr(pos, comma - pos));
    pos = comma + 1;
    ASSERT_TRUE(t.has_value());
    gt::BenchOptions o;
    o.dtype = *t;
    o.shape = {16384, (std::uint64_t(1) << 30) / 16384 / gt::dtype_size(*t)};
    o.threads = env_int("GT_BENCH_THREADS", 0);
    o.reps = env_int("GT_BENCH_REPS", 10);
    o.warmup = 2;
    const gt::BenchResult r = gt::run_cpu_bench(o);
    std::cout << gt::format_bench(r) << std::flush;
    for (const gt::BenchRow& row : r.rows) EXPECT_TRUE(row.verified) << row.name << ": " << row.note;
  }
}

}  // namespace
