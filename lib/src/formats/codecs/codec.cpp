// The codec registry: which filter id is which codec, and what this build has.
#include "formats/codecs/codec.hpp"

namespace gt::codecs {

std::unique_ptr<Codec> make_codec(const FilterSpec& f, std::string* why) {
  switch (f.id) {
    case kDeflate: return make_deflate(f, why);
    case kShuffle: return make_shuffle(f, why);
    case kFletcher32: return make_fletcher32(f, why);
    case kSzip: return make_szip(f, why);
    case kBlosc: return make_blosc(f, why);
    case kLz4: return make_lz4(f, why);
    case kZstd: return make_zstd(f, why);
    default:
      if (why) *why = "filter " + std::to_string(f.id) + " is not one of gtranspose's codecs";
      return nullptr;
  }
}

std::unique_ptr<Codec> missing_library(std::string* why, const char* codec, const char* package) {
  if (why) *why = std::string(codec) + ": this build has none (install " + package + " and rebuild)";
  return nullptr;
}

std::string available_codecs() {
  std::string s = "deflate (" + std::string(GT_HAVE_LIBDEFLATE ? "libdeflate" : "zlib") + "), shuffle, fletcher32";
  if (GT_HAVE_LIBAEC) s += ", szip (libaec)";
  if (GT_HAVE_BLOSC) s += ", blosc";
  if (GT_HAVE_LZ4) s += ", lz4";
  if (GT_HAVE_ZSTD) s += ", zstd";
  return s;
}

}  // namespace gt::codecs
