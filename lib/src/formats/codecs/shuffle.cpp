// Filter 2, shuffle: byte k of every element together (H5Zshuffle.c), so a
// compressor sees the slowly varying high bytes in one run. The element
// size is the filter's one value; bytes past the last whole element stay
// where they are, and 1-byte elements or a single element are left alone.
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

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

#if defined(__SSE2__)
// 4-byte elements (f32, i32: the common case), 16 at a time in SSE2
// registers: three rounds of byte interleaves gather each byte plane, one of
// 64-bit halves joins them; the inverse interleaves planes by bytes, then by
// 16-bit pairs. A byte loop (shuffle_fixed) cost as much CPU as lz4 itself.
void shuffle4(const std::uint8_t* in, std::size_t n, std::uint8_t* out, bool forward) {
  const std::size_t blocks = n / 16;
  for (std::size_t k = 0; k < blocks; ++k) {
    const std::size_t i = k * 16;
    if (forward) {
      const auto* src = reinterpret_cast<const __m128i*>(in + i * 4);
      const __m128i a0 = _mm_loadu_si128(src), a1 = _mm_loadu_si128(src + 1);
      const __m128i a2 = _mm_loadu_si128(src + 2), a3 = _mm_loadu_si128(src + 3);
      const __m128i t0 = _mm_unpacklo_epi8(a0, a1), t1 = _mm_unpackhi_epi8(a0, a1);
      const __m128i t2 = _mm_unpacklo_epi8(a2, a3), t3 = _mm_unpackhi_epi8(a2, a3);
      const __m128i u0 = _mm_unpacklo_epi8(t0, t1), u1 = _mm_unpackhi_epi8(t0, t1);
      const __m128i u2 = _mm_unpacklo_epi8(t2, t3), u3 = _mm_unpackhi_epi8(t2, t3);
      const __m128i v0 = _mm_unpacklo_epi8(u0, u1), v1 = _mm_unpackhi_epi8(u0, u1);
      const __m128i v2 = _mm_unpacklo_epi8(u2, u3), v3 = _mm_unpackhi_epi8(u2, u3);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), _mm_unpacklo_epi64(v0, v2));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + n + i), _mm_unpackhi_epi64(v0, v2));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 2 * n + i), _mm_unpacklo_epi64(v1, v3));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 3 * n + i), _mm_unpackhi_epi64(v1, v3));
    } else {
      const __m128i p0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i));
      const __m128i p1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + n + i));
      const __m128i p2 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + 2 * n + i));
      const __m128i p3 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + 3 * n + i));
      const __m128i x0 = _mm_unpacklo_epi8(p0, p1), x1 = _mm_unpackhi_epi8(p0, p1);
      const __m128i x2 = _mm_unpacklo_epi8(p2, p3), x3 = _mm_unpackhi_epi8(p2, p3);
      auto* dst = reinterpret_cast<__m128i*>(out + i * 4);
      _mm_storeu_si128(dst, _mm_unpacklo_epi16(x0, x2));
      _mm_storeu_si128(dst + 1, _mm_unpackhi_epi16(x0, x2));
      _mm_storeu_si128(dst + 2, _mm_unpacklo_epi16(x1, x3));
      _mm_storeu_si128(dst + 3, _mm_unpackhi_epi16(x1, x3));
    }
  }
  // The last n % 16 elements, byte by byte.
  for (std::size_t b = 0; b < 4; ++b)
    for (std::size_t i = blocks * 16; i < n; ++i) {
      if (forward) out[b * n + i] = in[i * 4 + b];
      else out[i * 4 + b] = in[b * n + i];
    }
}
#else
void shuffle4(const std::uint8_t* in, std::size_t n, std::uint8_t* out, bool forward) {
  shuffle_fixed<4>(in, n, out, forward);
}
#endif

void shuffle_any(const std::uint8_t* in, std::size_t n, std::size_t es, std::uint8_t* out, bool forward) {
  switch (es) {
    case 2: return shuffle_fixed<2>(in, n, out, forward);
    case 4: return shuffle4(in, n, out, forward);
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
  bool compresses() const override { return false; }
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
