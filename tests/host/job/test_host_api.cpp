// The host-memory API (host.hpp) and the memory matrices under it
// (memory.hpp), bit-exact against a plain reference: every element size, odd
// and degenerate shapes, leading dimensions wider than the row (whose padding
// must stay untouched), in place, budgets small enough that many tiles are
// used, every argument error. The CPU engine runs everywhere; the CUDA
// variants (pinned and pageable memory on either side) skip without a GPU.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "gtranspose/cuda.hpp"
#include "gtranspose/error.hpp"
#include "gtranspose/host.hpp"
#include "gtranspose/memory.hpp"
#include "host/cpu/cpu_test_util.hpp"

namespace gt {
namespace {

using cpu_test::Bytes;
using cpu_test::random_bytes;

const std::size_t kElemSizes[] = {1, 2, 4, 8, 16};

// Small budgets: a few hundred KiB of matrix becomes dozens of tiles.
constexpr std::uint64_t kSmallHostMem = 64 << 10;
constexpr std::uint64_t kSmallDeviceMem = 256 << 10;

#define GT_REQUIRE_GPU()                                                  \
  do {                                                                    \
    std::string why_;                                                     \
    if (cuda_device_count(&why_) == 0) GTEST_SKIP() << "no GPU: " << why_; \
  } while (0)

// The reference: element (i, j) of in (rows x cols, ld_in) to (j, i) of out
// (cols x rows, ld_out), one memcpy per element.
void reference_transpose(const unsigned char* in, std::uint64_t rows, std::uint64_t cols, std::uint64_t ld_in,
                         unsigned char* out, std::uint64_t ld_out, std::size_t es) {
  for (std::uint64_t i = 0; i < rows; ++i)
    for (std::uint64_t j = 0; j < cols; ++j) std::memcpy(out + (j * ld_out + i) * es, in + (i * ld_in + j) * es, es);
}

// "" when equal, else where the first difference is.
std::string first_difference(const unsigned char* got, const unsigned char* want, std::size_t n, std::size_t es,
                             std::uint64_t ld) {
  for (std::size_t k = 0; k < n; ++k)
    if (got[k] != want[k]) {
      const std::uint64_t e = k / es;
      return "first difference at byte " + std::to_string(k) + " (row " + std::to_string(e / ld) + ", col " +
             std::to_string(e % ld) + " of the buffer)";
    }
  return "";
}

// Where a test matrix lives: ordinary memory, or pinned through alloc_pinned.
enum class Mem { pageable, pinned };
const char* mem_name(Mem m) { return m == Mem::pinned ? "pinned" : "pageable"; }

// A buffer of `n` bytes of either kind, holding `init`.
class Buffer {
 public:
  Buffer(Mem kind, const Bytes& init) {
    if (kind == Mem::pinned) {
      pinned_ = PinnedHostBuffer(init.size());
      p_ = static_cast<unsigned char*>(pinned_.data());
    } else {
      plain_.resize(init.size());
      p_ = plain_.data();
    }
    std::memcpy(p_, init.data(), init.size());
  }
  unsigned char* data() const { return p_; }

