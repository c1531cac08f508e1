// Helpers of the device tests: owned device buffers, and on-device fill and
// verification from the position pattern (gtranspose/pattern.hpp) through the
// bench's own kernels (bench/pattern_device.cuh, via testing.hpp), so nothing
// large is copied back. Tests skip without a device (support/gpu.hpp).
#pragma once
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "gtranspose/error.hpp"
#include "gtranspose/pattern.hpp"
#include "support/gpu.hpp"
#include "testing.hpp"

namespace gtt {

// Byte values for poisoned outputs (the bench's) and for the padding of
// leading dimensions; neither equals the pattern's bytes often enough to
// hide a bug, and a mismatch is reported with its coordinates.
constexpr unsigned char kPoison = gt::bench::kPoison;
constexpr unsigned char kPadIn = 0x5A;

#define GTT_CUDA(call)                                                                                  \
  do {                                                                                                  \
    cudaError_t gtt_e = (call);                                                                         \
    ASSERT_EQ(gtt_e, cudaSuccess) << #call << ": " << cudaGetErrorName(gtt_e) << " " << cudaGetErrorString(gtt_e); \
  } while (0)

// An owned cudaMalloc allocation (never managed memory).
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
    if (bytes && cudaMalloc(&p_, bytes) != cudaSuccess) {
      cudaGetLastError();
      p_ = nullptr;
    }
  }
  ~DeviceBuffer() {
    if (p_) cudaFree(p_);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  unsigned char* get() const { return static_cast<unsigned char*>(p_); }
  bool ok() const { return p_ != nullptr || bytes_ == 0; }
  std::size_t bytes() const { return bytes_; }

 private:
  void* p_ = nullptr;
  std::size_t bytes_ = 0;
};

// rows x ld elements of s bytes on the legacy stream: columns < cols get
// pattern(r, c), the rest `pad`. "" when done, else the error.
inline std::string fill(unsigned char* buf, std::size_t s, std::uint64_t rows, std::uint64_t cols, std::uint64_t ld,
                        std::uint64_t seed, unsigned char pad) {
  try {
    gt::bench::fill_pattern(buf, rows, cols, s, seed, 1, 0, ld, pad);
  } catch (const gt::Error& e) {
    return e.what();
  }
  return "";
}

// Result of a device check: count == 0 means the buffer is right.
struct Check {
  std::string error;               // why the check itself failed, "" when it ran
  std::uint64_t count = 0;         // wrong elements
  std::uint64_t row = 0, col = 0;  // coordinates of the first mismatch
  std::string got, want;           // its bytes, hex
};

inline std::string hex(const unsigned char* p, std::size_t n) {
  std::string s;
  char b[4];
  for (std::size_t i = n; i-- > 0;) {
    std::snprintf(b, sizeof b, "%02x", p[i]);
    s += b;
  }
  return s;
}

// Checks a buffer of rows x ld elements on the device: columns < cols hold
// pattern(c, r) when `transposed` (the output of a transpose), else
// pattern(r, c); the other columns hold `pad` in every byte.
inline Check verify(const unsigned char* buf, std::size_t s, std::uint64_t rows, std::uint64_t cols,
                    std::uint64_t ld, std::uint64_t seed, bool transposed, unsigned char pad) {
  Check c;
  gt::bench::VerifySpec spec;  // in the input's terms
  spec.rows = transposed ? cols : rows;
  spec.cols = transposed ? rows : cols;
  spec.elem_size = s;
  spec.seed = seed;
  spec.transposed = transposed;
  spec.ld = ld;
  spec.pad = pad;
  gt::bench::VerifyResult r;
  try {
    r = gt::bench::verify_pattern(buf, spec, 0);
  } catch (const gt::Error& e) {
    c.error = e.what();
    return c;
  }
  c.count = r.mismatches;
  if (c.count) {
    c.row = r.first_row;
    c.col = r.first_col;
    unsigned char got[16], want[16];
    const cudaError_t e = cudaMemcpy(got, buf + (c.row * ld + c.col) * s, s, cudaMemcpyDeviceToHost);
    if (e != cudaSuccess) c.error = std::string("reading the first mismatch back: ") + cudaGetErrorString(e);
    c.got = hex(got, s);
    if (c.col < cols) {
      if (transposed) gt::pattern_bytes(c.col, c.row, seed, s, want);
      else gt::pattern_bytes(c.row, c.col, seed, s, want);
    } else {
      std::memset(want, pad, s);
    }
    c.want = hex(want, s);
  }
  return c;
}

// A seed per test case (printed in reproducers); GT_TEST_SEED overrides it.
inline std::uint64_t test_seed(const std::string& what) {
  if (const char* e = std::getenv("GT_TEST_SEED")) return std::strtoull(e, nullptr, 0);
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char ch : what) h = (h ^ ch) * 1099511628211ull;
  return gt::mix64(h);
}

}  // namespace gtt
