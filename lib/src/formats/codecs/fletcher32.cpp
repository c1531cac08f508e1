// Filter 3, Fletcher-32: HDF5's checksum of the (already filtered) bytes,
// appended as four little-endian bytes (H5Zfletcher32.c). The sum is over
// big-endian 16-bit words, an odd last byte as the high byte of a word, in
// runs of 360 words before each reduction (H5_checksum_fletcher32). Reading
// also takes the byte-swapped sum that HDF5 before 1.6.3 wrote on
// little-endian machines, as HDF5 does.
#include <cstring>

#include "formats/codecs/codec.hpp"

namespace gt::codecs {

std::uint32_t fletcher32(const std::uint8_t* data, std::size_t n) {
  std::size_t words = n / 2;
  std::uint32_t s1 = 0, s2 = 0;
  while (words) {
    std::size_t run = words > 360 ? 360 : words;
    words -= run;
    do {
      s1 += (std::uint32_t(data[0]) << 8) | data[1];
      data += 2;
      s2 += s1;
    } while (--run);
    s1 = (s1 & 0xffff) + (s1 >> 16);
    s2 = (s2 & 0xffff) + (s2 >> 16);
  }
  if (n % 2) {
    s1 += std::uint32_t(*data) << 8;
    s2 += s1;
    s1 = (s1 & 0xffff) + (s1 >> 16);
    s2 = (s2 & 0xffff) + (s2 >> 16);
  }
  s1 = (s1 & 0xffff) + (s1 >> 16);
  s2 = (s2 & 0xffff) + (s2 >> 16);
  return (s2 << 16) | s1;
}

namespace {

class Fletcher32 final : public Codec {
 public:
  std::string name() const override { return "fletcher32"; }
  bool in_place() const override { return true; }
  bool compresses() const override { return false; }
  std::size_t encode_bound(std::size_t n) const override { return n + 4; }
  std::size_t encode(const std::uint8_t* in, std::size_t n, std::uint8_t* out) const override {
    const std::uint32_t sum = fletcher32(in, n);
    if (out != in) std::memmove(out, in, n);
    for (int i = 0; i < 4; ++i) out[n + i] = std::uint8_t(sum >> (8 * i));
    return n + 4;
  }
  std::size_t decode(const std::uint8_t* in, std::size_t n, std::uint8_t* out, std::size_t cap) const override {
    if (n < 4) throw CodecError("fletcher32: " + std::to_string(n) + " bytes are too few to hold a checksum");
    const std::size_t len = n - 4;
    if (len > cap) throw CodecError("fletcher32: " + std::to_string(len) + " bytes do not fit " + std::to_string(cap));
    std::uint32_t stored = 0;
    for (int i = 0; i < 4; ++i) stored |= std::uint32_t(in[len + i]) << (8 * i);
    const std::uint32_t sum = fletcher32(in, len);
    // The pre-1.6.3 sum: the bytes of each 16-bit half swapped.
    const std::uint32_t swapped = ((sum & 0x00ff00ffu) << 8) | ((sum >> 8) & 0x00ff00ffu);
    if (stored != sum && stored != swapped) throw CodecError("fletcher32: the checksum does not match (corrupt data)");
    if (out != in) std::memmove(out, in, len);
    return len;
  }
};

}  // namespace

std::unique_ptr<Codec> make_fletcher32(const FilterSpec&, std::string*) { return std::make_unique<Fletcher32>(); }

}  // namespace gt::codecs
