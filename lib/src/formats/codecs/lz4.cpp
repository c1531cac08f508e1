// Filter 32004, lz4, in the HDF5 lz4 plugin's framing (H5Zlz4.c): the
// original size (8 bytes, big-endian), the block size (4 bytes, big-endian),
// then per block its stored size (4 bytes, big-endian) and the block, which
// is LZ4-compressed unless compressing saved nothing (stored size equal to
// the block's: raw bytes). Values: block size (0: 1 GiB), and optionally an
// encoder setting: 2 and up is LZ4HC at that level, negative an acceleration.
#include <cstring>

#include "formats/codecs/codec.hpp"
#if GT_HAVE_LZ4
#include <lz4.h>
#include <lz4hc.h>
#endif

namespace gt::codecs {
#if GT_HAVE_LZ4
namespace {

void put_be(std::uint8_t* p, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) p[i] = std::uint8_t(v >> (8 * (bytes - 1 - i)));
}
std::uint64_t get_be(const std::uint8_t* p, int bytes) {
  std::uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v = (v << 8) | p[i];
  return v;
}

class Lz4 final : public Codec {
 public:
  Lz4(std::size_t block, int param) : block_(block), param_(param) {}
  std::string name() const override { return param_ >= LZ4HC_CLEVEL_MIN ? "lz4hc(" + std::to_string(param_) + ")" : "lz4"; }
  // LZ4HC allocates its state per call; the fast coder keeps it on the stack.
  std::size_t state_bytes(std::size_t) const override {
    return param_ >= LZ4HC_CLEVEL_MIN ? std::size_t(LZ4_sizeofStateHC()) : 0;
  }
  std::size_t encode_bound(std::size_t n) const override {
    const std::size_t b = block_of(n), blocks = b ? (n + b - 1) / b : 0;
    return 12 + blocks * (4 + std::size_t(LZ4_compressBound(int(b))));
  }
  std::size_t encode(const std::uint8_t* in, std::size_t n, std::uint8_t* out) const override {
    if (n == 0 || n > std::size_t(LZ4_MAX_INPUT_SIZE)) return 0;
    const std::size_t b = block_of(n);
    put_be(out, n, 8);
    put_be(out + 8, b, 4);
    std::size_t pos = 12;
    for (std::size_t off = 0; off < n; off += b) {
      const int len = int(std::min(b, n - off));
      const char* src = reinterpret_cast<const char*>(in + off);
      char* dst = reinterpret_cast<char*>(out + pos + 4);
      const int bound = LZ4_compressBound(len);
      int got = param_ >= LZ4HC_CLEVEL_MIN ? LZ4_compress_HC(src, dst, len, bound, param_)
                                           : LZ4_compress_fast(src, dst, len, bound, param_ < 0 ? 1 - param_ : 1);
      if (got <= 0) return 0;
      if (got >= len) {  // nothing saved: the block goes raw
        std::memcpy(dst, src, std::size_t(len));
        got = len;
      }
      put_be(out + pos, std::uint64_t(got), 4);
      pos += 4 + std::size_t(got);
    }
    return pos;
  }
  std::size_t decoded_size(const std::uint8_t* in, std::size_t n) const override {
    return n < 12 ? 0 : std::size_t(get_be(in, 8));
  }
  std::size_t decode(const std::uint8_t* in, std::size_t n, std::uint8_t* out, std::size_t cap) const override {
    if (n < 12) throw CodecError("lz4: " + std::to_string(n) + " bytes are too few for the header (corrupt data)");
    const std::uint64_t size = get_be(in, 8);
    std::uint64_t b = get_be(in + 8, 4);
    if (size > cap) throw CodecError("lz4: the header claims " + std::to_string(size) + " bytes, more than " + std::to_string(cap));
    if (b > size) b = size;
    if (b == 0 && size) throw CodecError("lz4: a zero block size (corrupt data)");
    std::size_t pos = 12, done = 0;
    while (done < size) {
      const std::size_t len = std::size_t(std::min<std::uint64_t>(b, size - done));
      if (pos + 4 > n) throw CodecError("lz4: the data ends inside a block header (corrupt data)");
      const std::size_t stored = std::size_t(get_be(in + pos, 4));
      pos += 4;
      if (stored > n - pos) throw CodecError("lz4: a block runs past the end of the data (corrupt data)");
      if (stored == len) {
        std::memcpy(out + done, in + pos, len);
      } else {
        const int got = LZ4_decompress_safe(reinterpret_cast<const char*>(in + pos), reinterpret_cast<char*>(out + done),
                                            int(stored), int(len));
        if (got != int(len)) throw CodecError("lz4: a block does not decode to its size (corrupt data)");
      }
      pos += stored;
      done += len;
    }
    return std::size_t(size);
  }

 private:
  std::size_t block_of(std::size_t n) const { return block_ && block_ < n ? block_ : n; }
  std::size_t block_;
  int param_;
};

}  // namespace

std::unique_ptr<Codec> make_lz4(const FilterSpec& f, std::string* why) {
  const std::size_t block = f.values.empty() ? 0 : f.values[0];
  int param = f.values.size() > 1 ? int(f.values[1]) : 0;
  if (param > LZ4HC_CLEVEL_MAX) param = LZ4HC_CLEVEL_MAX;
  if (block > std::size_t(LZ4_MAX_INPUT_SIZE)) {
    if (why) *why = "lz4 block size " + std::to_string(block) + " is larger than LZ4 takes";
    return nullptr;
  }
  return std::make_unique<Lz4>(block, param);
}
#else
std::unique_ptr<Codec> make_lz4(const FilterSpec&, std::string* why) { return missing_library(why, "lz4", "liblz4-dev"); }
#endif
}  // namespace gt::codecs
