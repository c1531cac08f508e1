#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gtranspose/engine.hpp"
#include "gtranspose/error.hpp"
#include "gtranspose/plan.hpp"
#include "gtranspose/tiles.hpp"
#include "support/engines.hpp"
#include "support/reference.hpp"

namespace {

using gt::test::Bytes;
using gt::test::random_bytes;
using gt::test::reference_transpose;

gt::MatrixInfo make_info(gt::Shape s, std::size_t es) {
  gt::MatrixInfo i;
  i.shape = s;
  i.elem_size = es;
  return i;
}

void check_rect(const gt::MatrixInfo& m, std::uint64_t r0, std::uint64_t c0, std::uint64_t h, std::uint64_t w,
                std::uint64_t ld) {
  if (h == 0 || w == 0 || r0 + h > m.shape.rows || c0 + w > m.shape.cols || ld < w)
    throw gt::Error(gt::ErrorKind::internal, "rectangle outside the matrix");
}

// A row-major matrix in memory posing as a file.
class FakeSource : public gt::Source {
 public:
  FakeSource(gt::Shape s, std::size_t es, std::uint64_t seed, gt::Shape block = {0, 0})
      : info_(make_info(s, es)), data(random_bytes(s.rows * s.cols * es, seed)), block_(block) {}
  const gt::MatrixInfo& info() const override { return info_; }
  const gt::Location& location() const override { return loc_; }
  void read(std::uint64_t r0, std::uint64_t c0, std::uint64_t h, std::uint64_t w, void* dst,
            std::uint64_t ld) override {
    check_rect(info_, r0, c0, h, w, ld);
    if (reads++ == fail_at) throw gt::Error(gt::ErrorKind::io, "read failed (injected)");
    const std::size_t es = info_.elem_size;
    for (std::uint64_t r = 0; r < h; ++r)
      std::memcpy(static_cast<unsigned char*>(dst) + r * ld * es, data.data() + ((r0 + r) * info_.shape.cols + c0) * es,
                  w * es);
  }
  gt::Shape preferred_block() const override { return block_; }
  std::string describe() const override { return "fake source"; }

  gt::MatrixInfo info_;
  gt::Location loc_;
  Bytes data;
  gt::Shape block_;
  int reads = 0;
  int fail_at = -1;
};

// Records every element written, to prove each is written exactly once.
class FakeSink : public gt::Sink {
 public:
  FakeSink(gt::Shape s, std::size_t es)
      : info_(make_info(s, es)), data(s.rows * s.cols * es, 0xA5), hits(s.rows * s.cols, 0) {}
  const gt::MatrixInfo& info() const override { return info_; }
  void write(std::uint64_t r0, std::uint64_t c0, std::uint64_t h, std::uint64_t w, const void* src,
             std::uint64_t ld) override {
    check_rect(info_, r0, c0, h, w, ld);
    if (writes++ == fail_at) throw gt::Error(gt::ErrorKind::io, "no space left on device (injected)");
    const std::size_t es = info_.elem_size;
    for (std::uint64_t r = 0; r < h; ++r) {
      std::memcpy(data.data() + ((r0 + r) * info_.shape.cols + c0) * es,
                  static_cast<const unsigned char*>(src) + r * ld * es, w * es);
      for (std::uint64_t c = 0; c < w; ++c) ++hits[(r0 + r) * info_.shape.cols + c0 + c];
    }
  }
  void commit() override { committed = true; }
  std::string describe() const override { return "fake sink"; }

