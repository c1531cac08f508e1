// Helpers of the device tests: device presence (tests skip without one),
// owned device buffers, and on-device fill and verification from the
// position pattern (gtranspose/pattern.hpp), so nothing large is copied back.
#pragma once
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "gtranspose/pattern.hpp"

namespace gtt {

// Byte values for poisoned outputs and for the padding of leading
// dimensions; neither equals the pattern's bytes often enough to hide a bug,
// and a mismatch is reported with its coordinates.
constexpr unsigned char kPoison = 0xA5;
constexpr unsigned char kPadIn = 0x5A;

#define GTT_CUDA(call)                                                                                  \
  do {                                                                                                  \
    cudaError_t gtt_e = (call);                                                                         \
    ASSERT_EQ(gtt_e, cudaSuccess) << #call << ": " << cudaGetErrorName(gtt_e) << " " << cudaGetErrorString(gtt_e); \
  } while (0)

// Empty when a device is usable, else the reason; asked once per process.
inline const std::string& no_device_reason() {
  static const std::string why = [] {
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
      cudaGetLastError();
      return std::string(cudaGetErrorName(e)) + " (" + cudaGetErrorString(e) + ")";
    }
    return n == 0 ? std::string("cudaGetDeviceCount returned 0") : std::string();
  }();
  return why;
}

#define GTT_REQUIRE_DEVICE()                                                                    \
  do {                                                                                          \
    if (!::gtt::no_device_reason().empty()) GTEST_SKIP() << "no CUDA device: " << ::gtt::no_device_reason(); \
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

// rows x ld elements of S bytes: columns < cols get pattern(r, c), the rest `pad`.
template <std::size_t S>
__global__ void fill_kernel(unsigned char* buf, std::uint64_t rows, std::uint64_t cols, std::uint64_t ld,
                            std::uint64_t seed, unsigned char pad) {
  const std::uint64_t n = rows * ld;
  for (std::uint64_t i = std::uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += std::uint64_t(gridDim.x) * blockDim.x) {
    const std::uint64_t r = i / ld, c = i - r * ld;
    unsigned char* dst = buf + i * S;
    if (c < cols) {
      gt::pattern_bytes(r, c, seed, S, dst);
    } else {
      for (std::size_t k = 0; k < S; ++k) dst[k] = pad;
    }
  }
}

struct Mismatch {
  unsigned long long first;  // lowest bad linear index (row * ld + col); ~0 when none
  unsigned long long count;
};

// Checks a buffer of rows x ld elements on the device: columns < cols hold
// pattern(c, r) when `transposed` (the output of a transpose), else
// pattern(r, c); the other columns hold `pad` in every byte.
template <std::size_t S>
__global__ void verify_kernel(const unsigned char* buf, std::uint64_t rows, std::uint64_t cols, std::uint64_t ld,
                              std::uint64_t seed, bool transposed, unsigned char pad, Mismatch* m) {
  const std::uint64_t n = rows * ld;
  for (std::uint64_t i = std::uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += std::uint64_t(gridDim.x) * blockDim.x) {
    const std::uint64_t r = i / ld, c = i - r * ld;
    const unsigned char* p = buf + i * S;
    bool good;
    if (c < cols) {
      good = transposed ? gt::pattern_matches(p, c, r, seed, S) : gt::pattern_matches(p, r, c, seed, S);
    } else {
      good = true;
      for (std::size_t k = 0; k < S; ++k) good = good && p[k] == pad;
    }
    if (!good) {
      atomicMin(&m->first, (unsigned long long)i);
      atomicAdd(&m->count, 1ull);
    }
  }
}

inline unsigned grid_for(std::uint64_t n) {
  const std::uint64_t blocks = (n + 255) / 256;
  return unsigned(blocks < 132 * 64 ? (blocks ? blocks : 1) : 132 * 64);
}

template <class F>
decltype(auto) with_size(std::size_t s, F&& f) {
  switch (s) {
    case 1: return f(std::integral_constant<std::size_t, 1>{});
    case 2: return f(std::integral_constant<std::size_t, 2>{});
    case 4: return f(std::integral_constant<std::size_t, 4>{});
    case 8: return f(std::integral_constant<std::size_t, 8>{});
    default: return f(std::integral_constant<std::size_t, 16>{});
  }
}

inline cudaError_t fill(unsigned char* buf, std::size_t s, std::uint64_t rows, std::uint64_t cols, std::uint64_t ld,
                        std::uint64_t seed, unsigned char pad) {
  with_size(s, [&](auto sz) {
    fill_kernel<decltype(sz)::value><<<grid_for(rows * ld), 256>>>(buf, rows, cols, ld, seed, pad);
  });
  return cudaGetLastError();
}

// Result of a device check: count == 0 means the buffer is right.
struct Check {
  cudaError_t err = cudaSuccess;
  Mismatch m{~0ull, 0};
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

inline Check verify(const unsigned char* buf, std::size_t s, std::uint64_t rows, std::uint64_t cols,
                    std::uint64_t ld, std::uint64_t seed, bool transposed, unsigned char pad) {
  Check c;
  Mismatch* dm = nullptr;
  if ((c.err = cudaMalloc(&dm, sizeof(Mismatch))) != cudaSuccess) return c;
  const Mismatch init{~0ull, 0};
  if ((c.err = cudaMemcpy(dm, &init, sizeof init, cudaMemcpyHostToDevice)) == cudaSuccess) {
    with_size(s, [&](auto sz) {
      verify_kernel<decltype(sz)::value><<<grid_for(rows * ld), 256>>>(buf, rows, cols, ld, seed, transposed, pad, dm);
    });
    c.err = cudaGetLastError();
    if (c.err == cudaSuccess) c.err = cudaMemcpy(&c.m, dm, sizeof c.m, cudaMemcpyDeviceToHost);
  }
  cudaFree(dm);
  if (c.err == cudaSuccess && c.m.count) {
    c.row = c.m.first / ld;
    c.col = c.m.first % ld;
    unsigned char got[16], want[16];
    c.err = cudaMemcpy(got, buf + c.m.first * s, s, cudaMemcpyDeviceToHost);
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
