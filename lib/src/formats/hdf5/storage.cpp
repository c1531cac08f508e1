// How an HDF5 dataset is stored (chunks, filters), for the report's input
// and output objects (format.hpp: describe_matrix). Read from the file
// itself, after the run, so what the report says is what is on disk. And
// the HDF5 library's version, for --version.
#include <string>
#include <vector>

#include "formats/hdf5/hdf5_internal.hpp"
#include "formats/internal.hpp"

namespace gt::fmt {

namespace h5 {
std::vector<std::string> two_d_datasets(hid_t file);  // find.cpp
}

namespace {

// Stable names for the filters gtranspose knows (HDF5's own names for the
// plugins vary with the plugin's build: "HDF5 lz4 filter; see ..."), so a
// program reading the report can compare them.
std::string filter_label(H5Z_filter_t id, const char* name) {
  switch (id) {
    case H5Z_FILTER_DEFLATE: return "deflate";
    case H5Z_FILTER_SHUFFLE: return "shuffle";
    case H5Z_FILTER_FLETCHER32: return "fletcher32";
    case H5Z_FILTER_SZIP: return "szip";
    case H5Z_FILTER_NBIT: return "nbit";
    case H5Z_FILTER_SCALEOFFSET: return "scaleoffset";
    case 32001: return "blosc";
    case 32004: return "lz4";
    case 32015: return "zstd";
    default: return "filter " + std::to_string(id) + (name && *name ? std::string(" (") + name + ")" : "");
  }
}

}  // namespace

void hdf5_storage(Location& loc, Shape& chunks, std::vector<std::string>& filters) {
  using namespace h5;
  quiet();
  auto lock = serial();
  Hid file = check(H5Fopen(loc.path.c_str(), H5F_ACC_RDONLY, strong_close_fapl().get()), ErrorKind::input,
                   "cannot open " + loc.path);
  Hid dset = open_dataset(file.get(), loc);
  Hid dcpl = check(H5Dget_create_plist(dset.get()), ErrorKind::input, "cannot read the layout of " + loc.dataset);
  hsize_t cd[2] = {0, 0};
  chunks = {0, 0};
  filters.clear();
  if (H5Pget_layout(dcpl.get()) == H5D_CHUNKED && H5Pget_chunk(dcpl.get(), 2, cd) == 2) chunks = {cd[0], cd[1]};
  const int n = std::max(0, H5Pget_nfilters(dcpl.get()));
  for (int i = 0; i < n; ++i) {
    unsigned flags = 0, config = 0;
    std::size_t nv = 0;
    char name[256] = {};
    const H5Z_filter_t id = H5Pget_filter2(dcpl.get(), unsigned(i), &flags, &nv, nullptr, sizeof name, name, &config);
    filters.push_back(id < 0 ? "unknown" : filter_label(id, name));
  }
  H5Eclear2(H5E_DEFAULT);
}

std::vector<std::string> hdf5_matrices(const std::string& path) {
  using namespace h5;
  quiet();
  auto lock = serial();
  Hid file = check(H5Fopen(path.c_str(), H5F_ACC_RDONLY, strong_close_fapl().get()), ErrorKind::input,
                   "cannot open " + path + " as HDF5");
  return two_d_datasets(file.get());
}

std::string hdf5_version() {
  unsigned maj = 0, min = 0, rel = 0;
  if (H5get_libversion(&maj, &min, &rel) < 0) return "unknown";
  return std::to_string(maj) + "." + std::to_string(min) + "." + std::to_string(rel);
}

}  // namespace gt::fmt
