// What host tests compare against: the reference transpose (two loops, one
// memcpy per element, nothing of the library's), matrices of the position
// pattern (gtranspose/pattern.hpp) and of seeded random bytes, and where two
// buffers first differ.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gtranspose/pattern.hpp"
#include "gtranspose/types.hpp"

namespace gt::test {

using Bytes = std::vector<unsigned char>;

// n bytes of seeded random data (never zeros, never a pattern a bug could mirror).
// A --dtype of each element size (1, 2, 4, 8, 16 bytes), for files whose
// header needs a type name.
inline DType dtype_for(std::size_t es) {
  switch (es) {
    case 1: return DType::u8;
    case 2: return DType::f16;
    case 4: return DType::f32;
    case 8: return DType::f64;
    default: return DType::c128;
  }
}

inline Bytes random_bytes(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  Bytes b(n);
  for (std::size_t i = 0; i < n; i += 8) {
    const std::uint64_t v = rng();
    std::memcpy(b.data() + i, &v, std::min<std::size_t>(8, n - i));
  }
  return b;
}

// rows x cols elements of es bytes, row-major: element (r, c) is pattern(r, c).
inline Bytes pattern_matrix(std::uint64_t rows, std::uint64_t cols, std::size_t es, std::uint64_t seed) {
  Bytes m(rows * cols * es);
  for (std::uint64_t r = 0; r < rows; ++r)
    for (std::uint64_t c = 0; c < cols; ++c) pattern_bytes(r, c, seed, es, &m[(r * cols + c) * es]);
  return m;
}

// The reference: element (i, j) of in (rows x cols, leading dimension ld_in)
// to (j, i) of out (cols x rows, ld_out); out's padding is left alone.
inline void reference_transpose(const void* in, std::uint64_t rows, std::uint64_t cols, std::uint64_t ld_in, void* out,
                                std::uint64_t ld_out, std::size_t es) {
  const auto* i8 = static_cast<const unsigned char*>(in);
  auto* o8 = static_cast<unsigned char*>(out);
  for (std::uint64_t i = 0; i < rows; ++i)
    for (std::uint64_t j = 0; j < cols; ++j) std::memcpy(o8 + (j * ld_out + i) * es, i8 + (i * ld_in + j) * es, es);
}

// The transpose of a packed rows x cols matrix.
inline Bytes transposed(const Bytes& m, std::uint64_t rows, std::uint64_t cols, std::size_t es) {
  Bytes t(m.size());
  reference_transpose(m.data(), rows, cols, cols, t.data(), rows, es);
  return t;
}

// "" when the n bytes are equal, else where the first difference is in a
// buffer of es-byte elements with leading dimension ld.
inline std::string first_difference(const unsigned char* got, const unsigned char* want, std::size_t n, std::size_t es,
                                    std::uint64_t ld) {
  for (std::size_t k = 0; k < n; ++k)
    if (got[k] != want[k]) {
      const std::uint64_t e = k / es;
      return "first difference at byte " + std::to_string(k) + " (row " + std::to_string(e / ld) + ", col " +
             std::to_string(e % ld) + " of the buffer)";
    }
  return "";
}

}  // namespace gt::test
