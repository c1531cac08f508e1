// What every bench (and the kernel tuning harness) computes from its timed
// repetitions, and the byte an output holds before a run: one definition each.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace gt::bench {

// Outputs are filled with this before a timed run, so an element a candidate
// never wrote cannot pass for a right one.
constexpr unsigned char kPoison = 0xA5;

// The median of the repetitions (the mean of the middle two for an even
// count); 0 for none.
inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// How many input and output buffers of `bytes` each a device bench rotates
// through, each launch taking the next, so that a launch reads DRAM rather
// than the L2 the previous launch filled: 128 MiB of input plus as much
// output is over twice the H100's 50 MB L2 (kRotateBytes); at most
// kMaxBuffers.
constexpr std::uint64_t kRotateBytes = 128ull << 20;
constexpr std::uint64_t kMaxBuffers = 1024;
inline std::uint64_t rotation_buffers(std::uint64_t bytes) {
  if (bytes == 0 || bytes >= kRotateBytes) return 1;
  return std::min<std::uint64_t>(kMaxBuffers, (kRotateBytes + bytes - 1) / bytes);
}

}  // namespace gt::bench
