// What every bench (and the kernel tuning harness) computes from its timed
// repetitions, and the byte an output holds before a run: one definition each.
#pragma once
#include <algorithm>
#include <cstddef>
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

}  // namespace gt::bench
