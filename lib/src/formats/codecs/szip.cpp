// Filter 4, szip (Rice coding), through libaec's szip interface: the
// original size (4 bytes, little-endian), then the szip stream
// (H5Zszip.c). Values: options mask, pixels per block, bits per pixel,
// pixels per scanline, as HDF5's set_local made them for the dataset. A
// chunk szip cannot shrink is not encoded (HDF5 then stores it without the
// filter, szip being optional).
#include "formats/codecs/codec.hpp"
#if GT_HAVE_LIBAEC
extern "C" {  // szlib.h declares its functions without C linkage for C++
#include <szlib.h>
}
#endif

namespace gt::codecs {
#if GT_HAVE_LIBAEC
namespace {

class Szip final : public Codec {
 public:
  explicit Szip(const SZ_com_t& p) : p_(p) {}
  std::string name() const override { return "szip"; }
  std::size_t encode_bound(std::size_t n) const override { return n + 4; }
  // libaec's buffer-to-buffer calls allocate a copy of the pixels they code.
  std::size_t state_bytes(std::size_t chunk_bytes) const override { return chunk_bytes + 4; }
  std::size_t encode(const std::uint8_t* in, std::size_t n, std::uint8_t* out) const override {
    // szip codes whole pixels: the bytes past the last one would be lost
    // (a checksum before szip leaves 4 of them), so such a chunk is stored
    // without szip, as HDF5 stores a chunk an optional filter cannot take.
    if (n > 0xffffffffu || p_.bits_per_pixel <= 0 || (n * 8) % std::size_t(p_.bits_per_pixel) != 0) return 0;
    for (int i = 0; i < 4; ++i) out[i] = std::uint8_t(n >> (8 * i));
    size_t len = n;
    SZ_com_t p = p_;
    if (SZ_BufftoBuffCompress(out + 4, &len, in, n, &p) != SZ_OK || len > n) return 0;
    return len + 4;
  }
  std::size_t decoded_size(const std::uint8_t* in, std::size_t n) const override {
    std::size_t size = 0;
    for (int i = 0; i < 4 && n >= 4; ++i) size |= std::size_t(in[i]) << (8 * i);
    return size;
  }
  std::size_t decode(const std::uint8_t* in, std::size_t n, std::uint8_t* out, std::size_t cap) const override {
    if (n < 4) throw CodecError("szip: " + std::to_string(n) + " bytes are too few for the header (corrupt data)");
    std::size_t size = 0;
    for (int i = 0; i < 4; ++i) size |= std::size_t(in[i]) << (8 * i);
    if (size > cap) throw CodecError("szip: the header claims " + std::to_string(size) + " bytes, more than " + std::to_string(cap));
    size_t len = size;
    SZ_com_t p = p_;
    if (SZ_BufftoBuffDecompress(out, &len, in + 4, n - 4, &p) != SZ_OK || len != size)
      throw CodecError("szip: the stream does not decode (corrupt data)");
    return len;
  }

 private:
  SZ_com_t p_;
};

}  // namespace

std::unique_ptr<Codec> make_szip(const FilterSpec& f, std::string* why) {
  if (f.values.size() < 4) {
    if (why) *why = "szip needs 4 parameters, the dataset gives " + std::to_string(f.values.size());
    return nullptr;
  }
  SZ_com_t p{};
  p.options_mask = int(f.values[0]);
  p.pixels_per_block = int(f.values[1]);
  p.bits_per_pixel = int(f.values[2]);
  p.pixels_per_scanline = int(f.values[3]);
  return std::make_unique<Szip>(p);
}
#else
std::unique_ptr<Codec> make_szip(const FilterSpec&, std::string* why) { return missing_library(why, "szip", "libaec-dev"); }
#endif
}  // namespace gt::codecs
