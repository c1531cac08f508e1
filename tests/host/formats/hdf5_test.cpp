// HDF5 sources, sinks and in-place datasets: contiguous, chunked and
// compressed inputs, every dtype both ways, dataset names and discovery,
// what is not HDF5 or not supported, in place, and more than 2^32 elements.
// Attributes and interop are in hdf5_attributes_test.cpp, output layouts
// and filters in hdf5_layout_test.cpp.
#include <gtest/gtest.h>
#include <hdf5.h>

#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "formats_test_util.hpp"
#include "gtranspose/error.hpp"
#include "gtranspose/format.hpp"
#include "hdf5_test_util.hpp"
#include "testing.hpp"

namespace gt::test {
namespace {

TEST(Hdf5, ContiguousChunkedAndCompressedInputs) {
  TempDir dir;
  const std::uint64_t R = 37, C = 29;
  const auto data = pattern_matrix(R, C, 4, 31);
  const std::vector<std::pair<const char*, H5Options>> layouts = {
      {"contig", {}},
      {"chunked", {{8, 5}, false, false}},
      {"gzip", {{10, 7}, true, true}},
      {"userblock", {{}, false, false, 1024}},
  };
  for (const auto& [label, o] : layouts) {
    SCOPED_TRACE(label);
    const std::string path = dir / (std::string(label) + ".h5");
    h5_write(path, "/m", {R, C}, H5T_IEEE_F32LE, data.data(), o);
    auto src = open_source(path, {});
    EXPECT_EQ(src->info().shape, (Shape{R, C}));
    EXPECT_EQ(src->info().dtype, std::optional<DType>(DType::f32));
    EXPECT_EQ(src->location().dataset, "/m");
    const Shape block = o.chunk.empty() ? Shape{0, 0} : Shape{o.chunk[0], o.chunk[1]};
    EXPECT_EQ(src->preferred_block(), block);
    EXPECT_EQ(read_tiled(*src), data);
    EXPECT_EQ(read_tiled(*src, 100, 100), data);
    EXPECT_EQ(read_tiled(*src, 3, 100), data);
  }
}

TEST(Hdf5, RoundTripEveryDtypeFromMemory) {
  TempDir dir;
  std::uint64_t seed = 40;
  for (DType t : all_dtypes())
    for (ByteOrder order : {ByteOrder::little, ByteOrder::big}) {
      SCOPED_TRACE(std::string(dtype_name(t)) + (order == ByteOrder::big ? " big" : " little"));
      const Shape s{11, 6};
      const std::size_t es = dtype_size(t);
      MemSource mem(info_of(s, t, order), pattern_matrix(s.rows, s.cols, es, seed++));
      const std::string out = dir / (std::string(dtype_name(t)) + (order == ByteOrder::big ? "be" : "le") + ".h5");
      auto sink = create_sink(out, mem, {});
      write_tiled(*sink, transposed(mem.data(), s.rows, s.cols, es), s.cols, s.rows, es);
      sink->commit();
      EXPECT_EQ(h5_dims(out, "/data"), (std::vector<hsize_t>{6, 11}));
      auto back = open_source(out, {});
      EXPECT_EQ(back->location().dataset, "/data");
      EXPECT_EQ(back->info().dtype, std::optional<DType>(t));
      EXPECT_EQ(back->info().order, mem.info().order);
      EXPECT_EQ(read_tiled(*back), transposed(mem.data(), s.rows, s.cols, es));
    }
}

TEST(Hdf5, ShapesAndDatasetNames) {
  TempDir dir;
  const Shape shapes[] = {{1, 1}, {1, 53}, {47, 1}, {41, 43}};
  for (Shape s : shapes) {
    SCOPED_TRACE(to_string(s));
    MemSource mem(info_of(s, DType::u16), pattern_matrix(s.rows, s.cols, 2, s.rows * 7 + s.cols));
    const std::string out = dir / ("s" + to_string(s) + ".h5");
    auto sink = create_sink(out + ":/deep/group/xT", mem, {});
    EXPECT_NE(sink->describe().find("/deep/group/xT"), std::string::npos) << sink->describe();
    write_tiled(*sink, transposed(mem.data(), s.rows, s.cols, 2), s.cols, s.rows, 2);
    sink->commit();
    EXPECT_EQ(h5_read_all(out, "/deep/group/xT"), transposed(mem.data(), s.rows, s.cols, 2));
    // Out of HDF5 into HDF5 keeps the dataset's name unless told otherwise.
    auto src = open_source(out, {});
    transpose_to(*src, dir / "again.h5", {true});
    EXPECT_EQ(h5_read_all(dir / "again.h5", "/deep/group/xT"), mem.data());
  }
}

TEST(Hdf5, DatasetDiscovery) {
  TempDir dir;
  const auto d2 = pattern_matrix(4, 5, 8, 1);
  const std::string one = dir / "one.h5";
  h5_write(one, "/vec", {20}, H5T_STD_I64LE, d2.data());
  h5_write(one, "/g/sub/mat", {4, 5}, H5T_STD_I64LE, d2.data());
  h5_write(one, "/cube", {1, 4, 5}, H5T_STD_I64LE, d2.data());
  auto src = open_source(one, {});
  EXPECT_EQ(src->location().dataset, "/g/sub/mat");
  EXPECT_NE(src->describe().find("/g/sub/mat"), std::string::npos);
  EXPECT_EQ(read_tiled(*src), d2);
  // A name without the leading slash is the same path.
  EXPECT_EQ(open_source(one + ":g/sub/mat", {})->location().dataset, "/g/sub/mat");

  Error e = catch_error([&] { (void)open_source(one + ":/cube", {}); });
  EXPECT_EQ(e.kind(), ErrorKind::input);
  EXPECT_NE(std::string(e.what()).find("is 3-D (shape (1, 4, 5)): gtranspose needs a 2-D matrix"), std::string::npos)
      << e.what();
  e = catch_error([&] { (void)open_source(one + ":/nope", {}); });
  EXPECT_NE(std::string(e.what()).find("has no dataset /nope; its 2-D datasets: /g/sub/mat"), std::string::npos)
      << e.what();
  e = catch_error([&] { (void)open_source(one + ":/g", {}); });
  EXPECT_NE(std::string(e.what()).find("is a group, not a dataset"), std::string::npos) << e.what();

  const std::string many = dir / "many.h5";
  h5_write(many, "/a", {4, 5}, H5T_STD_I64LE, d2.data());
  h5_write(many, "/b", {5, 4}, H5T_STD_I64LE, d2.data());
  h5_write(many, "/g/c", {2, 10}, H5T_STD_I64LE, d2.data());
  h5_write(many, "/v", {20}, H5T_STD_I64LE, d2.data());
  e = catch_error([&] { (void)open_source(many, {}); });
  EXPECT_EQ(e.kind(), ErrorKind::input);
  EXPECT_NE(std::string(e.what()).find("holds 3 2-D datasets (/a, /b, /g/c): name one as " + many + ":/a"),
            std::string::npos)
      << e.what();
  EXPECT_EQ(open_source(many + ":/g/c", {})->info().shape, (Shape{2, 10}));

  const std::string none = dir / "none.h5";
  h5_write(none, "/v", {20}, H5T_STD_I64LE, d2.data());
  e = catch_error([&] { (void)open_source(none, {}); });
  EXPECT_NE(std::string(e.what()).find("holds no 2-D dataset (found /v 1-D)"), std::string::npos) << e.what();
}

TEST(Hdf5, NotHdf5AndMissing) {
  TempDir dir;
  write_file(dir / "fake.h5", std::string("this is not an HDF5 file at all, just text"));
  Error e = catch_error([&] { (void)open_source(dir / "fake.h5", {}); });
  EXPECT_EQ(e.kind(), ErrorKind::input);
  EXPECT_NE(std::string(e.what()).find("is not an HDF5 file"), std::string::npos) << e.what();
  e = catch_error([&] { (void)open_source(dir / "missing.h5:/x", {}); });
  EXPECT_NE(std::string(e.what()).find("No such file"), std::string::npos) << e.what();
}

TEST(Hdf5, UnsupportedElementTypes) {
  TempDir dir;
  const std::string path = dir / "types.h5";
  hid_t vstr = H5Tcopy(H5T_C_S1);
  H5Tset_size(vstr, H5T_VARIABLE);
  h5_write(path, "/vlen", {2, 2}, vstr, nullptr);
  hid_t s3 = H5Tcopy(H5T_C_S1);
  H5Tset_size(s3, 3);
  h5_write(path, "/str3", {2, 2}, s3, nullptr);
  hid_t c12 = H5Tcreate(H5T_COMPOUND, 12);
  H5Tinsert(c12, "a", 0, H5T_NATIVE_INT);
  H5Tinsert(c12, "b", 4, H5T_NATIVE_DOUBLE);
  h5_write(path, "/c12", {2, 2}, c12, nullptr);
  hid_t s8 = H5Tcopy(H5T_C_S1);
  H5Tset_size(s8, 8);
  const std::string words = "abcdefghijklmnopqrstuvwxyz012345";
  h5_write(path, "/str8", {2, 2}, s8, words.data());
  H5Tclose(vstr);
  H5Tclose(s3);
  H5Tclose(c12);
  for (auto [name, why] : {std::pair{"/vlen", "variable-length string"}, {"/str3", "3-byte fixed-length string"},
                           {"/c12", "12-byte compound"}}) {
    Error e = catch_error([&] { (void)open_source(path + ":" + name, {}); });
    EXPECT_EQ(e.kind(), ErrorKind::input);
    EXPECT_NE(std::string(e.what()).find("unsupported element type"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
  }
  // An 8-byte string has no dtype name but still transposes, keeping its type.
  auto src = open_source(path + ":/str8", {});
  EXPECT_FALSE(src->info().dtype.has_value());
  EXPECT_EQ(src->info().elem_size, 8u);
  transpose_to(*src, dir / "s8t.h5");
  hid_t t = -1;
  auto back = h5_read_all(dir / "s8t.h5", "/str8", &t);
  EXPECT_GT(H5Tequal(t, s8), 0);
  EXPECT_EQ(std::string(back.begin(), back.end()), "abcdefghqrstuvwxijklmnopyz012345");
  H5Tclose(t);
  H5Tclose(s8);
  // No NumPy name: .npy output refused, raw fine.
  Error e = catch_error([&] { (void)create_sink(dir / "s8t.npy", *src, {}); });
  EXPECT_EQ(e.kind(), ErrorKind::output);
  EXPECT_NE(std::string(e.what()).find("no NumPy name"), std::string::npos) << e.what();
}

TEST(Hdf5, InPlaceContiguousAndChunked) {
  TempDir dir;
  const std::uint64_t N = 23;
  const auto data = pattern_matrix(N, N, 8, 12);
  for (bool chunked : {false, true}) {
    SCOPED_TRACE(chunked ? "chunked" : "contiguous");
    const std::string path = dir / (chunked ? "c.h5" : "p.h5");
    H5Options o;
    if (chunked) o = {{5, 5}, false, false};
    h5_write(path, "/sq", {N, N}, H5T_IEEE_F64LE, data.data(), o);
    {
      auto m = open_inplace(path, {});
      EXPECT_EQ(read_tiled(*m), data);
      write_tiled(*m, transposed(data, N, N, 8), N, N, 8, 6, 4);
      m->flush();
    }
    EXPECT_EQ(h5_read_all(path, "/sq"), transposed(data, N, N, 8));
  }
  h5_write(dir / "rect.h5", "/r", {3, 4}, H5T_STD_U8LE, data.data());
  Error e = catch_error([&] { (void)open_inplace(dir / "rect.h5", {}); });
  EXPECT_NE(std::string(e.what()).find("in-place needs a square matrix"), std::string::npos) << e.what();
  // Compressed chunks move when rewritten: an interrupted run could not be
  // recovered, so in place is refused and the file left alone.
  h5_write(dir / "gz.h5", "/sq", {N, N}, H5T_IEEE_F64LE, data.data(), {{5, 5}, true, false});
  Error gz = catch_error([&] { (void)open_inplace(dir / "gz.h5", {}); });
  EXPECT_EQ(gz.kind(), ErrorKind::input);
  EXPECT_NE(std::string(gz.what()).find("out of place"), std::string::npos) << gz.what();
  EXPECT_EQ(h5_read_all(dir / "gz.h5", "/sq"), data);
}

TEST(Hdf5, MoreThan2To32ElementsSparse) {
  TempDir dir;
  const Shape s{70000, 70000};
  MemSource tiny(info_of(s, DType::u8), {});
  const std::string out = dir / "big.h5";
  // Unreserved: the file stays sparse, only touched pages cost disk.
  {
    struct Guard {
      Guard() { gt::fmt::set_preallocation_enabled(false); }
      ~Guard() { gt::fmt::set_preallocation_enabled(true); }
    } guard;
    auto sink = create_sink(out, tiny, {});
    const auto block = pattern_matrix(4, 6, 1, 78);
    sink->write(69996, 69994, 4, 6, block.data(), 6);
    sink->commit();
    auto src = open_source(out, {});
    ASSERT_EQ(src->info().shape, s);
    std::vector<unsigned char> back(4 * 9, 0);
    src->read(69996, 69994, 4, 6, back.data(), 9);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(0, std::memcmp(&back[i * 9], &block[i * 6], 6)) << "row " << i;
  }
}

}  // namespace
}  // namespace gt::test
