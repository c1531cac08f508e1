// Filter 1, deflate: a zlib-format stream (header, deflate, Adler-32), as
// HDF5's H5Zdeflate.c writes with compress2() at the dataset's level. Where
// the build found libdeflate, it encodes and decodes (its zlib format is the
// same stream; measured about twice zlib's rate both ways); zlib remains for
// level 0, which libdeflate 1.14 does not take.
#include <zlib.h>

#include <algorithm>

#include "formats/codecs/codec.hpp"
#if GT_HAVE_LIBDEFLATE
#include <libdeflate.h>
#endif

namespace gt::codecs {
namespace {

#if GT_HAVE_LIBDEFLATE
// libdeflate's (de)compressors hold ~1 MiB of tables: one per thread and
// level, kept for the thread's life instead of one per chunk.
struct Compressors {
  libdeflate_compressor* c[10] = {};
  libdeflate_decompressor* d = nullptr;
  ~Compressors() {
    for (auto* p : c)
      if (p) libdeflate_free_compressor(p);
    if (d) libdeflate_free_decompressor(d);
  }
};
thread_local Compressors tls;

libdeflate_compressor* compressor(int level) {
  if (!tls.c[level]) tls.c[level] = libdeflate_alloc_compressor(level);
  if (!tls.c[level]) throw CodecError("deflate: cannot allocate a compressor");
  return tls.c[level];
}
libdeflate_decompressor* decompressor() {
  if (!tls.d) tls.d = libdeflate_alloc_decompressor();
  if (!tls.d) throw CodecError("deflate: cannot allocate a decompressor");
  return tls.d;
}
#endif

class Deflate final : public Codec {
 public:
  explicit Deflate(int level) : level_(level) {}
  std::string name() const override { return "deflate(" + std::to_string(level_) + ")"; }
  // libdeflate's compressor for levels 1-9 holds under 1 MiB of hash
  // tables and its decompressor 32 KiB (sizeof of their structs in 1.14:
  // 0.4-0.9 MiB); zlib's deflate state is 256 KiB at the default memLevel.
  std::size_t state_bytes(std::size_t) const override { return std::size_t(1) << 20; }
  std::size_t encode_bound(std::size_t n) const override {
    std::size_t b = compressBound(uLong(n));
#if GT_HAVE_LIBDEFLATE
    b = std::max(b, libdeflate_zlib_compress_bound(nullptr, n));
#endif
    return b;
  }
  std::size_t encode(const std::uint8_t* in, std::size_t n, std::uint8_t* out) const override {
#if GT_HAVE_LIBDEFLATE
    if (level_ > 0) return libdeflate_zlib_compress(compressor(level_), in, n, out, encode_bound(n));
#endif
    uLongf len = uLongf(encode_bound(n));
    return compress2(out, &len, in, uLong(n), level_) == Z_OK ? std::size_t(len) : 0;
  }
  std::size_t decode(const std::uint8_t* in, std::size_t n, std::uint8_t* out, std::size_t cap) const override {
#if GT_HAVE_LIBDEFLATE
    std::size_t got = 0;
    switch (libdeflate_zlib_decompress(decompressor(), in, n, out, cap, &got)) {
      case LIBDEFLATE_SUCCESS: return got;
      case LIBDEFLATE_INSUFFICIENT_SPACE: throw CodecError("deflate: the data inflates to more than " + std::to_string(cap) + " bytes");
      default: throw CodecError("deflate: not a valid zlib stream (corrupt data)");
    }
#else
    uLongf len = uLongf(cap);
    uLong src_len = uLong(n);
    switch (uncompress2(out, &len, in, &src_len)) {
      case Z_OK: return std::size_t(len);
      case Z_BUF_ERROR:
        if (len == cap) throw CodecError("deflate: the data inflates to more than " + std::to_string(cap) + " bytes");
        throw CodecError("deflate: the stream is truncated (corrupt data)");
      case Z_MEM_ERROR: throw CodecError("deflate: out of memory");
      default: throw CodecError("deflate: not a valid zlib stream (corrupt data)");
    }
#endif
  }

 private:
  int level_;
};

}  // namespace

std::unique_ptr<Codec> make_deflate(const FilterSpec& f, std::string* why) {
  // HDF5 stores the level as the one value (H5Pset_deflate takes 0..9).
  const unsigned level = f.values.empty() ? 6 : f.values[0];
  if (level > 9) {
    if (why) *why = "deflate level " + std::to_string(level) + " is outside 0..9";
    return nullptr;
  }
  return std::make_unique<Deflate>(int(level));
}

}  // namespace gt::codecs