  gt::MatrixInfo info_;
  Bytes data;
  std::vector<std::uint8_t> hits;
  int writes = 0;
  int fail_at = -1;
  bool committed = false;
};

class FakeSquare : public gt::InplaceMatrix {
 public:
  FakeSquare(std::uint64_t n, std::size_t es, std::uint64_t seed)
      : info_(make_info({n, n}, es)), data(random_bytes(n * n * es, seed)), writes_per_elem(n * n, 0) {}
  const gt::MatrixInfo& info() const override { return info_; }
  const gt::Location& location() const override { return loc_; }
  void read(std::uint64_t r0, std::uint64_t c0, std::uint64_t h, std::uint64_t w, void* dst,
            std::uint64_t ld) override {
    check_rect(info_, r0, c0, h, w, ld);
    const std::size_t es = info_.elem_size;
    for (std::uint64_t r = 0; r < h; ++r)
      std::memcpy(static_cast<unsigned char*>(dst) + r * ld * es, data.data() + ((r0 + r) * info_.shape.cols + c0) * es,
                  w * es);
  }
  void write(std::uint64_t r0, std::uint64_t c0, std::uint64_t h, std::uint64_t w, const void* src,
             std::uint64_t ld) override {
    check_rect(info_, r0, c0, h, w, ld);
    const std::size_t es = info_.elem_size;
    for (std::uint64_t r = 0; r < h; ++r) {
      std::memcpy(data.data() + ((r0 + r) * info_.shape.cols + c0) * es,
                  static_cast<const unsigned char*>(src) + r * ld * es, w * es);
      for (std::uint64_t c = 0; c < w; ++c) ++writes_per_elem[(r0 + r) * info_.shape.cols + c0 + c];
    }
  }
  void flush() override { ++flushes; }
  std::string describe() const override { return "fake square"; }

