// HDF5 outputs keep the input's datatype and its attributes (every common
// kind, big-endian, larger than 64 KiB), and read back through h5py and
// h5dump, the tools a user reaches for.
#include <gtest/gtest.h>
#include <hdf5.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "formats_test_util.hpp"
#include "gtranspose/format.hpp"
#include "hdf5_test_util.hpp"

namespace gt::test {
namespace {

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

// What h5py and h5dump, the tools a user reaches for, make of our output.
TEST(Hdf5, ReadsBackThroughH5pyAndH5dump) {
  if (!have_python_module("h5py")) GTEST_SKIP() << "/usr/bin/python3 has no h5py: interop not checked";
  TempDir dir;
  ASSERT_EQ(0, run_python(dir,
                          "import h5py, numpy as np, sys\n"
                          "d = sys.argv[1]\n"
                          "a = (np.arange(19 * 13, dtype='<i8') * 2654435761 % 10007).reshape(19, 13)\n"
                          "with h5py.File(d + '/in.h5', 'w') as f:\n"
                          "    x = f.create_dataset('grp/x', data=(a / 7).astype('<f2'), chunks=(4, 4),"
                          " compression='gzip')\n"
                          "    x.attrs['units'] = 'kelvin'\n"
                          "    x.attrs['scale'] = np.float32(0.5)\n"
                          "    x.attrs['list'] = np.arange(5, dtype='>i2')\n"
                          "    f['z'] = (a + 1j * a[::-1]).astype('<c8')\n"
                          "    f['be'] = a.astype('>u4')\n"
                          "np.save(d + '/h.npy', (a / 3).astype('<f2'))\n"));
  for (std::string ds : {"/grp/x", "/z", "/be"}) {
    auto src = open_source(dir / "in.h5:" + ds, {});
    transpose_to(*src, dir / ("out" + std::string(ds == "/grp/x" ? "x" : ds.substr(1)) + ".h5"));
  }
  auto h16 = open_source(dir / "h.npy", {});
  transpose_to(*h16, dir / "h.h5");
  auto z = open_source(dir / "in.h5:/z", {});
  EXPECT_EQ(z->info().dtype, std::optional<DType>(DType::c64));
  transpose_to(*z, dir / "z.npy");
  EXPECT_EQ(0, run_python(dir,
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
                          "assert z.dtype == np.complex64 and (z == i['z'][()].T).all()\n"));
  if (std::system("command -v h5dump >/dev/null 2>&1") == 0) {
    for (std::string f : {"outx.h5", "outz.h5", "outbe.h5", "h.h5"})
      EXPECT_EQ(0, std::system(("h5dump " + (dir / f) + " >/dev/null 2>&1").c_str())) << f;
  }
}

}  // namespace
}  // namespace gt::test
