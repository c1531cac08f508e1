// Helpers shared by the CPU tests.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

namespace cpu_test {

using Bytes = std::vector<unsigned char>;

// n bytes of seeded random data (never zeros, never a pattern a bug could mirror).
inline Bytes random_bytes(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  Bytes b(n);
  for (std::size_t i = 0; i < n; i += 8) {
    const std::uint64_t v = rng();
    std::memcpy(b.data() + i, &v, std::min<std::size_t>(8, n - i));
  }
  return b;
}

}  // namespace cpu_test