 private:
  PinnedHostBuffer pinned_;
  Bytes plain_;
  unsigned char* p_ = nullptr;
};

// One out-of-place case: a rows x cols input of es-byte elements with rows
// pad_in elements wider than needed, into an output whose rows are pad_out
// wider. Checks the whole output buffer (padding included) and that the
// input is unchanged; returns the report for further checks.
RunReport check_transpose(EngineChoice engine, std::size_t es, std::uint64_t rows, std::uint64_t cols,
                          std::uint64_t pad_in, std::uint64_t pad_out, Mem in_mem = Mem::pageable,
                          Mem out_mem = Mem::pageable, bool explicit_ld = false) {
  const std::uint64_t ld_in = cols + pad_in, ld_out = rows + pad_out;
  const Bytes in0 = random_bytes(rows * ld_in * es, rows * 7919 + cols * 31 + es);
  const Bytes out0 = random_bytes(cols * ld_out * es, rows + cols * 104729 + es);
  Buffer in(in_mem, in0), out(out_mem, out0);

  HostOptions o;
  o.engine = engine;
  o.run.host_mem = kSmallHostMem;
  o.run.device_mem = kSmallDeviceMem;
  o.ld_in = pad_in || explicit_ld ? ld_in : 0;
  o.ld_out = pad_out || explicit_ld ? ld_out : 0;
  RunReport r = transpose(in.data(), out.data(), rows, cols, es, o);

  Bytes want = out0;
  reference_transpose(in0.data(), rows, cols, ld_in, want.data(), ld_out, es);
  EXPECT_EQ(first_difference(out.data(), want.data(), want.size(), es, ld_out), "") << "output";
  EXPECT_EQ(first_difference(in.data(), in0.data(), in0.size(), es, ld_in), "") << "input changed";
  EXPECT_EQ(r.shape, (Shape{rows, cols}));
  EXPECT_EQ(r.elem_size, es);
  EXPECT_EQ(r.bytes, rows * cols * es);
  EXPECT_EQ(r.mode, "out-of-place");
  return r;
}

// One in-place case: n x n with rows pad elements wider; the padding must
// stay untouched.
RunReport check_inplace(EngineChoice engine, std::size_t es, std::uint64_t n, std::uint64_t pad,
                        Mem mem = Mem::pageable) {
  const std::uint64_t ld = n + pad;
  const Bytes a0 = random_bytes(n * ld * es, n * 65537 + es);
  Buffer a(mem, a0);

  HostOptions o;
  o.engine = engine;
  o.run.host_mem = kSmallHostMem;
  o.run.device_mem = kSmallDeviceMem;
  o.ld_in = pad ? ld : 0;
  RunReport r = transpose_inplace(a.data(), n, es, o);

  Bytes want = a0;
  reference_transpose(a0.data(), n, n, ld, want.data(), ld, es);
  EXPECT_EQ(first_difference(a.data(), want.data(), want.size(), es, ld), "");
  EXPECT_EQ(r.shape, (Shape{n, n}));
  EXPECT_EQ(r.mode, "in-place");
  return r;
}

// ---------------------------------------------------------------------------
// Memory matrices (memory.hpp)

TEST(MemoryMatrix, ReadsAndWritesRectanglesWithLeadingDimensions) {
  for (std::size_t es : kElemSizes) {
    SCOPED_TRACE("elem size " + std::to_string(es));
    const std::uint64_t rows = 13, cols = 11, ld = 16;
    const Bytes m0 = random_bytes(rows * ld * es, es);
    Bytes m = m0;
    auto src = memory_source(HostMatrix{m.data(), {rows, cols}, es, ld});
    // A 5 x 4 rectangle at (3, 6) into a buffer with ld 7.
    Bytes got(5 * 7 * es, 0);
    src->read(3, 6, 5, 4, got.data(), 7);
    for (std::uint64_t i = 0; i < 5; ++i)
      for (std::uint64_t j = 0; j < 7; ++j) {
        const unsigned char* want = j < 4 ? &m0[((3 + i) * ld + 6 + j) * es] : nullptr;
        if (want) EXPECT_EQ(std::memcmp(&got[(i * 7 + j) * es], want, es), 0) << i << "," << j;
        else EXPECT_EQ(got[(i * 7 + j) * es], 0) << "read past the rectangle at " << i << "," << j;
      }

    // Write it back one row lower through a sink of the same layout: only
    // those elements change.
    auto sink = memory_sink(HostMatrix{m.data(), {rows, cols}, es, ld});
    sink->write(4, 6, 5, 4, got.data(), 7);
    Bytes want = m0;
    for (std::uint64_t i = 0; i < 5; ++i)
      std::memcpy(&want[((4 + i) * ld + 6) * es], &got[i * 7 * es], 4 * es);
    EXPECT_EQ(m, want);
  }
}

TEST(MemoryMatrix, ContiguousRectanglesAndEmptyOnes) {
  const std::uint64_t rows = 9, cols = 5;
  Bytes m = random_bytes(rows * cols * 4, 1);
  auto src = memory_source(HostMatrix{m.data(), {rows, cols}, 4});
  Bytes got(rows * cols * 4);
  src->read(0, 0, rows, cols, got.data(), cols);  // one memcpy
  EXPECT_EQ(got, m);
  src->read(2, 0, 3, cols, got.data(), cols);  // whole rows: contiguous too
  EXPECT_EQ(std::memcmp(got.data(), &m[2 * cols * 4], 3 * cols * 4), 0);
  src->read(rows, cols, 0, 0, nullptr, 0);  // an empty rectangle at the far corner touches nothing
}

TEST(MemoryMatrix, DescribesItselfAndOffersItsView) {
  std::vector<float> a(20 * 12);
  auto src = memory_source(HostMatrix{a.data(), {10, 20}, 4, 0, HostMemoryKind::pinned});
  EXPECT_EQ(src->describe(), "host memory (4-byte elements, 10x20, pinned)");
  EXPECT_EQ(src->info().shape, (Shape{10, 20}));
  EXPECT_EQ(src->info().elem_size, 4u);
  EXPECT_FALSE(src->info().dtype.has_value());
  EXPECT_EQ(src->location().path, "");
  EXPECT_TRUE(src->concurrent_reads());
  ASSERT_NE(src->host_view(), nullptr);
  EXPECT_EQ(src->host_view()->data, a.data());
  EXPECT_EQ(src->host_view()->ld, 20u);
  EXPECT_TRUE(src->host_view()->pinned);

  auto sink = memory_sink(HostMatrix{a.data(), {12, 10}, 4, 20, HostMemoryKind::pageable});
  EXPECT_EQ(sink->describe(), "host memory (4-byte elements, 12x10, ld 20, pageable)");
  EXPECT_EQ(sink->info().shape, (Shape{12, 10}));
  EXPECT_TRUE(sink->concurrent_writes());
  ASSERT_NE(sink->host_view(), nullptr);
  EXPECT_EQ(sink->host_view()->ld, 20u);
  EXPECT_FALSE(sink->host_view()->pinned);
  sink->commit();  // nothing to do, and harmless
  sink->commit();

  auto sq = memory_inplace(HostMatrix{a.data(), {12, 12}, 1});
  EXPECT_EQ(sq->describe(), "host memory (1-byte elements, 12x12)");
  EXPECT_EQ(sq->info().order, ByteOrder::not_applicable);
  EXPECT_TRUE(sq->concurrent_io());
  EXPECT_FALSE(sq->host_view()->pinned);  // unchecked is not pinned
  EXPECT_EQ(sq->location().path, "");
  sq->flush();
}

TEST(MemoryMatrix, RectanglesOutsideTheMatrixAreBugs) {
  Bytes m(6 * 4 * 2);
  auto src = memory_source(HostMatrix{m.data(), {6, 4}, 2});
  auto sink = memory_sink(HostMatrix{m.data(), {6, 4}, 2});
  auto sq = memory_inplace(HostMatrix{m.data(), {4, 4}, 2, 6});
  Bytes buf(64 * 2);
  auto internal = [](auto&& fn) {
    try {
      fn();
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::internal) << e.what();
      EXPECT_NE(std::string(e.what()).find("host memory"), std::string::npos) << e.what();
    }
  };
  internal([&] { src->read(5, 0, 2, 4, buf.data(), 4); });   // one row too many
  internal([&] { src->read(0, 1, 1, 4, buf.data(), 4); });   // one column too many
  internal([&] { src->read(0, 0, 2, 4, buf.data(), 3); });   // ld < w
  internal([&] { src->read(UINT64_MAX, 0, 2, 1, buf.data(), 1); });  // wraps
  internal([&] { sink->write(0, 3, 1, 2, buf.data(), 2); });
  internal([&] { sq->read(0, 0, 5, 1, buf.data(), 1); });
  internal([&] { sq->write(4, 0, 1, 1, buf.data(), 1); });
}

TEST(MemoryMatrix, FactoriesRefuseBadMatrices) {
  Bytes m(64);
  auto usage = [](auto&& fn, const char* what) {
    try {
      fn();
      ADD_FAILURE() << "no error for " << what;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::usage) << e.what();
    }
  };
  usage([&] { memory_source(HostMatrix{nullptr, {2, 2}, 4}); }, "null data");
  usage([&] { memory_sink(HostMatrix{m.data(), {0, 2}, 4}); }, "no rows");
  usage([&] { memory_source(HostMatrix{m.data(), {2, 0}, 4}); }, "no columns");
  usage([&] { memory_source(HostMatrix{m.data(), {2, 2}, 3}); }, "3-byte elements");
  usage([&] { memory_source(HostMatrix{m.data(), {2, 4}, 4, 3}); }, "ld < cols");
  usage([&] { memory_inplace(HostMatrix{m.data(), {2, 3}, 4}); }, "not square");
  usage([&] { memory_source(HostMatrix{m.data(), {UINT64_MAX / 2, 4}, 4}); }, "extent overflows");
  EXPECT_EQ(host_matrix_span(HostMatrix{m.data(), {3, 5}, 4, 8}), (2 * 8 + 5) * 4u);
  EXPECT_EQ(host_matrix_span(HostMatrix{m.data(), {3, 5}, 2}), 3 * 5 * 2u);
}

