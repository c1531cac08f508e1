// What a multi-threaded streaming engine relies on: which sources, sinks and
// in-place matrices take calls from several threads at once, tiles moved by
// several threads in output order, and the write-back hint rows_complete().
#include <gtest/gtest.h>
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <thread>

#include "formats_test_util.hpp"
#include "gtranspose/error.hpp"
#include "gtranspose/format.hpp"
#include "gtranspose/tiles.hpp"
#include "testing.hpp"

namespace gt::test {
namespace {

constexpr unsigned kThreads = 4;

OpenOptions raw_opts(Shape s, DType t) {
  OpenOptions o;
  o.shape = s;
  o.dtype = t;
  return o;
}

// A .npy file in Fortran order holding the logical matrix `m` (rows x cols).
std::string fortran_npy(const std::vector<unsigned char>& m, std::uint64_t rows, std::uint64_t cols,
                        std::size_t es) {
  std::string dict = std::string("{'descr': '") + (es == 1 ? "|" : "<") + "u" + std::to_string(es) +
                     "', 'fortran_order': True, 'shape': (" +
                     std::to_string(rows) + ", " + std::to_string(cols) + "), }";
  while ((10 + dict.size() + 1) % 64) dict += ' ';
  dict += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  out += char(dict.size() & 0xff);
  out += char(dict.size() >> 8);
  out += dict;
  const auto t = transposed(m, rows, cols, es);
  out.append(t.begin(), t.end());
  return out;
}

// Transposes `src` into `sink` as a streaming engine would: tiles of a small
// plan in output order (one output row band after another), each band's
// tiles shared out among kThreads threads that read, transpose and write at
// once, then rows_complete() for the finished band.
void stream(Source& src, Sink& sink, std::uint64_t tile_bytes) {
  ASSERT_TRUE(src.concurrent_reads()) << src.describe();
  ASSERT_TRUE(sink.concurrent_writes()) << sink.describe();
  const std::size_t es = src.info().elem_size;
  const TileGrid plan = plan_for(src.info(), tile_bytes);
  ASSERT_GT(plan.tile_cols(), 1u);
  ASSERT_GT(plan.tile_rows(), kThreads);
  std::atomic<int> failures{0};
  for (std::uint64_t band = 0; band < plan.tile_cols(); ++band) {
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < kThreads; ++t)
      pool.emplace_back([&, t] {
        try {
          std::vector<unsigned char> a, b;
          for (std::uint64_t i = t; i < plan.tile_rows(); i += kThreads) {
            const Tile tile = plan.tile_output_order(band * plan.tile_rows() + i);
            const std::uint64_t ld_in = tile.w + 1, ld_out = tile.h + 3;  // leading dimensions wider than the tile
            a.assign(tile.h * ld_in * es, 0);
            b.assign(tile.w * ld_out * es, 0);
            src.read(tile.r0, tile.c0, tile.h, tile.w, a.data(), ld_in);
            for (std::uint64_t r = 0; r < tile.h; ++r)
              for (std::uint64_t c = 0; c < tile.w; ++c)
                std::memcpy(&b[(c * ld_out + r) * es], &a[(r * ld_in + c) * es], es);
            sink.write(tile.c0, tile.r0, tile.w, tile.h, b.data(), ld_out);
          }
        } catch (const std::exception& e) {
          ADD_FAILURE() << e.what();
          ++failures;
        }
      });
    for (auto& th : pool) th.join();
    const Tile first = plan.tile_output_order(band * plan.tile_rows());
    sink.rows_complete(first.c0, first.w);
  }
  ASSERT_EQ(failures.load(), 0);
  sink.commit();
}

TEST(Streaming, PlainFormatsSayTheyTakeConcurrentCalls) {
  TempDir dir;
  const auto m = pattern_matrix(6, 6, 4, 1);
  write_file(dir / "m.raw", m);
  write_file(dir / "f.npy", fortran_npy(m, 6, 6, 4));
  auto raw = open_source(dir / "m.raw", raw_opts({6, 6}, DType::f32));
  auto fortran = open_source(dir / "f.npy", {});
  EXPECT_TRUE(raw->concurrent_reads());
  EXPECT_TRUE(fortran->concurrent_reads());
  for (const char* out : {"o.raw", "o.npy"}) {
    auto sink = create_sink(dir / out, *raw, {});
    EXPECT_TRUE(sink->concurrent_writes()) << out;
    EXPECT_EQ(sink->reserved_bytes(), 0u) << out;
  }
  EXPECT_TRUE(open_inplace(dir / "m.raw", raw_opts({6, 6}, DType::f32))->concurrent_io());
  EXPECT_TRUE(open_inplace(dir / "f.npy", {})->concurrent_io());
}

TEST(Streaming, ManyThreadsInOutputOrder) {
  TempDir dir;
  const std::uint64_t R = 203, C = 157;
  for (std::size_t es : {1, 2, 8}) {
    const DType t = es == 1 ? DType::u8 : es == 2 ? DType::u16 : DType::u64;
    const auto m = pattern_matrix(R, C, es, 40 + es);
    const auto expect = transposed(m, R, C, es);
    const std::string tag = std::to_string(es);
    write_file(dir / ("in" + tag + ".raw"), m);
    write_file(dir / ("in" + tag + ".npy"), fortran_npy(m, R, C, es));  // Fortran order: bounce buffers per call
    MemSource mem(info_of({R, C}, t), m);
    for (const char* in : {"raw", "npy"})
      for (const char* out : {"raw", "npy", "h5"}) {
        SCOPED_TRACE(std::string(in) + " -> " + out + ", " + tag + "-byte");
        const std::string in_path = dir / ("in" + tag + "." + in);
        auto src = open_source(in_path, std::string(in) == "raw" ? raw_opts({R, C}, t) : OpenOptions{});
        const std::string out_path = dir / ("out" + tag + in + "." + out);
        {
          auto sink = create_sink(out_path, std::string(out) == "h5" ? static_cast<Source&>(mem) : *src, {});
          stream(*src, *sink, 600 * es);
        }
        auto back = open_source(out_path, std::string(out) == "raw" ? raw_opts({C, R}, t) : OpenOptions{});
        EXPECT_EQ(read_tiled(*back, 50, 1000), expect);
      }
  }
}

TEST(Streaming, InPlaceFromManyThreads) {
  TempDir dir;
  const std::uint64_t N = 131;
  const auto m = pattern_matrix(N, N, 4, 9);
  const auto t = transposed(m, N, N, 4);
  write_file(dir / "sq.raw", m);
  write_file(dir / "sq.npy", fortran_npy(m, N, N, 4));
  for (const char* name : {"sq.raw", "sq.npy"}) {
    SCOPED_TRACE(name);
    auto mat = open_inplace(dir / name, std::string(name) == "sq.raw" ? raw_opts({N, N}, DType::u32) : OpenOptions{});
    ASSERT_TRUE(mat->concurrent_io());
    const PairGrid plan(N, 4, 32 * 32 * 4);
    ASSERT_GT(plan.count(), 2 * kThreads);
    // Each thread swaps its own pairs: disjoint rectangles, read and written at once.
    std::vector<std::thread> pool;
    for (unsigned k = 0; k < kThreads; ++k)
      pool.emplace_back([&, k] {
        try {
          for (std::uint64_t i = k; i < plan.count(); i += kThreads) {
            const TilePair p = plan.pair(i);
            std::vector<unsigned char> a(p.a.elems() * 4), b(p.b.elems() * 4), at(a.size()), bt(b.size());
            mat->read(p.a.r0, p.a.c0, p.a.h, p.a.w, a.data(), p.a.w);
            mat->read(p.b.r0, p.b.c0, p.b.h, p.b.w, b.data(), p.b.w);
            at = transposed(a, p.a.h, p.a.w, 4);  // p.a.w x p.a.h: goes to tile b
            bt = transposed(b, p.b.h, p.b.w, 4);
            mat->write(p.b.r0, p.b.c0, p.b.h, p.b.w, at.data(), p.b.w);
            if (!p.diagonal()) mat->write(p.a.r0, p.a.c0, p.a.h, p.a.w, bt.data(), p.a.w);
          }
        } catch (const std::exception& e) {
          ADD_FAILURE() << e.what();
        }
      });
    for (auto& th : pool) th.join();
    mat->flush();
    mat.reset();
    auto back = open_source(dir / name, std::string(name) == "sq.raw" ? raw_opts({N, N}, DType::u32) : OpenOptions{});
    EXPECT_EQ(read_tiled(*back, 17, 200), t);
  }
}

TEST(Streaming, RowsCompleteWritesBackAndKeepsTheData) {
  // A real file of a few MiB on the test folder's file system: every band
  // written, its rows handed to rows_complete, in an uneven order.
  TempDir dir;
  const std::uint64_t R = 1024, C = 768;
  MemSource mem(info_of({R, C}, DType::f32), pattern_matrix(R, C, 4, 17));
  const auto expect = transposed(mem.data(), R, C, 4);
  for (const char* ext : {"raw", "npy", "h5"}) {
    SCOPED_TRACE(ext);
    const std::string out = dir / (std::string("wb.") + ext);
    {
      auto sink = create_sink(out, mem, {});
      const std::uint64_t band = 100;  // output rows per band
      for (std::uint64_t r0 = 0; r0 < C; r0 += band) {
        const std::uint64_t h = std::min(band, C - r0);
        sink->write(r0, 0, h, R, &expect[r0 * R * 4], R);
        EXPECT_NO_THROW(sink->rows_complete(r0, h));
      }
      EXPECT_NO_THROW(sink->rows_complete(0, C));  // again, all of it
      EXPECT_NO_THROW(sink->rows_complete(C, 0));  // nothing
      Error e = catch_error([&] { sink->rows_complete(C - 1, 2); });
      EXPECT_EQ(e.kind(), ErrorKind::internal) << e.what();
      sink->commit();
    }
    auto back = open_source(out, std::string(ext) == "raw" ? raw_opts({C, R}, DType::f32) : OpenOptions{});
    EXPECT_EQ(read_tiled(*back, 300, 1000), expect);
  }
}

TEST(Streaming, StartWritebackIgnoresWhatCannotWriteBack) {
  TempDir dir;
  write_file(dir / "f", std::string(8192, 'x'));
  {
    fmt::Fd f = fmt::open_existing(dir / "f", true, "f");
    EXPECT_NO_THROW(fmt::start_writeback(f.get(), 0, 8192, "f"));
    EXPECT_NO_THROW(fmt::start_writeback(f.get(), 4096, 0, "f"));
    EXPECT_NO_THROW(fmt::start_writeback(f.get(), 4096, 1 << 20, "f"));  // past the end: nothing to do
  }
  int p[2];
  ASSERT_EQ(0, ::pipe(p));
  EXPECT_NO_THROW(fmt::start_writeback(p[1], 0, 10, "a pipe"));  // ESPIPE: quietly nothing
  ::close(p[0]);
  ::close(p[1]);
  // A descriptor that is not open is a real error.
  Error e = catch_error([&] { fmt::start_writeback(p[1], 0, 10, "closed"); });
  EXPECT_EQ(e.kind(), ErrorKind::io);
  EXPECT_NE(std::string(e.what()).find("closed"), std::string::npos) << e.what();
}

}  // namespace
}  // namespace gt::test
