// What the HDF5 tests share (hdf5_test.cpp, hdf5_attributes_test.cpp,
// hdf5_layout_test.cpp): the tests' own reference writer and readers,
// straight from the HDF5 C API, and transposing a source into a new file.
#pragma once
#include <gtest/gtest.h>
#include <hdf5.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "formats_test_util.hpp"
#include "gtranspose/format.hpp"

namespace gt::test {

struct H5Options {
  std::vector<hsize_t> chunk = {};  // empty: contiguous
  bool gzip = false;
  bool shuffle = false;
  hsize_t userblock = 0;
  std::vector<H5Z_filter_t> filters = {};  // registered filters after shuffle and gzip, mandatory
  unsigned gzip_level = 6;
};

// Writes `data` as dataset `name` of a new or existing file; the test's own
// reference writer, straight from the C API.
inline void h5_write(const std::string& path, const std::string& name, const std::vector<hsize_t>& dims, hid_t type,
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
    if (o.gzip) H5Pset_deflate(dcpl, o.gzip_level);
    for (H5Z_filter_t f : o.filters) ASSERT_GE(H5Pset_filter(dcpl, f, H5Z_FLAG_MANDATORY, 0, nullptr), 0) << f;
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

inline std::vector<unsigned char> h5_read_all(const std::string& path, const std::string& name,
                                              hid_t* type_out = nullptr) {
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

inline std::vector<hsize_t> h5_dims(const std::string& path, const std::string& name) {
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
inline void transpose_to(Source& src, const std::string& out, SinkOptions so = {}) {
  const auto& in = src.info();
  auto data = read_tiled(src, 6, 7);
  auto sink = create_sink(out, src, so);
  ASSERT_EQ(sink->info().shape, in.shape.transposed());
  write_tiled(*sink, transposed(data, in.shape.rows, in.shape.cols, in.elem_size), in.shape.cols, in.shape.rows,
              in.elem_size, 7, 4);
  sink->commit();
}

// The storage of a dataset as the HDF5 C API reports it.
struct Storage {
  H5D_layout_t layout = H5D_LAYOUT_ERROR;
  std::vector<hsize_t> chunk;
  std::vector<H5Z_filter_t> filters;
  std::vector<std::vector<unsigned>> values;  // each filter's client data
};

inline Storage h5_storage(const std::string& path, const std::string& name) {
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

}  // namespace gt::test
