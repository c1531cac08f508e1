// The position pattern: element (r, c) of a matrix generated with `seed`
// holds bytes derived from a hash of (r, c, seed). Data looks random (no
// zeros, no runs), yet any element can be checked without a copy of the
// input, on the host or on the device: the transpose's element (c, r) must
// equal pattern(r, c). Used by gt-gen, the tests, and the benches.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define GT_HD __host__ __device__ __forceinline__
#else
#define GT_HD inline
#endif

namespace gt {

// splitmix64's finaliser: a bijection on 64 bits with good avalanche.
GT_HD std::uint64_t mix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// 64 pattern bits for (r, c); `lane` selects further words for 16-byte elements.
GT_HD std::uint64_t pattern_word(std::uint64_t r, std::uint64_t c, std::uint64_t seed, unsigned lane = 0) {
  return mix64(mix64(r ^ (seed * 0xD1B54A32D192ED03ull)) ^ (c + 0x632BE59BD9B4E019ull * (lane + 1)));
}

// Writes the elem_size pattern bytes of (r, c) to dst (little-endian word order).
GT_HD void pattern_bytes(std::uint64_t r, std::uint64_t c, std::uint64_t seed, std::size_t elem_size, void* dst) {
  unsigned char* d = static_cast<unsigned char*>(dst);
  for (std::size_t off = 0; off < elem_size; off += 8) {
    std::uint64_t w = pattern_word(r, c, seed, unsigned(off / 8));
    std::size_t n = elem_size - off < 8 ? elem_size - off : 8;
    for (std::size_t i = 0; i < n; ++i) d[off + i] = static_cast<unsigned char>(w >> (8 * i));
  }
}

// True when the elem_size bytes at p equal pattern(r, c).
GT_HD bool pattern_matches(const void* p, std::uint64_t r, std::uint64_t c, std::uint64_t seed, std::size_t elem_size) {
  const unsigned char* s = static_cast<const unsigned char*>(p);
  for (std::size_t off = 0; off < elem_size; off += 8) {
    std::uint64_t w = pattern_word(r, c, seed, unsigned(off / 8));
    std::size_t n = elem_size - off < 8 ? elem_size - off : 8;
    for (std::size_t i = 0; i < n; ++i)
      if (s[off + i] != static_cast<unsigned char>(w >> (8 * i))) return false;
  }
  return true;
}

}  // namespace gt