// Several threads read and write disjoint tiles at once, as the engines do.
TEST(MemoryMatrix, ConcurrentDisjointRectangles) {
  const std::uint64_t n = 512, ld = 515, t = 64;
  const std::size_t es = 8;
  const Bytes a0 = random_bytes(n * ld * es, 5);
  Bytes a = a0, b(n * ld * es, 0);
  auto src = memory_source(HostMatrix{a.data(), {n, n}, es, ld});
  auto dst = memory_sink(HostMatrix{b.data(), {n, n}, es, ld});
  std::vector<std::thread> threads;
  for (int k = 0; k < 8; ++k)
    threads.emplace_back([&, k] {
      Bytes tile(t * t * es);
      for (std::uint64_t i = std::uint64_t(k); i < (n / t) * (n / t); i += 8) {
        const std::uint64_t r0 = (i / (n / t)) * t, c0 = (i % (n / t)) * t;
        src->read(r0, c0, t, t, tile.data(), t);
        dst->write(r0, c0, t, t, tile.data(), t);
      }
    });
  for (auto& th : threads) th.join();
  for (std::uint64_t r = 0; r < n; ++r)
    ASSERT_EQ(std::memcmp(&b[r * ld * es], &a0[r * ld * es], n * es), 0) << "row " << r;
}

