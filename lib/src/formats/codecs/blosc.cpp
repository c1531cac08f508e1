// Filter 32001, blosc (c-blosc 1), as the blosc HDF5 filter stores it: each
// chunk one blosc buffer. Values: filter revision, blosc format version,
// element size, chunk bytes, level, shuffle (0 none, 1 byte, 2 bit), and
// the compressor's code (blosclz, lz4, lz4hc, snappy, zlib, zstd). The
// *_ctx calls keep each thread's state its own (blosc's global functions
// share one).
#include "formats/codecs/codec.hpp"
#if GT_HAVE_BLOSC
#include <blosc.h>
#endif

namespace gt::codecs {
#if GT_HAVE_BLOSC
namespace {

class Blosc final : public Codec {
 public:
  Blosc(std::size_t typesize, int level, int shuffle, std::string compressor)
      : typesize_(typesize), level_(level), shuffle_(shuffle), compressor_(std::move(compressor)) {}
  std::string name() const override { return "blosc(" + compressor_ + "," + std::to_string(level_) + ")"; }
  std::size_t encode_bound(std::size_t n) const override { return n + BLOSC_MAX_OVERHEAD; }
  // A blosc context allocates temporaries of a few blocks, a block at most
  // the chunk: the chunk bounds them.
  std::size_t state_bytes(std::size_t chunk_bytes) const override { return chunk_bytes; }
  std::size_t encode(const std::uint8_t* in, std::size_t n, std::uint8_t* out) const override {
    const int r = blosc_compress_ctx(level_, shuffle_, typesize_, n, in, out, encode_bound(n), compressor_.c_str(), 0, 1);
    return r > 0 ? std::size_t(r) : 0;
  }
  std::size_t decoded_size(const std::uint8_t* in, std::size_t n) const override {
    std::size_t size = 0;
    return n >= BLOSC_MIN_HEADER_LENGTH && blosc_cbuffer_validate(in, n, &size) == 0 ? size : 0;
  }
  std::size_t decode(const std::uint8_t* in, std::size_t n, std::uint8_t* out, std::size_t cap) const override {
    std::size_t size = 0;
    if (n < BLOSC_MIN_HEADER_LENGTH || blosc_cbuffer_validate(in, n, &size) != 0)
      throw CodecError("blosc: not a valid blosc buffer (corrupt data)");
    if (size > cap) throw CodecError("blosc: the buffer holds " + std::to_string(size) + " bytes, more than " + std::to_string(cap));
    const int r = blosc_decompress_ctx(in, out, cap, 1);
    if (r < 0 || std::size_t(r) != size) throw CodecError("blosc: the buffer does not decode (corrupt data)");
    return size;
  }

 private:
  std::size_t typesize_;
  int level_, shuffle_;
  std::string compressor_;
};

}  // namespace

std::unique_ptr<Codec> make_blosc(const FilterSpec& f, std::string* why) {
  const auto& v = f.values;
  const std::size_t typesize = v.size() > 2 && v[2] ? v[2] : 1;
  const int level = v.size() > 4 ? int(v[4]) : 5, shuffle = v.size() > 5 ? int(v[5]) : 1;
  const char* compressor = "blosclz";
  if (v.size() > 6 && blosc_compcode_to_compname(int(v[6]), &compressor) < 0) {
    if (why) *why = "blosc compressor " + std::to_string(v[6]) + " is not in this blosc (" + blosc_list_compressors() + ")";
    return nullptr;
  }
  return std::make_unique<Blosc>(typesize, level, shuffle, compressor);
}
#else
std::unique_ptr<Codec> make_blosc(const FilterSpec&, std::string* why) { return missing_library(why, "blosc", "libblosc-dev"); }
#endif
}  // namespace gt::codecs
