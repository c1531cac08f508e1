// Filter 32015, zstd: each chunk one zstd frame that records its content
// size, at the level in the filter's first value (the HDF Group's H5Zzstd.c;
// a negative level is stored as its unsigned bit pattern).
#include "formats/codecs/codec.hpp"
#if GT_HAVE_ZSTD
#define ZSTD_STATIC_LINKING_ONLY  // the context size estimates
#include <zstd.h>
#endif

namespace gt::codecs {
#if GT_HAVE_ZSTD
namespace {

// A context per thread: zstd's contexts are costly to make and not shareable.
struct Contexts {
  ZSTD_CCtx* c = nullptr;
  ZSTD_DCtx* d = nullptr;
  ~Contexts() {
    ZSTD_freeCCtx(c);
    ZSTD_freeDCtx(d);
  }
};
thread_local Contexts tls;

class Zstd final : public Codec {
 public:
  explicit Zstd(int level) : level_(level) {}
  std::string name() const override { return "zstd(" + std::to_string(level_) + ")"; }
  std::size_t encode_bound(std::size_t n) const override { return ZSTD_compressBound(n); }
  std::size_t state_bytes(std::size_t chunk_bytes) const override {
    return ZSTD_estimateCCtxSize_usingCParams(ZSTD_getCParams(level_, chunk_bytes, 0)) + ZSTD_estimateDCtxSize();
  }
  std::size_t encode(const std::uint8_t* in, std::size_t n, std::uint8_t* out) const override {
    if (!tls.c && !(tls.c = ZSTD_createCCtx())) throw CodecError("zstd: cannot allocate a context");
    const std::size_t r = ZSTD_compressCCtx(tls.c, out, encode_bound(n), in, n, level_);
    return ZSTD_isError(r) ? 0 : r;
  }
  std::size_t decoded_size(const std::uint8_t* in, std::size_t n) const override {
    const unsigned long long s = ZSTD_getFrameContentSize(in, n);
    return s == ZSTD_CONTENTSIZE_ERROR || s == ZSTD_CONTENTSIZE_UNKNOWN ? 0 : std::size_t(s);
  }
  std::size_t decode(const std::uint8_t* in, std::size_t n, std::uint8_t* out, std::size_t cap) const override {
    const unsigned long long size = ZSTD_getFrameContentSize(in, n);
    if (size == ZSTD_CONTENTSIZE_ERROR) throw CodecError("zstd: not a valid zstd frame (corrupt data)");
    if (size == ZSTD_CONTENTSIZE_UNKNOWN) throw CodecError("zstd: the frame does not record its size");
    if (size > cap) throw CodecError("zstd: the frame holds " + std::to_string(size) + " bytes, more than " + std::to_string(cap));
    if (!tls.d && !(tls.d = ZSTD_createDCtx())) throw CodecError("zstd: cannot allocate a context");
    const std::size_t r = ZSTD_decompressDCtx(tls.d, out, cap, in, n);
    if (ZSTD_isError(r)) throw CodecError(std::string("zstd: ") + ZSTD_getErrorName(r) + " (corrupt data)");
    return r;
  }

 private:
  int level_;
};

}  // namespace

std::unique_ptr<Codec> make_zstd(const FilterSpec& f, std::string*) {
  int level = f.values.empty() ? ZSTD_CLEVEL_DEFAULT : int(f.values[0]);
  if (level < ZSTD_minCLevel()) level = ZSTD_minCLevel();
  if (level > ZSTD_maxCLevel()) level = ZSTD_maxCLevel();
  return std::make_unique<Zstd>(level);
}
#else
std::unique_ptr<Codec> make_zstd(const FilterSpec&, std::string* why) { return missing_library(why, "zstd", "libzstd-dev"); }
#endif
}  // namespace gt::codecs