// ---------------------------------------------------------------------------
// Pinned memory helpers (cuda.hpp)

TEST(PinnedMemory, OrdinaryMemoryIsNotPinned) {
  std::vector<int> v(100);
  EXPECT_FALSE(is_pinned_host(v.data()));
  EXPECT_EQ(cuda_pointer_kind(v.data()), PointerKind::unregistered);
  EXPECT_FALSE(is_pinned_host(nullptr));
  int on_stack = 0;
  EXPECT_FALSE(is_pinned_host(&on_stack));
  EXPECT_EQ(alloc_pinned(0), nullptr);
  free_pinned(nullptr);
}

TEST(PinnedMemory, WithoutAGpuAllocationIsANoDeviceError) {
  if (cuda_device_count() > 0) GTEST_SKIP() << "a GPU exists: PinnedMemory.AllocatesPinnedMemory covers it";
  try {
    PinnedHostBuffer b(4096);
    ADD_FAILURE() << "allocated pinned memory without a GPU";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::no_device) << e.what();
    EXPECT_NE(std::string(e.what()).find("pinned"), std::string::npos) << e.what();
  }
  // The failed attempt leaves nothing behind: ordinary queries still answer.
  std::vector<char> v(10);
  EXPECT_FALSE(is_pinned_host(v.data()));
}

TEST(PinnedMemory, AllocatesPinnedMemory) {
  GT_REQUIRE_GPU();
  PinnedHostBuffer b(1 << 20);
  ASSERT_NE(b.data(), nullptr);
  EXPECT_EQ(b.size(), 1u << 20);
  EXPECT_TRUE(is_pinned_host(b.data()));
  EXPECT_TRUE(is_pinned_host(static_cast<char*>(b.data()) + (1 << 20) - 1));
  std::memset(b.data(), 0x5A, b.size());
  void* p = b.data();
  PinnedHostBuffer c = std::move(b);
  EXPECT_EQ(c.data(), p);
  EXPECT_EQ(b.data(), nullptr);
  c = PinnedHostBuffer(64);
  EXPECT_TRUE(is_pinned_host(c.data()));
  std::vector<int> v(100);
  EXPECT_FALSE(is_pinned_host(v.data()));
}

// ---------------------------------------------------------------------------
// gt::transpose and gt::transpose_inplace on the CPU engine

struct ShapeCase {
  std::uint64_t rows, cols;
};
const ShapeCase kShapes[] = {
    {1, 1}, {1, 1000}, {1000, 1}, {2, 3},     {257, 131}, {131, 257},
    {64, 64}, {1000, 37}, {37, 1000}, {513, 511},
};

std::string shape_param_name(std::size_t es, const ShapeCase& s) {
  return "es" + std::to_string(es) + "_" + std::to_string(s.rows) + "x" + std::to_string(s.cols);
}

