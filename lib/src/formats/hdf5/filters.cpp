// Our codecs as HDF5 filters, for the ids this HDF5 has neither built in
// nor as a plugin (Debian ships lz4 and blosc plugins, but no zstd one). A
// dataset with such a filter can then be created with its flags as they
// are (HDF5 refuses a mandatory filter it does not know), and the library
// path (a write of part of a chunk) encodes and decodes with the same
// codecs the direct path uses.
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "formats/codecs/codec.hpp"
#include "formats/hdf5/hdf5_internal.hpp"

namespace gt::fmt::h5 {
namespace {

// HDF5's filter callback for filter ID: encodes or decodes *buf (nbytes)
// into a new malloc'd buffer; 0 on failure, as HDF5 expects.
template <unsigned ID>
std::size_t our_filter(unsigned flags, std::size_t nv, const unsigned values[], std::size_t nbytes,
                       std::size_t* buf_size, void** buf) noexcept {
  try {
    const codecs::FilterSpec f{ID, 0, std::vector<unsigned>(values, values + nv)};
    const auto codec = codecs::make_codec(f, nullptr);
    if (!codec) return 0;
    const auto* in = static_cast<const std::uint8_t*>(*buf);
    const bool decode = flags & H5Z_FLAG_REVERSE;
    const std::size_t cap = decode ? codec->decoded_size(in, nbytes) : codec->encode_bound(nbytes);
    if (cap == 0) return 0;
    auto* out = static_cast<std::uint8_t*>(std::malloc(cap));
    if (!out) return 0;
    const std::size_t n = decode ? codec->decode(in, nbytes, out, cap) : codec->encode(in, nbytes, out);
    if (n == 0) {
      std::free(out);
      return 0;
    }
    std::free(*buf);
    *buf = out;
    *buf_size = cap;
    return n;
  } catch (...) {
    return 0;
  }
}

template <unsigned ID>
void register_one(const char* name) {
  const codecs::FilterSpec probe{ID, 0, {0}};
  if (H5Zfilter_avail(ID) > 0 || !codecs::make_codec(probe, nullptr)) return;
  static const H5Z_class2_t cls = {H5Z_CLASS_T_VERS, H5Z_filter_t(ID), 1, 1, name, nullptr, nullptr, our_filter<ID>};
  H5Zregister(&cls);
}

}  // namespace

void register_missing_filters() {
  static std::once_flag once;
  std::call_once(once, [] {
    auto lk = serial();
    quiet();
    register_one<codecs::kZstd>("zstd");
    register_one<codecs::kLz4>("lz4");
    register_one<codecs::kBlosc>("blosc");
    H5Eclear2(H5E_DEFAULT);
  });
}

namespace {

// The registered filters' names (the HDF Group's list), for a file that
// stores none, and where Debian ships each.
struct KnownFilter {
  unsigned id;
  const char* name;
  const char* get;
};
constexpr KnownFilter kKnown[] = {
    {1, "deflate", "an HDF5 built with zlib"},
    {4, "szip", "an HDF5 built with libaec (Debian's is)"},
    {307, "bzip2", "the bzip2 plugin (Debian: hdf5-filter-plugin; pip: hdf5plugin)"},
    {32000, "lzf", "the lzf plugin (pip: hdf5plugin)"},
    {32001, "blosc", "the blosc plugin (Debian: hdf5-filter-plugin-blosc-serial; pip: hdf5plugin)"},
    {32004, "lz4", "the lz4 plugin (Debian: hdf5-filter-plugin; pip: hdf5plugin)"},
    {32008, "bitshuffle", "the bitshuffle plugin (Debian: hdf5-filter-plugin; pip: hdf5plugin)"},
    {32013, "zfp", "the zfp plugin (pip: hdf5plugin)"},
    {32015, "zstd", "the zstd plugin (pip: hdf5plugin)"},
    {32017, "sz", "the SZ plugin (pip: hdf5plugin)"},
    {32026, "blosc2", "the blosc2 plugin (pip: hdf5plugin)"},
};

}  // namespace

std::string missing_filter(hid_t dcpl) {
  register_missing_filters();
  auto lk = serial();
  quiet();
  const int n = H5Pget_nfilters(dcpl);
  for (int i = 0; i < n; ++i) {
    unsigned flags = 0, config = 0;
    std::size_t nv = 0;
    char stored[256] = {};
    const H5Z_filter_t id = H5Pget_filter2(dcpl, unsigned(i), &flags, &nv, nullptr, sizeof stored, stored, &config);
    if (id < 0 || H5Zfilter_avail(id) > 0) continue;
    H5Eclear2(H5E_DEFAULT);
    const KnownFilter* k = nullptr;
    for (const KnownFilter& f : kKnown)
      if (f.id == unsigned(id)) k = &f;
    std::string name = k ? k->name : *stored ? stored : "unregistered";
    for (char& c : name)
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
    return "HDF5 filter " + std::to_string(id) + " (" + name + "), which this HDF5 cannot decode: install " +
           (k ? k->get : std::string("its plugin")) +
           ", or set HDF5_PLUGIN_PATH to the folder that holds it (h5dump -pH names the filters)";
  }
  H5Eclear2(H5E_DEFAULT);
  return "";
}

}  // namespace gt::fmt::h5