  gt::MatrixInfo info_;
  gt::Location loc_;
  Bytes data;
  std::vector<std::uint8_t> writes_per_elem;
  int flushes = 0;
};

gt::RunReport run_cpu(gt::Source& src, gt::Sink& dst, const gt::RunOptions& o) {
  return gt::test::run_engine(gt::EngineKind::cpu, src, dst, o);
}

gt::RunReport run_cpu_inplace(gt::InplaceMatrix& m, const gt::RunOptions& o) {
  return gt::test::run_engine_inplace(gt::EngineKind::cpu, m, o);
}

gt::RunOptions with_budget(std::uint64_t host_mem, int threads = 2) {
  gt::RunOptions o;
  o.host_mem = host_mem;
  o.threads = threads;
  return o;
}

void expect_transposed(const FakeSource& src, const FakeSink& dst, const std::string& what) {
  const auto& s = src.info_.shape;
  Bytes want(dst.data.size());
  reference_transpose(src.data.data(), s.rows, s.cols, s.cols, want.data(), s.rows, src.info_.elem_size);
  ASSERT_TRUE(want == dst.data) << what;
  for (std::size_t i = 0; i < dst.hits.size(); ++i) ASSERT_EQ(dst.hits[i], 1) << what << ": element " << i;
}

TEST(CpuEngine, BitExactUnderManyBudgets) {
  const std::vector<gt::Shape> shapes = {{1, 1}, {1, 37}, {37, 1}, {31, 33}, {200, 300}, {4097, 65}, {65, 4097}};
  std::uint64_t seed = 1;
  for (std::size_t es : {1, 2, 4, 8, 16})
    for (const gt::Shape& s : shapes)
      for (std::uint64_t per_buffer_elems : {1, 5, 64, 4096, 70000, 0}) {
        if (per_buffer_elems && s.rows * s.cols / per_buffer_elems > 3000) continue;  // keep it quick
        const std::uint64_t budget = per_buffer_elems * es * gt::kCpuOutOfPlaceBuffers;
        const std::string what = gt::to_string(s) + " es=" + std::to_string(es) + " budget=" + std::to_string(budget);
        FakeSource src(s, es, seed++);
        FakeSink dst(s.transposed(), es);
        const gt::RunReport r = run_cpu(src, dst, with_budget(budget));
        expect_transposed(src, dst, what);
        if (HasFatalFailure()) return;
        const std::uint64_t b = budget ? budget : r.host_mem_budget;
        EXPECT_LE(r.host_buffers, b) << what;
        EXPECT_GT(r.host_buffers, 0u) << what;
        EXPECT_EQ(r.tiles, std::uint64_t(src.reads)) << what;
        EXPECT_EQ(r.tiles, std::uint64_t(dst.writes)) << what;
        if (per_buffer_elems && per_buffer_elems < s.rows * s.cols) {
          EXPECT_GT(r.tiles, 1u) << what;
        }
        EXPECT_FALSE(dst.committed) << "the caller commits, not the engine";
      }
}

TEST(CpuEngine, ReportAndProgress) {
  FakeSource src({300, 200}, 4, 11);
  FakeSink dst({200, 300}, 4);
  std::vector<std::pair<std::uint64_t, std::uint64_t>> calls;
  gt::RunOptions o = with_budget(4 * 64 * 64 * 4, 3);
  o.progress = [&](std::uint64_t done, std::uint64_t total) { calls.emplace_back(done, total); };
  const gt::RunReport r = run_cpu(src, dst, o);
  expect_transposed(src, dst, "300x200");
  EXPECT_EQ(r.engine, "cpu");
  EXPECT_EQ(r.kernel, "cpu-blocked");
  EXPECT_EQ(r.mode, "out-of-place");
  EXPECT_EQ(r.shape, (gt::Shape{300, 200}));
  EXPECT_EQ(r.elem_size, 4u);
  EXPECT_EQ(r.bytes, 300u * 200 * 4);
  EXPECT_EQ(r.threads, 3);
  EXPECT_EQ(r.tile_shape, (gt::Shape{64, 64}));
  EXPECT_EQ(r.tiles, 5u * 4);
  EXPECT_EQ(r.host_mem_budget, 4u * 64 * 64 * 4);
  EXPECT_GT(r.host_mem_peak, 0u);
  EXPECT_GT(r.wall_s, 0);
  for (const char* name : {"read", "transpose", "write"}) {
    bool found = false;
    for (const auto& s : r.stages)
      if (s.name == name) {
        found = true;
        EXPECT_EQ(s.bytes, r.bytes) << name;
        EXPECT_GE(s.busy_s, 0) << name;
      }
    EXPECT_TRUE(found) << name;
  }
  ASSERT_EQ(calls.size(), r.tiles);
  for (std::size_t i = 0; i < calls.size(); ++i) {
    EXPECT_EQ(calls[i].second, r.bytes);
    if (i) {
      EXPECT_GT(calls[i].first, calls[i - 1].first);
    }
  }
  EXPECT_EQ(calls.back().first, r.bytes);
}

TEST(CpuEngine, HonoursThePreferredBlock) {
  FakeSource src({1000, 1000}, 4, 12, {48, 40});
  FakeSink dst({1000, 1000}, 4);
  const gt::RunReport r = run_cpu(src, dst, with_budget(4 * 200 * 200 * 4));
  EXPECT_EQ(r.tile_shape.rows % 48, 0u);
  EXPECT_EQ(r.tile_shape.cols % 40, 0u);
  expect_transposed(src, dst, "1000x1000 chunked");
}

TEST(CpuEngine, WriteFailurePropagates) {
  for (int fail_at : {0, 3, 19}) {
    FakeSource src({300, 200}, 8, 13);
    FakeSink dst({200, 300}, 8);
    dst.fail_at = fail_at;
    try {
      run_cpu(src, dst, with_budget(4 * 64 * 64 * 8));
      FAIL() << "no exception";
    } catch (const gt::Error& e) {
      EXPECT_EQ(e.kind(), gt::ErrorKind::io);
      EXPECT_NE(std::string(e.what()).find("no space left"), std::string::npos);
    }
    EXPECT_EQ(dst.writes, fail_at + 1);
  }
}

TEST(CpuEngine, ReadFailurePropagates) {
  FakeSource src({300, 200}, 2, 14);
  FakeSink dst({200, 300}, 2);
  src.fail_at = 4;
  try {
    run_cpu(src, dst, with_budget(4 * 64 * 64 * 2));
    FAIL() << "no exception";
  } catch (const gt::Error& e) {
    EXPECT_EQ(e.kind(), gt::ErrorKind::io);
  }
  EXPECT_LE(dst.writes, 4);
}

TEST(CpuEngine, CancelStopsBetweenTiles) {
  FakeSource src({640, 640}, 4, 15);
  FakeSink dst({640, 640}, 4);
  std::atomic<bool> cancel{false};
  gt::RunOptions o = with_budget(4 * 64 * 64 * 4);
  o.cancel = &cancel;
  o.progress = [&](std::uint64_t done, std::uint64_t) {
    if (done >= 2 * 64 * 64 * 4) cancel = true;
  };
  try {
    run_cpu(src, dst, o);
    FAIL() << "no exception";
  } catch (const gt::Error& e) {
    EXPECT_EQ(e.kind(), gt::ErrorKind::cancelled);
  }
  EXPECT_LT(dst.writes, 100);  // 100 tiles in all; it stopped after a few
  EXPECT_GE(dst.writes, 2);
}

TEST(CpuEngine, BadBudgetOrShape) {
  FakeSource src({10, 10}, 8, 16);
  FakeSink dst({10, 10}, 8);
  try {
    run_cpu(src, dst, with_budget(31));  // 7 bytes per buffer: not one element
    FAIL() << "no exception";
  } catch (const gt::Error& e) {
    EXPECT_EQ(e.kind(), gt::ErrorKind::usage);
  }
  FakeSink wrong({10, 9}, 8);
  EXPECT_THROW(run_cpu(src, wrong, with_budget(1 << 20)), gt::Error);
}

TEST(CpuEngineInplace, BitExactUnderManyBudgets) {
  std::uint64_t seed = 100;
  for (std::size_t es : {1, 2, 4, 8, 16})
    for (std::uint64_t n : {1, 2, 3, 63, 100, 257})
      for (std::uint64_t per_tile_elems : {1, 4, 64 * 64, 100 * 100, 0}) {
        if (per_tile_elems && n * n / per_tile_elems > 5000) continue;
        const std::uint64_t budget = per_tile_elems * es * gt::kCpuInplaceBuffers;
        const std::string what = "n=" + std::to_string(n) + " es=" + std::to_string(es) + " budget=" +
                                 std::to_string(budget);
        FakeSquare m(n, es, seed++);
        const Bytes before = m.data;
        Bytes want(before.size());
        reference_transpose(before.data(), n, n, n, want.data(), n, es);
        const gt::RunReport r = run_cpu_inplace(m, with_budget(budget));
        ASSERT_TRUE(want == m.data) << what;
        for (std::size_t i = 0; i < m.writes_per_elem.size(); ++i) ASSERT_EQ(m.writes_per_elem[i], 1) << what;
        EXPECT_LE(r.host_buffers, budget ? budget : r.host_mem_budget) << what;
        EXPECT_EQ(m.flushes, 1);
        EXPECT_EQ(r.mode, "in-place");
        const gt::PairGrid plan(n, es, (budget ? budget : r.host_mem_budget) / gt::kCpuInplaceBuffers);
        EXPECT_EQ(r.tiles, plan.count()) << what;
      }
}

TEST(CpuEngineInplace, ProgressCancelAndNonSquare) {
  FakeSquare m(300, 4, 7);
  std::atomic<bool> cancel{false};
  gt::RunOptions o = with_budget(5 * 64 * 64 * 4);
  std::uint64_t last = 0;
  o.cancel = &cancel;
  o.progress = [&](std::uint64_t done, std::uint64_t total) {
    EXPECT_EQ(total, 300u * 300 * 4);
    EXPECT_GT(done, last);
    last = done;
    if (done > total / 3) cancel = true;
  };
  try {
    run_cpu_inplace(m, o);
    FAIL() << "no exception";
  } catch (const gt::Error& e) {
    EXPECT_EQ(e.kind(), gt::ErrorKind::cancelled);
  }
  EXPECT_LT(last, 300u * 300 * 4);

  struct NonSquare : FakeSquare {
    NonSquare() : FakeSquare(4, 4, 1) { info_.shape = {4, 5}; }
  } bad;
  try {
    run_cpu_inplace(bad, with_budget(1 << 20));
    FAIL() << "no exception";
  } catch (const gt::Error& e) {
    EXPECT_EQ(e.kind(), gt::ErrorKind::usage);
  }
}

}  // namespace
