// The host-memory API (host.hpp) on the CPU engine, bit-exact against the
// reference transpose: every element size, odd and degenerate shapes,
// leading dimensions wider than the row (whose padding must stay untouched),
// in place, budgets small enough that many tiles are used, progress and
// cancel, and every argument error on every engine. The CUDA variants are in
// test_host_api_cuda.cpp, the memory matrices in test_memory_matrix.cpp.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include "gtranspose/error.hpp"
#include "gtranspose/host.hpp"
#include "host/job/host_api_util.hpp"
#include "support/gpu.hpp"

namespace gt {
namespace {

using namespace host_api_test;

// ---------------------------------------------------------------------------
// gt::transpose and gt::transpose_inplace on the CPU engine

class HostApiCpu : public ::testing::TestWithParam<std::tuple<std::size_t, ShapeCase>> {};

TEST_P(HostApiCpu, OutOfPlace) {
  const auto [es, s] = GetParam();
  RunReport r = check_transpose(EngineChoice::cpu, es, s.rows, s.cols, 0, 0);
  EXPECT_EQ(r.engine, "cpu");
  // Memory for the CPU engine is never asked about (that would start CUDA).
  EXPECT_EQ(r.input, "host memory (" + std::to_string(es) + "-byte elements, " + to_string(Shape{s.rows, s.cols}) + ")");
  EXPECT_EQ(r.output, "host memory (" + std::to_string(es) + "-byte elements, " + to_string(Shape{s.cols, s.rows}) + ")");
  if (s.rows * s.cols * es >= 64 * 1024) {
    EXPECT_GE(r.tiles, 4u) << "the tile cap should force many tiles";
  }
  // Host memory both sides: transposed where it lies, no tile buffers.
  EXPECT_EQ(r.host_buffers, 0u);
}

TEST_P(HostApiCpu, OutOfPlaceWithWideRows) {
  const auto [es, s] = GetParam();
  RunReport r = check_transpose(EngineChoice::cpu, es, s.rows, s.cols, 3, 5);
  EXPECT_NE(r.input.find("ld " + std::to_string(s.cols + 3)), std::string::npos) << r.input;
  EXPECT_NE(r.output.find("ld " + std::to_string(s.rows + 5)), std::string::npos) << r.output;
}

INSTANTIATE_TEST_SUITE_P(Shapes, HostApiCpu, ::testing::Combine(::testing::ValuesIn(kElemSizes), ::testing::ValuesIn(kShapes)),
                         [](const auto& info) { return shape_param_name(std::get<0>(info.param), std::get<1>(info.param)); });

const std::uint64_t kSquares[] = {1, 2, 3, 17, 64, 129, 257};

class HostApiCpuInplace : public ::testing::TestWithParam<std::tuple<std::size_t, std::uint64_t>> {};

TEST_P(HostApiCpuInplace, Square) {
  const auto [es, n] = GetParam();
  RunReport r = check_inplace(EngineChoice::cpu, es, n, 0);
  EXPECT_EQ(r.engine, "cpu");
  EXPECT_EQ(r.input, r.output);
  if (n * n * es >= 64 * 1024) {
    EXPECT_GE(r.tiles, 4u) << "the tile cap should force many tile pairs";
  }
  // In host memory: each pair swapped where it lies, no tile buffers.
  EXPECT_EQ(r.host_buffers, 0u);
}

TEST_P(HostApiCpuInplace, SquareWithWideRows) {
  const auto [es, n] = GetParam();
  check_inplace(EngineChoice::cpu, es, n, 7);
}

INSTANTIATE_TEST_SUITE_P(Squares, HostApiCpuInplace,
                         ::testing::Combine(::testing::ValuesIn(kElemSizes), ::testing::ValuesIn(kSquares)),
                         [](const auto& info) { return square_param_name(std::get<0>(info.param), std::get<1>(info.param)); });

TEST(HostApi, ExplicitLeadingDimensionsEqualToTheRow) {
  check_transpose(EngineChoice::cpu, 4, 33, 17, 0, 0, Mem::pageable, Mem::pageable, /*explicit_ld=*/true);
}

TEST(HostApi, DefaultOptionsAndDefaultBudget) {
  // The plain call a user writes: no options at all.
  std::vector<std::uint16_t> a(300 * 200), b(a.size());
  for (std::size_t k = 0; k < a.size(); ++k) a[k] = std::uint16_t(k * 2654435761u >> 7);
  HostOptions o;
  o.engine = EngineChoice::cpu;
  RunReport r = transpose(a.data(), b.data(), 300, 200, sizeof(std::uint16_t), o);
  for (std::uint64_t i = 0; i < 300; ++i)
    for (std::uint64_t j = 0; j < 200; ++j) ASSERT_EQ(b[j * 300 + i], a[i * 200 + j]) << i << "," << j;
  EXPECT_GT(r.host_mem_budget, 0u) << "the engine's default budget";
}

TEST(HostApi, AutomaticEngineSaysWhyItFellBack) {
  GT_SKIP_WITH_GPU("auto picks cuda");
  std::vector<float> a(12 * 7), b(a.size());
  RunReport r = transpose(a.data(), b.data(), 12, 7, 4);
  EXPECT_EQ(r.engine, "cpu");
  ASSERT_FALSE(r.notes.empty());
  EXPECT_NE(r.notes.front().find("using the CPU engine"), std::string::npos) << r.notes.front();
  r = transpose_inplace(a.data(), 9, 4);
  ASSERT_FALSE(r.notes.empty());
  EXPECT_NE(r.notes.front().find("using the CPU engine"), std::string::npos) << r.notes.front();
}

TEST(HostApi, CudaWithoutAGpuIsANoDeviceError) {
  GT_SKIP_WITH_GPU("the no-device error cannot be reached");
  std::vector<float> a(12 * 7), b(a.size());
  HostOptions o;
  o.engine = EngineChoice::cuda;
  try {
    transpose(a.data(), b.data(), 12, 7, 4, o);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::no_device) << e.what();
  }
  EXPECT_THROW(transpose_inplace(a.data(), 5, 4, o), Error);
}

TEST(HostApi, ProgressAndCancel) {
  const std::uint64_t rows = 300, cols = 200;
  std::vector<std::uint32_t> a(rows * cols), b(a.size());
  HostOptions o;
  o.engine = EngineChoice::cpu;
  o.run.host_mem = kSmallHostMem;
  o.run.tile_elems = kSmallTileElems;
  std::uint64_t last = 0, total = 0;
  int calls = 0;
  o.run.progress = [&](std::uint64_t done, std::uint64_t all) {
    last = done;
    total = all;
    ++calls;
  };
  transpose(a.data(), b.data(), rows, cols, 4, o);
  EXPECT_GT(calls, 1);
  EXPECT_EQ(last, rows * cols * 4);
  EXPECT_EQ(total, rows * cols * 4);

  std::atomic<bool> stop{true};
  o.run.progress = nullptr;
  o.run.cancel = &stop;
  try {
    transpose(a.data(), b.data(), rows, cols, 4, o);
    ADD_FAILURE() << "not cancelled";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::cancelled) << e.what();
  }
  EXPECT_THROW(transpose_inplace(a.data(), 200, 4, o), Error);
}

