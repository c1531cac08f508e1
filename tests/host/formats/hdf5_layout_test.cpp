// HDF5 output layouts: chunked inputs give chunked outputs with the same
// filters, contiguous ones contiguous outputs; tiles of whole chunks store
// each chunk once and read none back; the source's chunk cache holds one
// chunk; a filter that cannot encode here falls back to contiguous.
#include <gtest/gtest.h>
#include <hdf5.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "formats_test_util.hpp"
#include "gtranspose/format.hpp"
#include "gtranspose/tiles.hpp"
#include "hdf5_test_util.hpp"

namespace gt::test {
namespace {

void add_int_attribute(const std::string& path, const std::string& name, const char* attr, int value) {
  hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  hid_t d = H5Dopen2(file, name.c_str(), H5P_DEFAULT);
  hid_t scalar = H5Screate(H5S_SCALAR);
  hid_t a = H5Acreate2(d, attr, H5T_STD_I32LE, scalar, H5P_DEFAULT, H5P_DEFAULT);
  ASSERT_GE(a, 0);
  ASSERT_GE(H5Awrite(a, H5T_NATIVE_INT, &value), 0);
  H5Aclose(a);
  H5Sclose(scalar);
  H5Dclose(d);
  H5Fclose(file);
}

int read_int_attribute(const std::string& path, const std::string& name, const char* attr) {
  int v = -1;
  hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  hid_t d = H5Dopen2(file, name.c_str(), H5P_DEFAULT);
  hid_t a = H5Aopen(d, attr, H5P_DEFAULT);
  EXPECT_GE(a, 0) << attr;
  if (a >= 0) {
    H5Aread(a, H5T_NATIVE_INT, &v);
    H5Aclose(a);
  }
  H5Dclose(d);
  H5Fclose(file);
  return v;
}


TEST(Hdf5, ChunkedGzipInputGivesChunkedGzipOutput) {
  TempDir dir;
  const std::uint64_t R = 120, C = 90;
  const auto data = pattern_matrix(R, C, 4, 51);
  const std::string in = dir / "in.h5";
  h5_write(in, "/m", {R, C}, H5T_IEEE_F32LE, data.data(), {{16, 12}, true, true});
  add_int_attribute(in, "/m", "answer", 42);
  const Storage sin = h5_storage(in, "/m");
  ASSERT_EQ(sin.filters, (std::vector<H5Z_filter_t>{H5Z_FILTER_SHUFFLE, H5Z_FILTER_DEFLATE}));

  for (bool planned : {true, false}) {
    SCOPED_TRACE(planned ? "tiles of whole chunks" : "uneven tiles");
    const std::string out = dir / (planned ? "planned.h5" : "uneven.h5");
    auto src = open_source(in, {});
    EXPECT_FALSE(src->concurrent_reads());
    {
      auto sink = create_sink(out, *src, {});
      // Chunks encoded on the sink's own codec threads, stored with
      // H5Dwrite_chunk: one caller at a time, no chunk cache counted; each
      // codec thread holds two buffers of at least a chunk.
      EXPECT_FALSE(sink->concurrent_writes());
      EXPECT_EQ(sink->reserved_bytes(), 0u);
      EXPECT_GE(sink->codec_demand().threads, 1);
      EXPECT_GE(sink->codec_demand().bytes_per_thread, 2u * 12 * 16 * 4);
      EXPECT_GE(src->codec_demand().bytes_per_thread, 2u * 12 * 16 * 4);
      EXPECT_NE(sink->describe().find("chunked 12x16, shuffle+deflate"), std::string::npos) << sink->describe();
      if (planned) write_planned(*src, *sink, 48 * 48 * 4);
      else write_tiled(*sink, transposed(data, R, C, 4), C, R, 4, 7, 5);
      EXPECT_NO_THROW(sink->rows_complete(0, 10));  // nothing to start: HDF5 writes the chunks
      sink->commit();
    }
    const Storage st = h5_storage(out, "/m");
    EXPECT_EQ(st.layout, H5D_CHUNKED);
    EXPECT_EQ(st.chunk, (std::vector<hsize_t>{12, 16}));
    EXPECT_EQ(st.filters, sin.filters);
    EXPECT_EQ(st.values, sin.values);  // deflate level 6, shuffle's element size
    EXPECT_EQ(h5_read_all(out, "/m"), transposed(data, R, C, 4));
    EXPECT_EQ(read_int_attribute(out, "/m", "answer"), 42);
  }
}

TEST(Hdf5, ChunkedUnfilteredInputGivesChunkedOutput) {
  TempDir dir;
  const std::uint64_t R = 50, C = 33;
  const auto data = pattern_matrix(R, C, 8, 52);
  h5_write(dir / "in.h5", "/m", {R, C}, H5T_STD_I64LE, data.data(), {{50, 4}, false, false});
  auto src = open_source(dir / "in.h5", {});
  {
    auto sink = create_sink(dir / "out.h5", *src, {});
    // Chunks allocated at creation and written by pwrite straight from the
    // tiles: no cache, no codec buffers.
    EXPECT_EQ(sink->reserved_bytes(), 0u);
    EXPECT_EQ(sink->codec_demand().bytes_per_thread, 0u);
    EXPECT_EQ(src->codec_demand().bytes_per_thread, 0u);
    write_planned(*src, *sink, 50 * 8 * 8);
    sink->commit();
  }
  const Storage st = h5_storage(dir / "out.h5", "/m");
  EXPECT_EQ(st.layout, H5D_CHUNKED);
  EXPECT_EQ(st.chunk, (std::vector<hsize_t>{4, 50}));
  EXPECT_TRUE(st.filters.empty());
  EXPECT_EQ(h5_read_all(dir / "out.h5", "/m"), transposed(data, R, C, 8));
}

TEST(Hdf5, ContiguousInputGivesContiguousOutput) {
  TempDir dir;
  const std::uint64_t R = 40, C = 70;
  const auto data = pattern_matrix(R, C, 2, 53);
  h5_write(dir / "in.h5", "/m", {R, C}, H5T_STD_U16LE, data.data());
  add_int_attribute(dir / "in.h5", "/m", "answer", 7);
  auto src = open_source(dir / "in.h5", {});
  EXPECT_TRUE(src->concurrent_reads());  // pread at H5Dget_offset
  {
    auto sink = create_sink(dir / "out.h5", *src, {});
    EXPECT_TRUE(sink->concurrent_writes());  // pwrite at H5Dget_offset
    EXPECT_EQ(sink->reserved_bytes(), 0u);
    EXPECT_EQ(sink->describe().find("chunked"), std::string::npos) << sink->describe();
    write_planned(*src, *sink, 16 * 16 * 2);
    sink->rows_complete(0, C);
    sink->commit();
  }
  const Storage st = h5_storage(dir / "out.h5", "/m");
  EXPECT_EQ(st.layout, H5D_CONTIGUOUS);
  EXPECT_TRUE(st.filters.empty());
  EXPECT_EQ(h5_read_all(dir / "out.h5", "/m"), transposed(data, R, C, 2));
  EXPECT_EQ(read_int_attribute(dir / "out.h5", "/m", "answer"), 7);
  // The in-place flags follow the same rule.
  h5_write(dir / "sq.h5", "/a", {8, 8}, H5T_STD_U16LE, data.data());
  h5_write(dir / "sq.h5", "/b", {8, 8}, H5T_STD_U16LE, data.data(), {{4, 4}, false, false});
  EXPECT_TRUE(open_inplace(dir / "sq.h5:/a", {})->concurrent_io());
  // Unfiltered chunks, all allocated, move by pread/pwrite at their offsets too.
  EXPECT_TRUE(open_inplace(dir / "sq.h5:/b", {})->concurrent_io());
}

// Test filters (ids 256-511 are HDF5's range for testing): an identity
// pipeline stage that counts its calls in each direction.
std::atomic<int> g_encodes{0}, g_decodes{0};

std::size_t counting_filter(unsigned flags, std::size_t, const unsigned[], std::size_t nbytes, std::size_t*, void**) {
  ++((flags & H5Z_FLAG_REVERSE) ? g_decodes : g_encodes);
  return nbytes;
}

H5Z_class2_t filter_class(H5Z_filter_t id, bool encoder) {
  H5Z_class2_t c{};
  c.version = H5Z_CLASS_T_VERS;
  c.id = id;
  c.encoder_present = encoder;
  c.decoder_present = 1;
  c.name = "gt test counter";
  c.filter = counting_filter;
  return c;
}

TEST(Hdf5, WholeChunkTilesStoreEachChunkOnceAndReadNoneBack) {
  TempDir dir;
  constexpr H5Z_filter_t kId = 301;
  const H5Z_class2_t cls = filter_class(kId, true);
  ASSERT_GE(H5Zregister(&cls), 0);
  const std::uint64_t R = 120, C = 90;
  const auto data = pattern_matrix(R, C, 2, 54);
  ASSERT_NO_FATAL_FAILURE(
      h5_write(dir / "in.h5", "/m", {R, C}, H5T_STD_U16LE, data.data(), {{16, 12}, false, false, 0, {kId}}));
  const int chunks = 8 * 8;  // ceil(90/12) x ceil(120/16), transposed
  for (bool planned : {true, false}) {
    SCOPED_TRACE(planned ? "tiles of whole chunks" : "uneven tiles");
    const std::string out = dir / (planned ? "planned.h5" : "uneven.h5");
    auto src = open_source(dir / "in.h5", {});
    {
      auto sink = create_sink(out, *src, {});
      ASSERT_NE(sink->describe().find("chunked 12x16, gt test counter"), std::string::npos) << sink->describe();
      if (planned) {
        // Source reads decode; count only what the sink does.
        std::vector<unsigned char> all = read_tiled(*src, R, C);
        auto mem = std::make_unique<MemSource>(src->info(), all);
        const TileGrid plan = plan_for(src->info(), 48 * 48 * 2, src->preferred_block());
        ASSERT_EQ(plan.tile_h() % 16, 0u);
        ASSERT_EQ(plan.tile_w() % 12, 0u);
        g_encodes = 0;
        g_decodes = 0;
        write_planned(*mem, *sink, plan);
      } else {
        g_encodes = 0;
        g_decodes = 0;
        write_tiled(*sink, transposed(data, R, C, 2), C, R, 2, 7, 5);
      }
      sink->commit();
    }
    if (planned) {
      EXPECT_EQ(g_encodes.load(), chunks);  // each output chunk compressed once
      EXPECT_EQ(g_decodes.load(), 0);       // and never read back
    } else {
      EXPECT_GT(g_decodes.load(), 0);  // partial chunks evicted and read back: what whole tiles avoid
    }
    EXPECT_EQ(h5_storage(out, "/m").filters, (std::vector<H5Z_filter_t>{kId}));
    EXPECT_EQ(h5_read_all(out, "/m"), transposed(data, R, C, 2));
  }
  EXPECT_GE(H5Zunregister(kId), 0);
}

// The source's cache holds one chunk (what reserved_bytes() counts) even
// when tiles read chunks in part, and consecutive tiles inside one chunk
// reuse it.
TEST(Hdf5, SourceChunkCacheHoldsOneChunk) {
  TempDir dir;
  constexpr H5Z_filter_t kId = 303;
  const H5Z_class2_t cls = filter_class(kId, true);
  ASSERT_GE(H5Zregister(&cls), 0);
  const std::uint64_t R = 32, C = 64;
  const auto data = pattern_matrix(R, C, 1, 56);
  ASSERT_NO_FATAL_FAILURE(
      h5_write(dir / "in.h5", "/m", {R, C}, H5T_STD_U8LE, data.data(), {{32, 8}, false, false, 0, {kId}}));
  {
    auto src = open_source(dir / "in.h5", {});
    EXPECT_EQ(src->reserved_bytes(), 32u * 8 * 2);
    std::vector<unsigned char> half(16 * C);
    g_decodes = 0;
    // The top halves of all eight chunks, then the bottom halves: had the
    // cache kept the eight part-read chunks (as HDF5 does with preemption
    // weight 1.0), the second read would decode nothing.
    src->read(0, 0, 16, C, half.data(), C);
    EXPECT_EQ(0, std::memcmp(half.data(), data.data(), half.size()));
    src->read(16, 0, 16, C, half.data(), C);
    EXPECT_EQ(0, std::memcmp(half.data(), &data[16 * C], half.size()));
    EXPECT_EQ(g_decodes.load(), 16);
    // Tiles inside the chunk now cached (columns 56..63) decode nothing more.
    std::vector<unsigned char> tile(4 * 8);
    for (std::uint64_t r0 = 16; r0 < 32; r0 += 4) src->read(r0, 56, 4, 8, tile.data(), 8);
    EXPECT_EQ(g_decodes.load(), 16);
  }
  EXPECT_GE(H5Zunregister(kId), 0);
}

TEST(Hdf5, FilterThatCannotEncodeFallsBackToContiguous) {
  TempDir dir;
  constexpr H5Z_filter_t kId = 302;
  const std::uint64_t R = 20, C = 30;
  const auto data = pattern_matrix(R, C, 4, 55);
  {
    const H5Z_class2_t full = filter_class(kId, true);
    ASSERT_GE(H5Zregister(&full), 0);
    // Chunked: deflate, then the test filter.
    ASSERT_NO_FATAL_FAILURE(
        h5_write(dir / "in.h5", "/m", {R, C}, H5T_STD_I32LE, data.data(), {{5, 6}, true, false, 0, {kId}, 1}));
    ASSERT_GE(H5Zunregister(kId), 0);
  }
  // Now only its decoder exists (like a decode-only szip): the input reads,
  // the output cannot be written with it.
  const H5Z_class2_t decode_only = filter_class(kId, false);
  ASSERT_GE(H5Zregister(&decode_only), 0);
  {
    auto src = open_source(dir / "in.h5", {});
    auto sink = create_sink(dir / "out.h5", *src, {});
    EXPECT_NE(sink->describe().find("(contiguous: the input's filter 'gt test counter' (302) cannot encode here)"),
              std::string::npos)
        << sink->describe();
    EXPECT_TRUE(sink->concurrent_writes());
    EXPECT_EQ(sink->reserved_bytes(), 0u);
    write_planned(*src, *sink, 10 * 12 * 4);
    sink->commit();
  }
  const Storage st = h5_storage(dir / "out.h5", "/m");
  EXPECT_EQ(st.layout, H5D_CONTIGUOUS);
  EXPECT_EQ(h5_read_all(dir / "out.h5", "/m"), transposed(data, R, C, 4));
  EXPECT_GE(H5Zunregister(kId), 0);
}

}  // namespace
}  // namespace gt::test
