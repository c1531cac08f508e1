// HDF5 sources, sinks and in-place datasets.
#include <gtest/gtest.h>
#include <hdf5.h>

#include <atomic>
#include <cstring>

#include "formats/plain_io.hpp"
#include "formats_test_util.hpp"
#include "gtranspose/error.hpp"
#include "gtranspose/format.hpp"
#include "gtranspose/tiles.hpp"

namespace gt::test {
namespace {

struct H5Options {
  std::vector<hsize_t> chunk;  // empty: contiguous
  bool gzip = false;
  bool shuffle = false;
  hsize_t userblock = 0;
};

// Writes `data` as dataset `name` of a new or existing file; the test's own
// reference writer, straight from the C API.
void h5_write(const std::string& path, const std::string& name, const std::vector<hsize_t>& dims, hid_t type,
              const void* data, const H5Options& o = {}) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  hid_t file = -1;
  if (::access(path.c_str(), F_OK) == 0) {
    file = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  } else {
    hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);
    if (o.userblock) H5Pset_userblock(fcpl, o.userblock);
    file = H5Fcreate(path.c_str(), H5F_ACC_EXCL, fcpl, H5P_DEFAULT);
    H5Pclose(fcpl);
  }
  ASSERT_GE(file, 0) << path;
  hid_t space = H5Screate_simple(int(dims.size()), dims.data(), nullptr);
  hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
  H5Pset_create_intermediate_group(lcpl, 1);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  if (!o.chunk.empty()) {
    H5Pset_chunk(dcpl, int(o.chunk.size()), o.chunk.data());
    if (o.shuffle) H5Pset_shuffle(dcpl);
    if (o.gzip) H5Pset_deflate(dcpl, 6);
  }
  hid_t d = H5Dcreate2(file, name.c_str(), type, space, lcpl, dcpl, H5P_DEFAULT);
  ASSERT_GE(d, 0) << name;
  if (data) {
    ASSERT_GE(H5Dwrite(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), 0);
  }
  H5Dclose(d);
  H5Pclose(dcpl);
  H5Pclose(lcpl);
  H5Sclose(space);
  H5Fclose(file);
}

std::vector<unsigned char> h5_read_all(const std::string& path, const std::string& name, hid_t* type_out = nullptr) {
  hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  EXPECT_GE(file, 0);
  hid_t d = H5Dopen2(file, name.c_str(), H5P_DEFAULT);
  EXPECT_GE(d, 0) << name;
  hid_t t = H5Dget_type(d);
  hid_t s = H5Dget_space(d);
  std::vector<unsigned char> out(std::size_t(H5Sget_simple_extent_npoints(s)) * H5Tget_size(t));
  EXPECT_GE(H5Dread(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()), 0);
  if (type_out) *type_out = H5Tcopy(t);
  H5Tclose(t);
  H5Sclose(s);
  H5Dclose(d);
  H5Fclose(file);
  return out;
}

std::vector<hsize_t> h5_dims(const std::string& path, const std::string& name) {
  hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  hid_t d = H5Dopen2(file, name.c_str(), H5P_DEFAULT);
  hid_t s = H5Dget_space(d);
  std::vector<hsize_t> dims(std::size_t(std::max(0, H5Sget_simple_extent_ndims(s))));
  H5Sget_simple_extent_dims(s, dims.data(), nullptr);
  H5Sclose(s);
  H5Dclose(d);
  H5Fclose(file);
  return dims;
}

