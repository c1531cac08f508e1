// The host-memory API (host.hpp) on the CUDA engine: pinned memory goes by
// DMA directly, pageable memory through the engine's staging buffers, in
// every combination, bit-exact against the reference transpose; and a
// matrix larger than one default tile with default budgets. Every test
// skips without a GPU.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "gtranspose/cuda.hpp"
#include "gtranspose/host.hpp"
#include "host/job/host_api_util.hpp"
#include "support/gpu.hpp"

namespace gt {
namespace {

using namespace host_api_test;

// Every (input, output) memory combination: pageable -> pageable, pageable ->
// pinned, pinned -> pageable, pinned -> pinned.
const std::pair<Mem, Mem> kMemPairs[] = {
    {Mem::pageable, Mem::pageable}, {Mem::pageable, Mem::pinned}, {Mem::pinned, Mem::pageable}, {Mem::pinned, Mem::pinned}};

std::string mem_trace(Mem in, Mem out) { return std::string(mem_name(in)) + " -> " + mem_name(out); }

// The memory kinds loop inside each test (not as parameters), so the GPU
// machine starts a CUDA context once per shape rather than once per case.
class HostApiCuda : public ::testing::TestWithParam<std::tuple<std::size_t, ShapeCase>> {};

TEST_P(HostApiCuda, OutOfPlace) {
  GT_SKIP_WITHOUT_GPU();
  const auto [es, s] = GetParam();
  for (const auto& [in_mem, out_mem] : kMemPairs) {
    SCOPED_TRACE(mem_trace(in_mem, out_mem));
    RunReport r = check_transpose(EngineChoice::cuda, es, s.rows, s.cols, 0, 0, in_mem, out_mem);
    EXPECT_EQ(r.engine, "cuda");
    EXPECT_NE(r.input.find(mem_name(in_mem)), std::string::npos) << r.input;
    EXPECT_NE(r.output.find(mem_name(out_mem)), std::string::npos) << r.output;
    if (s.rows * s.cols * es >= 256 * 1024) {
      EXPECT_GT(r.tiles, 2u) << "the small budgets should force several tiles";
    }
  }
}

TEST_P(HostApiCuda, OutOfPlaceWithWideRows) {
  GT_SKIP_WITHOUT_GPU();
  const auto [es, s] = GetParam();
  for (const auto& [in_mem, out_mem] : kMemPairs) {
    SCOPED_TRACE(mem_trace(in_mem, out_mem));
    check_transpose(EngineChoice::cuda, es, s.rows, s.cols, 3, 5, in_mem, out_mem);
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, HostApiCuda, ::testing::Combine(::testing::ValuesIn(kElemSizes), ::testing::ValuesIn(kShapes)),
                         [](const auto& info) { return shape_param_name(std::get<0>(info.param), std::get<1>(info.param)); });

class HostApiCudaInplace : public ::testing::TestWithParam<std::tuple<std::size_t, std::uint64_t>> {};

TEST_P(HostApiCudaInplace, Square) {
  GT_SKIP_WITHOUT_GPU();
  const auto [es, n] = GetParam();
  for (Mem mem : {Mem::pageable, Mem::pinned}) {
    SCOPED_TRACE(mem_name(mem));
    RunReport r = check_inplace(EngineChoice::cuda, es, n, 0, mem);
    EXPECT_EQ(r.engine, "cuda");
    EXPECT_NE(r.input.find(mem_name(mem)), std::string::npos) << r.input;
  }
}

TEST_P(HostApiCudaInplace, SquareWithWideRows) {
  GT_SKIP_WITHOUT_GPU();
  const auto [es, n] = GetParam();
  for (Mem mem : {Mem::pageable, Mem::pinned}) {
    SCOPED_TRACE(mem_name(mem));
    check_inplace(EngineChoice::cuda, es, n, 7, mem);
  }
}

INSTANTIATE_TEST_SUITE_P(Squares, HostApiCudaInplace,
                         ::testing::Combine(::testing::ValuesIn(kElemSizes), ::testing::ValuesIn(kSquares)),
                         [](const auto& info) { return square_param_name(std::get<0>(info.param), std::get<1>(info.param)); });

// A matrix larger than one default tile, both sides pinned, default budgets:
// the direct-DMA path at a size where it matters, bit-exact.
TEST(HostApiCudaLarge, PinnedBothSidesDefaultBudgets) {
  GT_SKIP_WITHOUT_GPU();
  const std::uint64_t rows = 12289, cols = 6143;  // ~300 MiB of f32, odd edges
  PinnedHostBuffer in(rows * cols * 4), out(rows * cols * 4);
  auto* a = static_cast<std::uint32_t*>(in.data());
  for (std::uint64_t k = 0; k < rows * cols; ++k) a[k] = std::uint32_t(k * 2654435761u);
  HostOptions o;
  o.engine = EngineChoice::cuda;
  RunReport r = transpose(in.data(), out.data(), rows, cols, 4, o);
  EXPECT_EQ(r.engine, "cuda");
  EXPECT_NE(r.input.find("pinned"), std::string::npos) << r.input;
  auto* b = static_cast<const std::uint32_t*>(out.data());
  for (std::uint64_t i = 0; i < rows; i += 7)
    for (std::uint64_t j = 0; j < cols; ++j) ASSERT_EQ(b[j * rows + i], a[i * cols + j]) << i << "," << j;
}

// The same matrix pageable on both sides: the staging path.
TEST(HostApiCudaLarge, PageableBothSidesDefaultBudgets) {
  GT_SKIP_WITHOUT_GPU();
  const std::uint64_t rows = 6143, cols = 12289;
  std::vector<std::uint32_t> a(rows * cols), b(rows * cols);
  for (std::uint64_t k = 0; k < rows * cols; ++k) a[k] = std::uint32_t(k * 2654435761u);
  HostOptions o;
  o.engine = EngineChoice::cuda;
  RunReport r = transpose(a.data(), b.data(), rows, cols, 4, o);
  EXPECT_NE(r.input.find("pageable"), std::string::npos) << r.input;
  for (std::uint64_t i = 0; i < rows; i += 7)
    for (std::uint64_t j = 0; j < cols; ++j) ASSERT_EQ(b[j * rows + i], a[i * cols + j]) << i << "," << j;
}
}  // namespace
}  // namespace gt
