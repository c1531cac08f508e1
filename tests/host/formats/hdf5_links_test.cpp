// Datasets whose data is not stored in the file that was opened: reached
// through an external link, virtual datasets, and external raw storage.
// Their offsets (H5Dget_offset, H5Dget_chunk_info) are not offsets in the
// opened file, so no positioned I/O may use them: reading goes through the
// HDF5 library, and in place is refused with the file left untouched.
#include <gtest/gtest.h>
#include <hdf5.h>

#include <string>
#include <vector>

#include "formats_test_util.hpp"
#include "gtranspose/error.hpp"
#include "gtranspose/format.hpp"
#include "hdf5_test_util.hpp"

namespace gt::test {
namespace {

constexpr std::uint64_t N = 40;

// parent.h5 holds /own (its own data, written first, so the file's first
// data bytes are its) and /ext, an external link to /t in target.h5.
void make_linked(const TempDir& dir, const std::vector<unsigned char>& own, const std::vector<unsigned char>& tgt,
                 const H5Options& target_layout) {
  // Padding datasets first in the target: its /t then lies at an offset that
  // in the parent falls inside /own's data, so a read at the wrong file's
  // offset returns plausible, wrong numbers rather than failing.
  const auto pad = pattern_matrix(N, N, 4, 99);
  h5_write(dir / "target.h5", "/pad", {N, N}, H5T_IEEE_F32LE, pad.data());
  h5_write(dir / "target.h5", "/t", {N, N}, H5T_IEEE_F32LE, tgt.data(), target_layout);
  h5_write(dir / "parent.h5", "/own", {N, 4 * N}, H5T_IEEE_F32LE, own.data());
  hid_t f = H5Fopen((dir / "parent.h5").c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  ASSERT_GE(f, 0);
  ASSERT_GE(H5Lcreate_external("target.h5", "/t", f, "/ext", H5P_DEFAULT, H5P_DEFAULT), 0);
  H5Fclose(f);
}

std::vector<unsigned char> file_bytes(const std::string& path) {
  std::vector<unsigned char> b;
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return b;
  int c;
  while ((c = std::fgetc(f)) != EOF) b.push_back(static_cast<unsigned char>(c));
  std::fclose(f);
  return b;
}

TEST(Hdf5Links, ExternalLinkReadsTheTargetFile) {
  const auto own = pattern_matrix(N, 4 * N, 4, 1);
  const auto tgt = pattern_matrix(N, N, 4, 2);
  const std::vector<std::pair<const char*, H5Options>> layouts = {
      {"contiguous", {}}, {"chunked", {{8, 16}, false, false}}, {"gzip", {{8, 16}, true, true}}};
  for (const auto& [label, layout] : layouts) {
    SCOPED_TRACE(label);
    TempDir dir;
    make_linked(dir, own, tgt, layout);
    auto src = open_source(dir / "parent.h5:/ext", {});
    EXPECT_EQ(read_tiled(*src, 7, 9), tgt);
    EXPECT_EQ(read_tiled(*src, N, N), tgt);
    // The transpose of the target's data, through the whole format path.
    transpose_to(*src, dir / "out.h5");
    EXPECT_EQ(h5_read_all(dir / "out.h5", "/ext"), transposed(tgt, N, N, 4));
  }
}

TEST(Hdf5Links, InPlaceThroughAnExternalLinkIsRefusedAndTouchesNothing) {
  const auto own = pattern_matrix(N, 4 * N, 4, 3);
  const auto tgt = pattern_matrix(N, N, 4, 4);
  for (bool chunked : {false, true}) {
    SCOPED_TRACE(chunked ? "chunked" : "contiguous");
    TempDir dir;
    make_linked(dir, own, tgt, chunked ? H5Options{{8, 8}, false, false} : H5Options{});
    const auto parent_before = file_bytes(dir / "parent.h5");
    const auto target_before = file_bytes(dir / "target.h5");
    Error e = catch_error([&] {
      auto m = open_inplace(dir / "parent.h5:/ext", {});
      write_tiled(*m, transposed(tgt, N, N, 4), N, N, 4, 8, 8);
      m->flush();
    });
    EXPECT_EQ(e.kind(), ErrorKind::input);
    const std::string msg = e.what();
    EXPECT_NE(msg.find("target.h5"), std::string::npos) << msg;
    EXPECT_NE(msg.find("external link"), std::string::npos) << msg;
    EXPECT_NE(msg.find("out of place"), std::string::npos) << msg;
    EXPECT_EQ(file_bytes(dir / "parent.h5"), parent_before);
    EXPECT_EQ(file_bytes(dir / "target.h5"), target_before);
    EXPECT_EQ(h5_read_all(dir / "parent.h5", "/own"), own);
  }
}

// A virtual dataset in the same file, mapping rows of two source datasets.
void make_virtual(const std::string& path, const std::vector<unsigned char>& a, const std::vector<unsigned char>& b) {
  const hsize_t half = N / 2;
  h5_write(path, "/a", {half, N}, H5T_IEEE_F32LE, a.data());
  h5_write(path, "/b", {half, N}, H5T_IEEE_F32LE, b.data());
  hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  const hsize_t dims[2] = {N, N}, sdims[2] = {half, N};
  hid_t vspace = H5Screate_simple(2, dims, nullptr), sspace = H5Screate_simple(2, sdims, nullptr);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  for (int k = 0; k < 2; ++k) {
    const hsize_t start[2] = {hsize_t(k) * half, 0};
    H5Sselect_hyperslab(vspace, H5S_SELECT_SET, start, nullptr, sdims, nullptr);
    ASSERT_GE(H5Pset_virtual(dcpl, vspace, ".", k ? "/b" : "/a", sspace), 0);
  }
  hid_t d = H5Dcreate2(f, "/v", H5T_IEEE_F32LE, vspace, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  ASSERT_GE(d, 0);
  H5Dclose(d);
  H5Pclose(dcpl);
  H5Sclose(vspace);
  H5Sclose(sspace);
  H5Fclose(f);
}

TEST(Hdf5Links, VirtualDatasetReadsThroughTheLibraryAndRefusesInPlace) {
  TempDir dir;
  const auto all = pattern_matrix(N, N, 4, 5);
  const std::vector<unsigned char> a(all.begin(), all.begin() + all.size() / 2), b(all.begin() + all.size() / 2, all.end());
  make_virtual(dir / "v.h5", a, b);
  EXPECT_EQ(read_tiled(*open_source(dir / "v.h5:/v", {}), 7, 9), all);
  const auto before = file_bytes(dir / "v.h5");
  Error e = catch_error([&] { (void)open_inplace(dir / "v.h5:/v", {}); });
  EXPECT_EQ(e.kind(), ErrorKind::input);
  EXPECT_NE(std::string(e.what()).find("virtual dataset"), std::string::npos) << e.what();
  EXPECT_EQ(file_bytes(dir / "v.h5"), before);
}

TEST(Hdf5Links, ExternalStorageReadsThroughTheLibraryAndRefusesInPlace) {
  TempDir dir;
  const auto data = pattern_matrix(N, N, 4, 6);
  const std::string path = dir / "x.h5";
  {
    hid_t f = H5Fcreate(path.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT);
    const hsize_t dims[2] = {N, N};
    hid_t space = H5Screate_simple(2, dims, nullptr);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    // The data lies in x.raw at offset 100, nowhere in x.h5.
    ASSERT_GE(H5Pset_external(dcpl, (dir / "x.raw").c_str(), 100, N * N * 4), 0);
    hid_t d = H5Dcreate2(f, "/x", H5T_IEEE_F32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    ASSERT_GE(d, 0);
    ASSERT_GE(H5Dwrite(d, H5T_IEEE_F32LE, H5S_ALL, H5S_ALL, H5P_DEFAULT, data.data()), 0);
    H5Dclose(d);
    H5Pclose(dcpl);
    H5Sclose(space);
    H5Fclose(f);
  }
  EXPECT_EQ(read_tiled(*open_source(path + ":/x", {}), 7, 9), data);
  const auto before = file_bytes(dir / "x.raw");
  Error e = catch_error([&] { (void)open_inplace(path + ":/x", {}); });
  EXPECT_EQ(e.kind(), ErrorKind::input);
  EXPECT_NE(std::string(e.what()).find("external"), std::string::npos) << e.what();
  EXPECT_EQ(file_bytes(dir / "x.raw"), before);
}

}  // namespace
}  // namespace gt::test