// Transposes `src` into a new file through a sink, tile by tile.
void transpose_to(Source& src, const std::string& out, SinkOptions so = {}) {
  const auto& in = src.info();
  auto data = read_tiled(src, 6, 7);
  auto sink = create_sink(out, src, so);
  ASSERT_EQ(sink->info().shape, in.shape.transposed());
  write_tiled(*sink, transposed(data, in.shape.rows, in.shape.cols, in.elem_size), in.shape.cols, in.shape.rows,
              in.elem_size, 7, 4);
  sink->commit();
}

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

  Error e = catch_error([&] { open_source(one + ":/cube", {}); });
  EXPECT_EQ(e.kind(), ErrorKind::input);
  EXPECT_NE(std::string(e.what()).find("is 3-D (shape (1, 4, 5)): gtranspose needs a 2-D matrix"), std::string::npos)
      << e.what();
  e = catch_error([&] { open_source(one + ":/nope", {}); });
  EXPECT_NE(std::string(e.what()).find("has no dataset /nope; its 2-D datasets: /g/sub/mat"), std::string::npos)
      << e.what();
  e = catch_error([&] { open_source(one + ":/g", {}); });
  EXPECT_NE(std::string(e.what()).find("is a group, not a dataset"), std::string::npos) << e.what();

  const std::string many = dir / "many.h5";
  h5_write(many, "/a", {4, 5}, H5T_STD_I64LE, d2.data());
  h5_write(many, "/b", {5, 4}, H5T_STD_I64LE, d2.data());
  h5_write(many, "/g/c", {2, 10}, H5T_STD_I64LE, d2.data());
  h5_write(many, "/v", {20}, H5T_STD_I64LE, d2.data());
  e = catch_error([&] { open_source(many, {}); });
  EXPECT_EQ(e.kind(), ErrorKind::input);
  EXPECT_NE(std::string(e.what()).find("holds 3 2-D datasets (/a, /b, /g/c): name one as " + many + ":/a"),
            std::string::npos)
      << e.what();
  EXPECT_EQ(open_source(many + ":/g/c", {})->info().shape, (Shape{2, 10}));

  const std::string none = dir / "none.h5";
  h5_write(none, "/v", {20}, H5T_STD_I64LE, d2.data());
  e = catch_error([&] { open_source(none, {}); });
  EXPECT_NE(std::string(e.what()).find("holds no 2-D dataset (found /v 1-D)"), std::string::npos) << e.what();
}

TEST(Hdf5, NotHdf5AndMissing) {
  TempDir dir;
  write_bytes(dir / "fake.h5", std::string("this is not an HDF5 file at all, just text"));
  Error e = catch_error([&] { open_source(dir / "fake.h5", {}); });
  EXPECT_EQ(e.kind(), ErrorKind::input);
  EXPECT_NE(std::string(e.what()).find("is not an HDF5 file"), std::string::npos) << e.what();
  e = catch_error([&] { open_source(dir / "missing.h5:/x", {}); });
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
    Error e = catch_error([&] { open_source(path + ":" + name, {}); });
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
  Error e = catch_error([&] { create_sink(dir / "s8t.npy", *src, {}); });
  EXPECT_EQ(e.kind(), ErrorKind::output);
  EXPECT_NE(std::string(e.what()).find("no NumPy name"), std::string::npos) << e.what();
}

