// Our codecs against HDF5's own filter pipeline, both ways, in one process:
// HDF5 writes a chunked dataset with its filters (built in: deflate,
// shuffle, fletcher32, szip; plugins: lz4, blosc; zstd through the
// reference filter below), our direct path reads it; our direct path writes
// the transpose, HDF5 reads it back. Every element size, chunks that do not
// divide the extents, chunks of one row and of one column, smooth and
// random data (random chunks do not shrink: HDF5 stores them with the
// optional filter skipped, which exercises the per-chunk filter mask).
// Damaged chunks give an error naming the chunk. h5py and h5dump reading
// our outputs, out of process, are in tests/cli/test_cli_hdf5_codecs.cpp.
#include <gtest/gtest.h>
#include <hdf5.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "formats_test_util.hpp"
#include "gtranspose/error.hpp"
#include "gtranspose/format.hpp"
#include "hdf5_test_util.hpp"
#include "testing.hpp"
#if GT_TEST_ZSTD  // tests/CMakeLists.txt: libzstd found (the reference filter needs it)
#include <zstd.h>
#endif

namespace gt::test {
namespace {

#if GT_TEST_ZSTD
// The zstd filter (32015) exactly as the HDF Group's H5Zzstd.c does it: one
// frame per chunk at the level in cd_values[0]. Registered by the test, so
// HDF5's pipeline, not ours, runs it.
std::size_t reference_zstd(unsigned flags, std::size_t nv, const unsigned v[], std::size_t nbytes, std::size_t* size,
                           void** buf) {
  void* out = nullptr;
  std::size_t n = 0;
  if (flags & H5Z_FLAG_REVERSE) {
    const unsigned long long cs = ZSTD_getFrameContentSize(*buf, nbytes);
    if (cs == ZSTD_CONTENTSIZE_ERROR || cs == ZSTD_CONTENTSIZE_UNKNOWN || cs == 0) return 0;
    out = std::malloc(cs);
    n = ZSTD_decompress(out, cs, *buf, nbytes);
  } else {
    const std::size_t bound = ZSTD_compressBound(nbytes);
    out = std::malloc(bound);
    n = ZSTD_compress(out, bound, *buf, nbytes, nv > 0 ? int(v[0]) : ZSTD_CLEVEL_DEFAULT);
  }
  if (ZSTD_isError(n)) {
    std::free(out);
    return 0;
  }
  std::free(*buf);
  *buf = out;
  *size = n;
  return n;
}

void register_reference_zstd() {
  static const H5Z_class2_t cls = {H5Z_CLASS_T_VERS, 32015, 1, 1, "reference zstd", nullptr, nullptr, reference_zstd};
  ASSERT_GE(H5Zregister(&cls), 0);
}
#endif

struct Pipeline {
  std::string name;
  std::function<bool(hid_t dcpl, std::size_t es)> set;  // false: not applicable here (say why in `skip`)
  std::string skip;
};

bool plugin(H5Z_filter_t id) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  return H5Zfilter_avail(id) > 0;
}

std::vector<Pipeline> pipelines() {
  return {
      {"unfiltered", [](hid_t, std::size_t) { return true; }, ""},
      {"deflate", [](hid_t d, std::size_t) { return H5Pset_deflate(d, 4) >= 0; }, ""},
      {"shuffle+deflate", [](hid_t d, std::size_t) { return H5Pset_shuffle(d) >= 0 && H5Pset_deflate(d, 1) >= 0; }, ""},
      {"fletcher32", [](hid_t d, std::size_t) { return H5Pset_fletcher32(d) >= 0; }, ""},
      {"shuffle+deflate+fletcher32",
       [](hid_t d, std::size_t) { return H5Pset_shuffle(d) >= 0 && H5Pset_deflate(d, 6) >= 0 && H5Pset_fletcher32(d) >= 0; },
       ""},
      // szip takes at most 64-bit pixels and at least 8 of them per block.
      {"szip", [](hid_t d, std::size_t es) { return es <= 8 && H5Pset_szip(d, H5_SZIP_NN_OPTION_MASK, 8) >= 0; }, ""},
      {"lz4", [](hid_t d, std::size_t) {
         const unsigned v[1] = {0};
         return plugin(32004) && H5Pset_filter(d, 32004, H5Z_FLAG_OPTIONAL, 1, v) >= 0;
       },
       "the HDF5 lz4 plugin (hdf5-filter-plugin) is not installed"},
      {"shuffle+zstd", [](hid_t d, std::size_t) {
#if GT_TEST_ZSTD
         const unsigned v[1] = {5};
         return H5Pset_shuffle(d) >= 0 && H5Pset_filter(d, 32015, H5Z_FLAG_MANDATORY, 1, v) >= 0;
#else
         return false;
#endif
       },
       "no zstd.h"},
      {"blosc", [](hid_t d, std::size_t) {
         const unsigned v[7] = {0, 0, 0, 0, 5, 1, 1};  // level 5, byte shuffle, lz4 inside
         return plugin(32001) && H5Pset_filter(d, 32001, H5Z_FLAG_OPTIONAL, 7, v) >= 0;
       },
       "the HDF5 blosc plugin (hdf5-filter-plugin-blosc-serial) is not installed"},
  };
}

bool ours_in_build(const std::string& pipeline) {
  const std::string have = codecs::available_codecs();
  for (const char* lib : {"szip", "lz4", "zstd", "blosc"})
    if (pipeline.find(lib) != std::string::npos && have.find(lib) == std::string::npos) return false;
  return true;
}

hid_t type_of_size(std::size_t es) {
  switch (es) {
    case 1: return H5T_STD_U8LE;
    case 2: return H5T_STD_I16LE;
    case 4: return H5T_IEEE_F32LE;
    case 8: return H5T_IEEE_F64LE;
    default: return -1;
  }
}

// Writes data (rows x cols, es-byte elements) chunked with HDF5's filters.
bool write_reference(const std::string& path, std::uint64_t rows, std::uint64_t cols, std::size_t es,
                     const std::vector<unsigned char>& data, Shape chunk, const Pipeline& p) {
  hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  const hsize_t dims[2] = {rows, cols}, cd[2] = {chunk.rows, chunk.cols};
  hid_t space = H5Screate_simple(2, dims, nullptr), dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(dcpl, 2, cd);
  // A 16-byte element: an opaque type, moved as bytes (the complex128 case).
  hid_t type = es == 16 ? H5Tcreate(H5T_OPAQUE, 16) : H5Tcopy(type_of_size(es));
  bool ok = p.set(dcpl, es);
  hid_t d = ok ? H5Dcreate2(file, "/m", type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT) : -1;
  ok = ok && d >= 0 && H5Dwrite(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data.data()) >= 0;
  if (d >= 0) H5Dclose(d);
  H5Tclose(type);
  H5Pclose(dcpl);
  H5Sclose(space);
  H5Fclose(file);
  return ok;
}

// Smooth data: each element's bytes change slowly along the row, so the
// compressors shrink it (random data is the other half of the cases).
std::vector<unsigned char> smooth_matrix(std::uint64_t rows, std::uint64_t cols, std::size_t es) {
  std::vector<unsigned char> v(rows * cols * es);
  for (std::uint64_t i = 0; i < rows * cols; ++i)
    for (std::size_t b = 0; b < es; ++b) v[i * es + b] = static_cast<unsigned char>(b == 0 ? i / 3 : b == 1 ? i / 700 : 0x3F);
  return v;
}

TEST(Hdf5Codecs, Hdf5WritesWeReadWeWriteHdf5Reads) {
#if GT_TEST_ZSTD
  register_reference_zstd();
#endif
  struct Geometry {
    std::uint64_t rows, cols;
    Shape chunk;
  };
  const std::vector<Geometry> shapes = {{37, 29, {8, 5}}, {23, 41, {1, 41}}, {41, 23, {41, 1}}, {100, 70, {16, 12}}};
  int checked = 0;
  for (const Pipeline& p : pipelines()) {
    for (std::size_t es : {1, 2, 4, 8, 16}) {
      for (const Geometry& g : shapes) {
        for (bool random : {false, true}) {
          SCOPED_TRACE(p.name + ", " + std::to_string(es) + "-byte elements, " + std::to_string(g.rows) + "x" +
                       std::to_string(g.cols) + " in chunks of " + to_string(g.chunk) + (random ? ", random" : ", smooth"));
          TempDir dir;
          const auto data = random ? pattern_matrix(g.rows, g.cols, es, 7) : smooth_matrix(g.rows, g.cols, es);
          if (!write_reference(dir / "in.h5", g.rows, g.cols, es, data, g.chunk, p)) {
            if (!(p.name == "szip" && es == 16)) {
              ASSERT_FALSE(p.skip.empty()) << "HDF5 refused the pipeline";
            }
            continue;
          }
          {
          auto src = open_source(dir / "in.h5", {});
          // Read: through our codecs, any tiles.
          EXPECT_EQ(read_tiled(*src, 7, 9), data);
          EXPECT_EQ(read_tiled(*src, g.rows, g.cols), data);
          // Every pipeline here is ours where the build has its codecs
          // (CMake says which); otherwise the library path reads it.
          const bool ours = ours_in_build(p.name);
          const FormatReport rep = src->format_report();
          ASSERT_FALSE(rep.notes.empty());
          EXPECT_NE(rep.notes[0].find(ours ? "direct chunks" : "through the HDF5 library"), std::string::npos) << rep.notes[0];
          // The index was read once (a few chunks: far below the table's cap).
          if (ours && p.name != "unfiltered") {
            EXPECT_NE(rep.notes[0].find("(the index read once)"), std::string::npos) << rep.notes[0];
          }
          // Write: tiles of whole chunks through our codecs, H5Dwrite_chunk.
          {
            auto sink = create_sink(dir / "out.h5", *src, {});
            write_planned(*src, *sink, 3 * g.chunk.rows * g.chunk.cols * es);
            const FormatReport w = sink->format_report();
            ASSERT_FALSE(w.notes.empty());
            EXPECT_NE(w.notes[0].find(ours ? "HDF5 write: direct chunks" : "HDF5 write: through the HDF5 library"),
                      std::string::npos)
                << w.notes[0];
            // Stored by the store thread (the sink's codec threads are the machine's cores, at least 1).
            if (ours && p.name != "unfiltered") {
              EXPECT_NE(w.notes[0].find("in H5Dwrite_chunk on the store thread"), std::string::npos) << w.notes[0];
            }
            sink->commit();
          }
          }  // HDF5 opens a file once per close degree: ours is closed before its own opens
          const Storage in = h5_storage(dir / "in.h5", "/m"), out = h5_storage(dir / "out.h5", "/m");
          EXPECT_EQ(out.filters, in.filters);
          EXPECT_EQ(out.chunk, (std::vector<hsize_t>{g.chunk.cols, g.chunk.rows}));
          // Read back by HDF5's pipeline (the transpose, bit for bit).
          EXPECT_EQ(h5_read_all(dir / "out.h5", "/m"), transposed(data, g.rows, g.cols, es));
          ++checked;
        }
      }
    }
  }
  EXPECT_GE(checked, 8 * 4 * 4 * 2);
}

// Offset and stored size of chunk (i, j), from HDF5.
std::pair<haddr_t, hsize_t> chunk_place(const std::string& path, hsize_t r, hsize_t c) {
  hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  hid_t d = H5Dopen2(f, "/m", H5P_DEFAULT);
  const hsize_t off[2] = {r, c};
  unsigned mask = 0;
  haddr_t addr = 0;
  hsize_t size = 0;
  EXPECT_GE(H5Dget_chunk_info_by_coord(d, off, &mask, &addr, &size), 0);
  H5Dclose(d);
  H5Fclose(f);
  return {addr, size};
}

void damage(const std::string& path, std::uint64_t at, std::size_t len) {
  FILE* f = std::fopen(path.c_str(), "r+b");
  ASSERT_TRUE(f);
  std::fseek(f, long(at), SEEK_SET);
  for (std::size_t k = 0; k < len; ++k) std::fputc(0xA5 ^ int(k), f);
  std::fclose(f);
}

TEST(Hdf5Codecs, DamagedChunkIsAnErrorNamingTheChunk) {
  const std::uint64_t R = 40, C = 30;
  const auto data = smooth_matrix(R, C, 4);
  for (const char* which : {"deflate", "shuffle+deflate+fletcher32", "unfiltered"}) {
    SCOPED_TRACE(which);
    TempDir dir;
    Pipeline p;
    for (const Pipeline& q : pipelines())
      if (q.name == which) p = q;
    ASSERT_TRUE(write_reference(dir / "in.h5", R, C, 4, data, {10, 10}, p));
    const auto [addr, size] = chunk_place(dir / "in.h5", 10, 20);
    if (std::string(which) == "unfiltered") {
      // An unfiltered chunk has no check: only a size that cannot be is damage.
      auto src = open_source(dir / "in.h5", {});
      std::vector<unsigned char> tile(R * C * 4);
      EXPECT_NO_THROW(src->read(0, 0, R, C, tile.data(), C));
      continue;
    }
    damage(dir / "in.h5", addr + size / 3, 8);
    auto src = open_source(dir / "in.h5", {});
    std::vector<unsigned char> tile(R * C * 4);
    Error e = catch_error([&] { src->read(0, 0, R, C, tile.data(), C); });
    EXPECT_EQ(e.kind(), ErrorKind::input);
    const std::string msg = e.what();
    EXPECT_NE(msg.find("cannot decode chunk (1, 2) (rows 10-19, cols 20-29) of dataset /m in"), std::string::npos) << msg;
    EXPECT_NE(msg.find("corrupt data"), std::string::npos) << msg;
    // The chunks around it still read.
    EXPECT_NO_THROW(src->read(0, 0, 10, C, tile.data(), C));
  }
}

}  // namespace
}  // namespace gt::test
