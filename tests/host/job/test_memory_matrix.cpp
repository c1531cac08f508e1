// The memory matrices under the host-memory API (memory.hpp): rectangles
// with leading dimensions, descriptions and views, bugs and bad matrices
// refused, concurrent tiles; and the pinned-memory helpers (cuda.hpp), whose
// GPU variant skips without a GPU.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "gtranspose/cuda.hpp"
#include "gtranspose/error.hpp"
#include "gtranspose/memory.hpp"
#include "host/job/host_api_util.hpp"
#include "support/gpu.hpp"

namespace gt {
namespace {

using namespace host_api_test;

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
  usage([&] { (void)memory_source(HostMatrix{nullptr, {2, 2}, 4}); }, "null data");
  usage([&] { (void)memory_sink(HostMatrix{m.data(), {0, 2}, 4}); }, "no rows");
  usage([&] { (void)memory_source(HostMatrix{m.data(), {2, 0}, 4}); }, "no columns");
  usage([&] { (void)memory_source(HostMatrix{m.data(), {2, 2}, 3}); }, "3-byte elements");
  usage([&] { (void)memory_source(HostMatrix{m.data(), {2, 4}, 4, 3}); }, "ld < cols");
  usage([&] { (void)memory_inplace(HostMatrix{m.data(), {2, 3}, 4, 5}); }, "no gaps between rows");
  usage([&] { (void)memory_source(HostMatrix{m.data(), {UINT64_MAX / 2, 4}, 4}); }, "extent overflows");
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
  GT_SKIP_WITH_GPU("PinnedMemory.AllocatesPinnedMemory covers it");
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
  GT_SKIP_WITHOUT_GPU();
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

}  // namespace
}  // namespace gt