TEST(HostApi, AdjacentBuffersDoNotOverlap) {
  // in and out back to back in one allocation: legal.
  const std::uint64_t rows = 20, cols = 30;
  const Bytes init = random_bytes(2 * rows * cols * 4, 9);
  Bytes buf = init;
  HostOptions o;
  o.engine = EngineChoice::cpu;
  transpose(buf.data(), buf.data() + rows * cols * 4, rows, cols, 4, o);
  Bytes want = init;
  reference_transpose(init.data(), rows, cols, cols, want.data() + rows * cols * 4, rows, 4);
  EXPECT_EQ(buf, want);
  // And the other way round: out first.
  buf = init;
  transpose(buf.data() + rows * cols * 4, buf.data(), rows, cols, 4, o);
  want = init;
  reference_transpose(init.data() + rows * cols * 4, rows, cols, cols, want.data(), rows, 4);
  EXPECT_EQ(buf, want);
}

// ---------------------------------------------------------------------------
// Argument errors: gt::Error(usage) with one line naming the API and the
// problem, before any engine is chosen (so even --engine cuda on a machine
// without a GPU says what is wrong with the arguments first).

void expect_usage(const std::function<void()>& fn, const std::string& api, const std::string& fragment) {
  try {
    fn();
    ADD_FAILURE() << "no error; expected one saying '" << fragment << "'";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_EQ(e.kind(), ErrorKind::usage) << msg;
    EXPECT_EQ(msg.rfind(api + ": ", 0), 0u) << msg;
    EXPECT_NE(msg.find(fragment), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << "one line: " << msg;
  }
}

class HostApiErrors : public ::testing::TestWithParam<EngineChoice> {};

TEST_P(HostApiErrors, OutOfPlace) {
  HostOptions o;
  o.engine = GetParam();
  std::vector<float> a(64 * 64), b(a.size());
  const std::string api = "gt::transpose";
  auto tr = [&](const void* in, void* out, std::uint64_t r, std::uint64_t c, std::size_t es, HostOptions opt) {
    return [=] { transpose(in, out, r, c, es, opt); };
  };
  expect_usage(tr(nullptr, b.data(), 4, 4, 4, o), api, "in is a null pointer");
  expect_usage(tr(a.data(), nullptr, 4, 4, 4, o), api, "out is a null pointer");
  expect_usage(tr(a.data(), b.data(), 0, 4, 4, o), api, "empty (0x4)");
  expect_usage(tr(a.data(), b.data(), 4, 0, 4, o), api, "empty (4x0)");
  for (std::size_t es : {0, 3, 5, 12, 32})
    expect_usage(tr(a.data(), b.data(), 4, 4, es, o), api, "unsupported element size " + std::to_string(es));

  HostOptions ld = o;
  ld.ld_in = 7;
  expect_usage(tr(a.data(), b.data(), 4, 8, 4, ld), api, "ld_in 7 is less than a row of the input (8 columns)");
  ld = o;
  ld.ld_out = 3;
  expect_usage(tr(a.data(), b.data(), 4, 8, 4, ld), api, "ld_out 3 is less than a row of the output (4 columns");

  // Overlaps: the same buffer, one element apart, the output's end inside
  // the input, and two strided matrices interleaved row by row.
  expect_usage(tr(a.data(), a.data(), 4, 4, 4, o), api, "in and out overlap");
  expect_usage(tr(a.data(), a.data() + 1, 4, 4, 4, o), api, "in and out overlap");
  expect_usage(tr(a.data() + 15, a.data(), 4, 4, 4, o), api, "in and out overlap");
  HostOptions inter = o;
  inter.ld_in = inter.ld_out = 8;
  expect_usage(tr(a.data(), a.data() + 4, 4, 4, 4, inter), api, "in and out overlap");

  // Extents no address space holds: ld times rows overflows 64 bits, and a
  // matrix that would run past the top of the address space.
  HostOptions huge = o;
  huge.ld_in = std::uint64_t(1) << 62;
  expect_usage(tr(a.data(), b.data(), 8, 4, 4, huge), api, "larger than 64 bits can address");
  expect_usage(tr(a.data(), b.data(), std::uint64_t(1) << 33, std::uint64_t(1) << 33, 4, o), api,
               "larger than 64 bits can address");
  const void* top = reinterpret_cast<const void*>(UINTPTR_MAX - 64);
  expect_usage(tr(top, b.data(), 16, 16, 4, o), api, "runs past the end of the address space");
}

TEST_P(HostApiErrors, InPlace) {
  HostOptions o;
  o.engine = GetParam();
  std::vector<float> a(64 * 64);
  const std::string api = "gt::transpose_inplace";
  auto tr = [&](void* p, std::uint64_t n, std::size_t es, HostOptions opt) {
    return [=] { transpose_inplace(p, n, es, opt); };
  };
  expect_usage(tr(nullptr, 4, 4, o), api, "data is a null pointer");
  expect_usage(tr(a.data(), 0, 4, o), api, "empty (0x0)");
  expect_usage(tr(a.data(), 4, 6, o), api, "unsupported element size 6");
  HostOptions ld = o;
  ld.ld_in = 3;
  expect_usage(tr(a.data(), 4, 4, ld), api, "ld_in 3 is less than a row of the matrix (4)");
  ld = o;
  ld.ld_out = 9;
  expect_usage(tr(a.data(), 4, 4, ld), api, "ld_out 9 differs");
  ld.ld_in = std::uint64_t(1) << 62;
  ld.ld_out = 0;
  expect_usage(tr(a.data(), 8, 4, ld), api, "larger than 64 bits can address");
}

TEST(HostApi, InPlaceAcceptsLdOutEqualToLdIn) {
  const std::uint64_t n = 10, ld = 12;
  const Bytes a0 = random_bytes(n * ld * 2, 3);
  Bytes a = a0;
  HostOptions o;
  o.engine = EngineChoice::cpu;
  o.ld_in = o.ld_out = ld;
  transpose_inplace(a.data(), n, 2, o);
  Bytes want = a0;
  reference_transpose(a0.data(), n, n, ld, want.data(), ld, 2);
  EXPECT_EQ(a, want);
}

INSTANTIATE_TEST_SUITE_P(Engines, HostApiErrors,
                         ::testing::Values(EngineChoice::cpu, EngineChoice::cuda, EngineChoice::automatic),
                         [](const auto& info) {
                           return std::string(info.param == EngineChoice::cpu    ? "cpu"
                                              : info.param == EngineChoice::cuda ? "cuda"
                                                                                 : "auto");
                         });

}  // namespace
}  // namespace gt
