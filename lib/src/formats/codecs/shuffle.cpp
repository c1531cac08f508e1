// Filter 2, shuffle: byte k of every element together (H5Zshuffle.c), so a
// compressor sees the slowly varying high bytes in one run. The element
// size is the filter's one value; bytes past the last whole element stay
// where they are, and 1-byte elements or a single element are left alone.
#include <cstring>

#include "formats/codecs/codec.hpp"

namespace gt::codecs {
namespace {

// Byte b of element i lives at i*es + b unshuffled and at b*n + i shuffled.
template <std::size_t ES>
void shuffle_fixed(const std::uint8_t* in, std::size_t n, std::uint8_t* out, bool forward) {
  for (std::size_t b = 0; b < ES; ++b) {
    std::uint8_t* plane = out + b * n;
    const std::uint8_t* src = in + b * n;
    if (forward)
      for (std::size_t i = 0; i < n; ++i) plane[i] = in[i * ES + b];
    else
      for (std::size_t i = 0; i < n; ++i) out[i * ES + b] = src[i];
  }
}

void shuffle_any(const std::uint8_t* in, std::size_t n, std::size_t es, std::uint8_t* out, bool forward) {
  switch (es) {
    case 2: return shuffle_fixed<2>(in, n, out, forward);
    case 4: return shuffle_fixed<4>(in, n, out, forward);
    case 8: return shuffle_fixed<8>(in, n, out, forward);
    case 16: return shuffle_fixed<16>(in, n, out, forward);
    default:
      for (std::size_t b = 0; b < es; ++b)
        for (std::size_t i = 0; i < n; ++i) {
          if (forward) out[b * n + i] = in[i * es + b];
          else out[i * es + b] = in[b * n + i];
        }
  }
}

class Shuffle final : public Codec {
 public:
  explicit Shuffle(std::size_t es) : es_(es) {}
  std::string name() const override { return "shuffle"; }
  std::size_t encode_bound(std::size_t n) const override { return n; }
  std::size_t encode(const std::uint8_t* in, std::size_t n, std::uint8_t* out) const override {
    run(in, n, out, true);
    return n;
  }
  std::size_t decode(const std::uint8_t* in, std::size_t n, std::uint8_t* out, std::size_t cap) const override {
    if (n > cap) throw CodecError("shuffle: " + std::to_string(n) + " bytes do not fit the chunk's " + std::to_string(cap));
    run(in, n, out, false);
    return n;
  }

 private:
  void run(const std::uint8_t* in, std::size_t n, std::uint8_t* out, bool forward) const {
    const std::size_t elems = n / es_;
    if (es_ <= 1 || elems <= 1) {
      std::memcpy(out, in, n);
      return;
    }
    shuffle_any(in, elems, es_, out, forward);
    const std::size_t tail = n - elems * es_;
    if (tail) std::memcpy(out + elems * es_, in + elems * es_, tail);
  }
  std::size_t es_;
};

}  // namespace

std::unique_ptr<Codec> make_shuffle(const FilterSpec& f, std::string* why) {
  if (f.values.empty() || f.values[0] == 0) {
    if (why) *why = "shuffle without its element size";
    return nullptr;
  }
  return std::make_unique<Shuffle>(f.values[0]);
}

}  // namespace gt::codecs