// Attributes of every common kind on a big-endian dataset; the output must
// carry the same type and the same attributes.
TEST(Hdf5, DatatypeAndAttributesPreserved) {
  TempDir dir;
  const std::string in = dir / "attrs.h5";
  const std::uint64_t R = 6, C = 9;
  const auto data = pattern_matrix(R, C, 4, 8);
  h5_write(in, "/grp/x", {R, C}, H5T_STD_I32BE, data.data());
  hid_t file = H5Fopen(in.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  hid_t d = H5Dopen2(file, "/grp/x", H5P_DEFAULT);
  auto add = [&](const char* name, hid_t type, hid_t space, const void* v) {
    hid_t a = H5Acreate2(d, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
    ASSERT_GE(a, 0) << name;
    ASSERT_GE(H5Awrite(a, type, v), 0) << name;
    H5Aclose(a);
  };
  hid_t scalar = H5Screate(H5S_SCALAR);
  hsize_t three = 3;
  hid_t vec3 = H5Screate_simple(1, &three, nullptr);
  const double scale = 0.125;
  add("scale", H5T_IEEE_F64LE, scalar, &scale);
  const std::int16_t triple[3] = {-7, 300, 12345};
  add("triple", H5T_STD_I16BE, vec3, triple);
  hid_t fixed = H5Tcopy(H5T_C_S1);
  H5Tset_size(fixed, 5);
  add("units", fixed, scalar, "m/s^2");
  hid_t vstr = H5Tcopy(H5T_C_S1);
  H5Tset_size(vstr, H5T_VARIABLE);
  const char* note = "a variable-length note";
  add("note", vstr, scalar, &note);
  H5Sclose(scalar);
  H5Sclose(vec3);
  H5Dclose(d);
  H5Fclose(file);

  auto src = open_source(in, {});
  EXPECT_EQ(src->info().order, ByteOrder::big);
  transpose_to(*src, dir / "out.h5");

  hid_t t = -1;
  auto back = h5_read_all(dir / "out.h5", "/grp/x", &t);
  EXPECT_GT(H5Tequal(t, H5T_STD_I32BE), 0);
  H5Tclose(t);
  EXPECT_EQ(back, transposed(data, R, C, 4));
  file = H5Fopen((dir / "out.h5").c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  d = H5Dopen2(file, "/grp/x", H5P_DEFAULT);
  EXPECT_EQ(H5Aget_num_attrs(d), 4);
  double s2 = 0;
  hid_t a = H5Aopen(d, "scale", H5P_DEFAULT);
  H5Aread(a, H5T_NATIVE_DOUBLE, &s2);
  H5Aclose(a);
  EXPECT_EQ(s2, scale);
  std::int16_t tr[3] = {};
  a = H5Aopen(d, "triple", H5P_DEFAULT);
  hid_t at = H5Aget_type(a);
  EXPECT_GT(H5Tequal(at, H5T_STD_I16BE), 0);
  H5Tclose(at);
  H5Aread(a, H5T_STD_I16BE, tr);
  H5Aclose(a);
  EXPECT_EQ(0, std::memcmp(tr, triple, sizeof tr));
  char units[6] = {};
  a = H5Aopen(d, "units", H5P_DEFAULT);
  H5Aread(a, fixed, units);
  H5Aclose(a);
  EXPECT_STREQ(units, "m/s^2");
  char* got = nullptr;
  a = H5Aopen(d, "note", H5P_DEFAULT);
  at = H5Aget_type(a);
  EXPECT_GT(H5Tis_variable_str(at), 0);
  H5Tclose(at);
  H5Aread(a, vstr, &got);
  H5Aclose(a);
  ASSERT_NE(got, nullptr);
  EXPECT_STREQ(got, note);
  H5free_memory(got);
  H5Dclose(d);
  H5Fclose(file);
  H5Tclose(fixed);
  H5Tclose(vstr);
}

// An attribute over 64 KiB exists only in the dense storage of the 1.8 file
// format; the output must be able to hold it (and a failure while copying
// attributes must come back as an exception, not unwind through HDF5).
TEST(Hdf5, AttributeLargerThan64KiBIsCopied) {
  TempDir dir;
  const std::string in = dir / "big.h5";
  const std::uint64_t R = 5, C = 3;
  const auto data = pattern_matrix(R, C, 8, 4);
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST);
  hid_t file = H5Fcreate(in.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, fapl);
  ASSERT_GE(file, 0);
  H5Pclose(fapl);
  hsize_t dims[2] = {R, C};
  hid_t space = H5Screate_simple(2, dims, nullptr);
  hid_t d = H5Dcreate2(file, "/x", H5T_IEEE_F64LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  ASSERT_GE(H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, data.data()), 0);
  std::vector<double> big(40000);
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = double(i) * 0.5 + 1;
  hsize_t n = big.size();
  hid_t aspace = H5Screate_simple(1, &n, nullptr);
  hid_t a = H5Acreate2(d, "big", H5T_IEEE_F64LE, aspace, H5P_DEFAULT, H5P_DEFAULT);
  ASSERT_GE(a, 0);
  ASSERT_GE(H5Awrite(a, H5T_NATIVE_DOUBLE, big.data()), 0);
  H5Aclose(a);
  H5Sclose(aspace);
  H5Dclose(d);
  H5Sclose(space);
  H5Fclose(file);

  auto src = open_source(in, {});
  transpose_to(*src, dir / "out.h5");
  EXPECT_EQ(h5_read_all(dir / "out.h5", "/x"), transposed(data, R, C, 8));
  hid_t f2 = H5Fopen((dir / "out.h5").c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  hid_t a2 = H5Aopen_by_name(f2, "/x", "big", H5P_DEFAULT, H5P_DEFAULT);
  ASSERT_GE(a2, 0);
  std::vector<double> back(big.size());
  ASSERT_GE(H5Aread(a2, H5T_NATIVE_DOUBLE, back.data()), 0);
  EXPECT_EQ(back, big);
  H5Aclose(a2);
  H5Fclose(f2);
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
  Error e = catch_error([&] { open_inplace(dir / "rect.h5", {}); });
  EXPECT_NE(std::string(e.what()).find("in-place needs a square matrix"), std::string::npos) << e.what();
  // Compressed chunks move when rewritten: an interrupted run could not be
  // recovered, so in place is refused and the file left alone.
  h5_write(dir / "gz.h5", "/sq", {N, N}, H5T_IEEE_F64LE, data.data(), {{5, 5}, true, false});
  Error gz = catch_error([&] { open_inplace(dir / "gz.h5", {}); });
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

// What h5py and h5dump, the tools a user reaches for, make of our output.
TEST(Hdf5, ReadsBackThroughH5pyAndH5dump) {
  if (!have_python_module("h5py")) GTEST_SKIP() << "/usr/bin/python3 has no h5py: interop not checked";
  TempDir dir;
  const std::string script = dir / "mk.py";
  write_bytes(script,
              "import h5py, numpy as np, sys\n"
              "d = sys.argv[1]\n"
              "a = (np.arange(19 * 13, dtype='<i8') * 2654435761 % 10007).reshape(19, 13)\n"
              "with h5py.File(d + '/in.h5', 'w') as f:\n"
              "    x = f.create_dataset('grp/x', data=(a / 7).astype('<f2'), chunks=(4, 4), compression='gzip')\n"
              "    x.attrs['units'] = 'kelvin'\n"
              "    x.attrs['scale'] = np.float32(0.5)\n"
              "    x.attrs['list'] = np.arange(5, dtype='>i2')\n"
              "    f['z'] = (a + 1j * a[::-1]).astype('<c8')\n"
              "    f['be'] = a.astype('>u4')\n"
              "np.save(d + '/h.npy', (a / 3).astype('<f2'))\n");
  ASSERT_EQ(0, std::system(("/usr/bin/python3 " + script + " " + dir.path()).c_str()));
  for (std::string ds : {"/grp/x", "/z", "/be"}) {
    auto src = open_source(dir / "in.h5:" + ds, {});
    transpose_to(*src, dir / ("out" + std::string(ds == "/grp/x" ? "x" : ds.substr(1)) + ".h5"));
  }
  auto h16 = open_source(dir / "h.npy", {});
  transpose_to(*h16, dir / "h.h5");
  auto z = open_source(dir / "in.h5:/z", {});
  EXPECT_EQ(z->info().dtype, std::optional<DType>(DType::c64));
  transpose_to(*z, dir / "z.npy");
  write_bytes(script,
              "import h5py, numpy as np, sys\n"
              "d = sys.argv[1]\n"
              "i = h5py.File(d + '/in.h5', 'r')\n"
              "for name, out in (('grp/x', 'outx'), ('z', 'outz'), ('be', 'outbe')):\n"
              "    with h5py.File(d + '/' + out + '.h5', 'r') as f:\n"
              "        t, a = f[name], i[name]\n"
              "        assert t.dtype == a.dtype, (name, t.dtype, a.dtype)\n"
              "        assert t.shape == a.shape[::-1]\n"
              "        assert (t[()] == a[()].T).all(), name\n"
              "        assert sorted(t.attrs.keys()) == sorted(a.attrs.keys()), name\n"
              "        for k in a.attrs: assert np.array_equal(t.attrs[k], a.attrs[k]), k\n"
              "        assert t.attrs.get('units', 'kelvin') == 'kelvin'\n"
              "h = np.load(d + '/h.npy')\n"
              "with h5py.File(d + '/h.h5', 'r') as f:\n"
              "    assert f['data'].dtype == np.float16, f['data'].dtype\n"
              "    assert (f['data'][()] == h.T).all()\n"
              "z = np.load(d + '/z.npy')\n"
              "assert z.dtype == np.complex64 and (z == i['z'][()].T).all()\n");
  EXPECT_EQ(0, std::system(("/usr/bin/python3 " + script + " " + dir.path()).c_str()));
  if (std::system("command -v h5dump >/dev/null 2>&1") == 0) {
    for (std::string f : {"outx.h5", "outz.h5", "outbe.h5", "h.h5"})
      EXPECT_EQ(0, std::system(("h5dump " + (dir / f) + " >/dev/null 2>&1").c_str())) << f;
  }
}

// --- output layout: chunked inputs give chunked outputs -------------------------

// The storage of a dataset as the HDF5 C API reports it.
struct Storage {
  H5D_layout_t layout = H5D_LAYOUT_ERROR;
  std::vector<hsize_t> chunk;
  std::vector<H5Z_filter_t> filters;
  std::vector<std::vector<unsigned>> values;  // each filter's client data
};

Storage h5_storage(const std::string& path, const std::string& name) {
  Storage st;
  hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  EXPECT_GE(file, 0) << path;
  hid_t d = H5Dopen2(file, name.c_str(), H5P_DEFAULT);
  EXPECT_GE(d, 0) << name;
  hid_t dcpl = H5Dget_create_plist(d);
  st.layout = H5Pget_layout(dcpl);
  if (st.layout == H5D_CHUNKED) {
    st.chunk.resize(2);
    EXPECT_EQ(H5Pget_chunk(dcpl, 2, st.chunk.data()), 2);
  }
  for (int i = 0; i < H5Pget_nfilters(dcpl); ++i) {
    unsigned flags = 0, config = 0, v[8] = {};
    std::size_t n = 8;
    st.filters.push_back(H5Pget_filter2(dcpl, unsigned(i), &flags, &n, v, 0, nullptr, &config));
    st.values.emplace_back(v, v + std::min<std::size_t>(n, 8));
  }
  H5Pclose(dcpl);
  H5Dclose(d);
  H5Fclose(file);
  return st;
}

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

// Writes the transpose of `src` through `sink` in the tiles a plan for
// `src` gives (rounded to its chunks), in output order as the streaming
// engine visits them.
void write_planned(Source& src, Sink& sink, std::uint64_t tile_bytes) {
  const auto& in = src.info();
  const std::size_t es = in.elem_size;
  GridRequest req;
  req.shape = in.shape;
  req.elem_size = es;
  req.tile_bytes = tile_bytes;
  req.preferred_block = src.preferred_block();
  const TileGrid plan(req);
  for (std::uint64_t k = 0; k < plan.count(); ++k) {
    const Tile t = plan.tile_output_order(k);
    std::vector<unsigned char> a(t.h * t.w * es);
    src.read(t.r0, t.c0, t.h, t.w, a.data(), t.w);
    const auto b = transposed(a, t.h, t.w, es);
    sink.write(t.c0, t.r0, t.w, t.h, b.data(), t.h);
  }
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
      EXPECT_FALSE(sink->concurrent_writes());  // H5Dwrite: one thread at a time
      EXPECT_EQ(sink->reserved_bytes(), 12u * 16 * 4 * 2);  // one chunk, and its compressed copy
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
    EXPECT_EQ(sink->reserved_bytes(), 4u * 50 * 8);  // no filter: no compressed copy
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
  EXPECT_FALSE(open_inplace(dir / "sq.h5:/b", {})->concurrent_io());
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
  {
    hid_t file = H5Fcreate((dir / "in.h5").c_str(), H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT);
    hsize_t dims[2] = {R, C}, chunk[2] = {16, 12};
    hid_t space = H5Screate_simple(2, dims, nullptr);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 2, chunk);
    ASSERT_GE(H5Pset_filter(dcpl, kId, H5Z_FLAG_MANDATORY, 0, nullptr), 0);
    hid_t d = H5Dcreate2(file, "/m", H5T_STD_U16LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    ASSERT_GE(d, 0);
    ASSERT_GE(H5Dwrite(d, H5T_STD_U16LE, H5S_ALL, H5S_ALL, H5P_DEFAULT, data.data()), 0);
    H5Dclose(d);
    H5Pclose(dcpl);
    H5Sclose(space);
    H5Fclose(file);
  }
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
        GridRequest req;
        req.shape = {R, C};
        req.elem_size = 2;
        req.tile_bytes = 48 * 48 * 2;
        req.preferred_block = src->preferred_block();
        const TileGrid plan(req);
        ASSERT_EQ(plan.tile_h() % 16, 0u);
        ASSERT_EQ(plan.tile_w() % 12, 0u);
        g_encodes = 0;
        g_decodes = 0;
        for (std::uint64_t k = 0; k < plan.count(); ++k) {
          const Tile t = plan.tile_output_order(k);
          std::vector<unsigned char> a(t.h * t.w * 2);
          mem->read(t.r0, t.c0, t.h, t.w, a.data(), t.w);
          const auto b = transposed(a, t.h, t.w, 2);
          sink->write(t.c0, t.r0, t.w, t.h, b.data(), t.h);
        }
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
  {
    hid_t file = H5Fcreate((dir / "in.h5").c_str(), H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT);
    hsize_t dims[2] = {R, C}, chunk[2] = {32, 8};
    hid_t space = H5Screate_simple(2, dims, nullptr);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 2, chunk);
    ASSERT_GE(H5Pset_filter(dcpl, kId, H5Z_FLAG_MANDATORY, 0, nullptr), 0);
    hid_t d = H5Dcreate2(file, "/m", H5T_STD_U8LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    ASSERT_GE(d, 0);
    ASSERT_GE(H5Dwrite(d, H5T_STD_U8LE, H5S_ALL, H5S_ALL, H5P_DEFAULT, data.data()), 0);
    H5Dclose(d);
    H5Pclose(dcpl);
    H5Sclose(space);
    H5Fclose(file);
  }
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
    hid_t file = H5Fcreate((dir / "in.h5").c_str(), H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT);
    hsize_t dims[2] = {R, C}, chunk[2] = {5, 6};
    hid_t space = H5Screate_simple(2, dims, nullptr);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 2, chunk);
    H5Pset_deflate(dcpl, 1);
    ASSERT_GE(H5Pset_filter(dcpl, kId, H5Z_FLAG_MANDATORY, 0, nullptr), 0);
    hid_t d = H5Dcreate2(file, "/m", H5T_STD_I32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    ASSERT_GE(d, 0);
    ASSERT_GE(H5Dwrite(d, H5T_STD_I32LE, H5S_ALL, H5S_ALL, H5P_DEFAULT, data.data()), 0);
    H5Dclose(d);
    H5Pclose(dcpl);
    H5Sclose(space);
    H5Fclose(file);
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
