// The host side of the benches' checks, shared by the CPU bench and the host
// bench: poison an output, fill a row-major matrix with the position pattern
// (gtranspose/pattern.hpp) and check a transpose of it, each split over the
// CPU engine's threads (threads <= 0: hardware concurrency).
#pragma once
#include <atomic>
#include <cstdint>
#include <cstring>

#include "bench/stats.hpp"
#include "engine/cpu/thread_pool.hpp"
#include "gtranspose/pattern.hpp"
#include "gtranspose/types.hpp"

namespace gt::bench {

inline void poison(unsigned char* p, std::uint64_t bytes, int threads) {
  cpu::parallel_bands(bytes, threads, [=](std::uint64_t lo, std::uint64_t hi) { std::memset(p + lo, kPoison, hi - lo); });
}

// p (s.rows x s.cols, packed): element (r, c) = pattern(r, c).
inline void fill_pattern_host(unsigned char* p, Shape s, std::size_t es, std::uint64_t seed, int threads) {
  cpu::parallel_bands(s.rows, threads, [=](std::uint64_t r0, std::uint64_t r1) {
    for (std::uint64_t r = r0; r < r1; ++r)
      for (std::uint64_t c = 0; c < s.cols; ++c) pattern_bytes(r, c, seed, es, p + (r * s.cols + c) * es);
  });
}

struct HostCheck {
  std::uint64_t mismatches = 0;
  std::uint64_t first = ~std::uint64_t(0);  // input index r * in.cols + c of the first wrong element
};

// Checks that `out` (in.cols x in.rows, packed) is the transpose of the
// pattern matrix of shape `in`: out(c, r) = pattern(r, c).
inline HostCheck check_transposed_pattern(const unsigned char* out, Shape in, std::size_t es, std::uint64_t seed,
                                          int threads) {
  std::atomic<std::uint64_t> bad{0}, first{~std::uint64_t(0)};
  cpu::parallel_bands(in.cols, threads, [&](std::uint64_t c0, std::uint64_t c1) {
    for (std::uint64_t c = c0; c < c1; ++c)
      for (std::uint64_t r = 0; r < in.rows; ++r)
        if (!pattern_matches(out + (c * in.rows + r) * es, r, c, seed, es)) {
          ++bad;
          std::uint64_t idx = r * in.cols + c, cur = first.load();
          while (idx < cur && !first.compare_exchange_weak(cur, idx)) {
          }
        }
  });
  return {bad.load(), first.load()};
}

}  // namespace gt::bench