class HostApiCpu : public ::testing::TestWithParam<std::tuple<std::size_t, ShapeCase>> {};

TEST_P(HostApiCpu, OutOfPlace) {
  const auto [es, s] = GetParam();
  RunReport r = check_transpose(EngineChoice::cpu, es, s.rows, s.cols, 0, 0);
  EXPECT_EQ(r.engine, "cpu");
  // Memory for the CPU engine is never asked about (that would start CUDA).
  EXPECT_EQ(r.input, "host memory (" + std::to_string(es) + "-byte elements, " + to_string(Shape{s.rows, s.cols}) + ")");
  EXPECT_EQ(r.output, "host memory (" + std::to_string(es) + "-byte elements, " + to_string(Shape{s.cols, s.rows}) + ")");
  if (s.rows * s.cols * es >= 64 * 1024) {
    EXPECT_GE(r.tiles, 4u) << "the small budget should force many tiles";
  }
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
    EXPECT_GE(r.tiles, 4u) << "the small budget should force many tile pairs";
  }
}

TEST_P(HostApiCpuInplace, SquareWithWideRows) {
  const auto [es, n] = GetParam();
  check_inplace(EngineChoice::cpu, es, n, 7);
}

INSTANTIATE_TEST_SUITE_P(Squares, HostApiCpuInplace,
                         ::testing::Combine(::testing::ValuesIn(kElemSizes), ::testing::ValuesIn(kSquares)),
                         [](const auto& info) {
                           return "es" + std::to_string(std::get<0>(info.param)) + "_n" +
                                  std::to_string(std::get<1>(info.param));
                         });

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
  std::string why;
  if (cuda_device_count(&why) > 0) GTEST_SKIP() << "a GPU exists: auto picks cuda";
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
  std::string why;
  if (cuda_device_count(&why) > 0) GTEST_SKIP() << "a GPU exists";
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

// ---------------------------------------------------------------------------
// The same on the CUDA engine: pinned memory goes by DMA directly, pageable
// memory through the engine's staging buffers, in every combination.

// Every (input, output) memory combination: pageable -> pageable, pageable ->
// pinned, pinned -> pageable, pinned -> pinned.
const std::pair<Mem, Mem> kMemPairs[] = {
    {Mem::pageable, Mem::pageable}, {Mem::pageable, Mem::pinned}, {Mem::pinned, Mem::pageable}, {Mem::pinned, Mem::pinned}};

std::string mem_trace(Mem in, Mem out) { return std::string(mem_name(in)) + " -> " + mem_name(out); }

// The memory kinds loop inside each test (not as parameters), so the GPU
// machine starts a CUDA context once per shape rather than once per case.
class HostApiCuda : public ::testing::TestWithParam<std::tuple<std::size_t, ShapeCase>> {};

TEST_P(HostApiCuda, OutOfPlace) {
  GT_REQUIRE_GPU();
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
  GT_REQUIRE_GPU();
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
  GT_REQUIRE_GPU();
  const auto [es, n] = GetParam();
  for (Mem mem : {Mem::pageable, Mem::pinned}) {
    SCOPED_TRACE(mem_name(mem));
    RunReport r = check_inplace(EngineChoice::cuda, es, n, 0, mem);
    EXPECT_EQ(r.engine, "cuda");
    EXPECT_NE(r.input.find(mem_name(mem)), std::string::npos) << r.input;
  }
}

TEST_P(HostApiCudaInplace, SquareWithWideRows) {
  GT_REQUIRE_GPU();
  const auto [es, n] = GetParam();
  for (Mem mem : {Mem::pageable, Mem::pinned}) {
    SCOPED_TRACE(mem_name(mem));
    check_inplace(EngineChoice::cuda, es, n, 7, mem);
  }
}

INSTANTIATE_TEST_SUITE_P(Squares, HostApiCudaInplace,
                         ::testing::Combine(::testing::ValuesIn(kElemSizes), ::testing::ValuesIn(kSquares)),
                         [](const auto& info) {
                           return "es" + std::to_string(std::get<0>(info.param)) + "_n" +
                                  std::to_string(std::get<1>(info.param));
                         });

// A matrix larger than one default tile, both sides pinned, default budgets:
// the direct-DMA path at a size where it matters, bit-exact.
TEST(HostApiCudaLarge, PinnedBothSidesDefaultBudgets) {
  GT_REQUIRE_GPU();
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
  GT_REQUIRE_GPU();
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
