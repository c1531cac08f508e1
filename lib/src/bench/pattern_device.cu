// The position-pattern fill and verification kernels of pattern_device.cuh.
// Verification counts on the device and copies back three numbers, never
// the matrix.
#include <memory>
#include <string>

#include "bench/pattern_device.cuh"
#include "gtranspose/cuda_check.hpp"
#include "gtranspose/error.hpp"
#include "gtranspose/pattern.hpp"
#include "gtranspose/sizes.hpp"

namespace gt::bench {

namespace {

// Elements as whole words, so fill and check move 1 to 16 bytes per access.
template <std::size_t ES> struct Word;
template <> struct Word<1> { using type = std::uint8_t; };
template <> struct Word<2> { using type = std::uint16_t; };
template <> struct Word<4> { using type = std::uint32_t; };
template <> struct Word<8> { using type = std::uint64_t; };
template <> struct Word<16> { using type = ulonglong2; };

// The element pattern(r, c) as a word: the same bytes as pattern_bytes on a
// little-endian machine (the host cross-checks a few in the bench).
template <std::size_t ES>
__device__ __forceinline__ typename Word<ES>::type expected_word(std::uint64_t r, std::uint64_t c, std::uint64_t seed) {
  if constexpr (ES == 16) {
    return make_ulonglong2(pattern_word(r, c, seed, 0), pattern_word(r, c, seed, 1));
  } else {
    return static_cast<typename Word<ES>::type>(pattern_word(r, c, seed, 0));
  }
}

// A word with `pad` in every byte: what the padding of a leading dimension holds.
template <std::size_t ES>
__device__ __forceinline__ typename Word<ES>::type pad_word(unsigned char pad) {
  const std::uint64_t w = 0x0101010101010101ull * pad;
  if constexpr (ES == 16) {
    return make_ulonglong2(w, w);
  } else {
    return static_cast<typename Word<ES>::type>(w);
  }
}

template <std::size_t ES>
__device__ __forceinline__ void split(const typename Word<ES>::type& w, std::uint64_t& lo, std::uint64_t& hi) {
  if constexpr (ES == 16) {
    lo = w.x;
    hi = w.y;
  } else {
    lo = w;
    hi = 0;
  }
}

__device__ __forceinline__ unsigned lane_bytes(FloatLanes l) {
  return l == FloatLanes::f16 || l == FloatLanes::bf16 ? 2u : l == FloatLanes::f32 ? 4u : 8u;
}

__device__ __forceinline__ bool is_nan(std::uint64_t b, FloatLanes l) {
  switch (l) {
    case FloatLanes::f16: return (b & 0x7c00u) == 0x7c00u && (b & 0x03ffu) != 0;
    case FloatLanes::bf16: return (b & 0x7f80u) == 0x7f80u && (b & 0x007fu) != 0;
    case FloatLanes::f32: return (b & 0x7f800000u) == 0x7f800000u && (b & 0x007fffffu) != 0;
    case FloatLanes::f64:
      return (b & 0x7ff0000000000000ull) == 0x7ff0000000000000ull && (b & 0x000fffffffffffffull) != 0;
    default: return false;
  }
}

// True when got and want differ only where both hold a NaN. For complex
// elements one NaN part may turn the other part into NaN too (a complex
// multiply by 1+0i), so a NaN anywhere in both counts as NaN-only as long as
// every lane that is a number in both is equal.
__device__ __forceinline__ bool nan_only(std::uint64_t glo, std::uint64_t ghi, std::uint64_t wlo, std::uint64_t whi,
                                         std::size_t es, FloatLanes l) {
  if (l == FloatLanes::none) return false;
  const unsigned lb = lane_bytes(l);
  const std::uint64_t mask = lb == 8 ? ~0ull : ((1ull << (8 * lb)) - 1);
  bool got_nan = false, want_nan = false;
  for (unsigned off = 0; off < es; off += lb) {
    const std::uint64_t g = ((off < 8 ? glo : ghi) >> (8 * (off % 8))) & mask;
    const std::uint64_t w = ((off < 8 ? wlo : whi) >> (8 * (off % 8))) & mask;
    const bool gn = is_nan(g, l), wn = is_nan(w, l);
    got_nan |= gn;
    want_nan |= wn;
    if (!gn && !wn && g != w) return false;
  }
  return got_nan && want_nan;
}

// A buffer of `total` elements: consecutive matrices of rows x ld elements
// (`elems` each), whose columns below `cols` hold the pattern.
struct Geometry {
  std::uint64_t cols = 0, ld = 0, elems = 0, total = 0;
};

template <std::size_t ES>
__global__ void fill_kernel(typename Word<ES>::type* dst, Geometry g, std::uint64_t seed, unsigned char pad) {
  const std::uint64_t stride = std::uint64_t(gridDim.x) * blockDim.x;
  for (std::uint64_t i = std::uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < g.total; i += stride) {
    const std::uint64_t k = i % g.elems, r = k / g.ld, c = k % g.ld;
    dst[i] = c < g.cols ? expected_word<ES>(r, c, seed) : pad_word<ES>(pad);
  }
}

// counters: [0] mismatches, [1] NaN-only, [2] smallest mismatching index.
template <std::size_t ES>
__global__ void verify_kernel(const typename Word<ES>::type* out, Geometry g, std::uint64_t seed, bool transposed,
                              FloatLanes lanes, unsigned char pad, unsigned long long* counters) {
  unsigned long long bad = 0, nan = 0, first = ~0ull;
  const std::uint64_t stride = std::uint64_t(gridDim.x) * blockDim.x;
  for (std::uint64_t i = std::uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < g.total; i += stride) {
    const std::uint64_t k = i % g.elems;
    const std::uint64_t orow = k / g.ld, ocol = k % g.ld;
    const bool in_matrix = ocol < g.cols;
    const auto want = !in_matrix    ? pad_word<ES>(pad)
                      : transposed ? expected_word<ES>(ocol, orow, seed)
                                   : expected_word<ES>(orow, ocol, seed);
    const auto got = out[i];
    std::uint64_t glo, ghi, wlo, whi;
    split<ES>(got, glo, ghi);
    split<ES>(want, wlo, whi);
    if (glo == wlo && ghi == whi) continue;
    if (in_matrix && nan_only(glo, ghi, wlo, whi, ES, lanes)) {
      ++nan;
    } else {
      ++bad;
      if (i < first) first = i;
    }
  }
  if (bad) {
    atomicAdd(&counters[0], bad);
    atomicMin(&counters[2], first);
  }
  if (nan) atomicAdd(&counters[1], nan);
}

// Grid-stride launches: enough blocks to fill any current GPU several times.
constexpr unsigned kThreads = 256;
unsigned grid_for(std::uint64_t total) {
  const std::uint64_t blocks = (total + kThreads - 1) / kThreads;
  return unsigned(blocks < 8192 ? (blocks ? blocks : 1) : 8192);
}

Geometry geometry(std::uint64_t rows, std::uint64_t cols, std::uint64_t ld, std::uint64_t matrices) {
  Geometry g;
  g.cols = cols;
  g.ld = ld ? ld : cols;
  if (g.ld < cols)
    throw Error(ErrorKind::internal, "bench buffer: ld " + std::to_string(ld) + " is less than " +
                                         std::to_string(cols) + " columns");
  g.elems = checked_mul(rows, g.ld, "bench matrix elements");
  g.total = checked_mul(g.elems, matrices, "bench buffer elements");
  return g;
}

template <std::size_t ES>
void fill_t(void* dst, const Geometry& g, std::uint64_t seed, unsigned char pad, cudaStream_t stream) {
  fill_kernel<ES><<<grid_for(g.total), kThreads, 0, stream>>>(static_cast<typename Word<ES>::type*>(dst), g, seed, pad);
  GT_CUDA_CHECK(cudaGetLastError());
}

template <std::size_t ES>
VerifyResult verify_t(const void* out, const VerifySpec& s, cudaStream_t stream) {
  const std::uint64_t out_rows = s.transposed ? s.cols : s.rows, out_cols = s.transposed ? s.rows : s.cols;
  const Geometry g = geometry(out_rows, out_cols, s.ld, s.matrices);
  unsigned long long* counters = nullptr;
  GT_CUDA_CHECK(cudaMalloc(&counters, 3 * sizeof(unsigned long long)));
  const std::unique_ptr<unsigned long long, cudaError_t (*)(void*)> owner(counters, &cudaFree);
  GT_CUDA_CHECK(cudaMemsetAsync(counters, 0, 2 * sizeof(unsigned long long), stream));
  GT_CUDA_CHECK(cudaMemsetAsync(counters + 2, 0xFF, sizeof(unsigned long long), stream));
  verify_kernel<ES><<<grid_for(g.total), kThreads, 0, stream>>>(static_cast<const typename Word<ES>::type*>(out), g,
                                                                s.seed, s.transposed, s.lanes, s.pad, counters);
  GT_CUDA_CHECK(cudaGetLastError());
  unsigned long long host[3] = {0, 0, 0};
  GT_CUDA_CHECK(cudaMemcpyAsync(host, counters, sizeof host, cudaMemcpyDeviceToHost, stream));
  GT_CUDA_CHECK(cudaStreamSynchronize(stream));
  VerifyResult r;
  r.mismatches = host[0];
  r.nan_only = host[1];
  if (r.mismatches) {
    const std::uint64_t k = host[2] % g.elems;
    r.first_matrix = host[2] / g.elems;
    r.first_row = k / g.ld;
    r.first_col = k % g.ld;
  }
  return r;
}

}  // namespace

void fill_pattern(void* dst, std::uint64_t rows, std::uint64_t cols, std::size_t elem_size, std::uint64_t seed,
                  std::uint64_t matrices, cudaStream_t stream, std::uint64_t ld, unsigned char pad) {
  const Geometry g = geometry(rows, cols, ld, matrices);
  switch (elem_size) {
    case 1: return fill_t<1>(dst, g, seed, pad, stream);
    case 2: return fill_t<2>(dst, g, seed, pad, stream);
    case 4: return fill_t<4>(dst, g, seed, pad, stream);
    case 8: return fill_t<8>(dst, g, seed, pad, stream);
    case 16: return fill_t<16>(dst, g, seed, pad, stream);
    default: throw Error(ErrorKind::internal, "bench fill: unsupported element size " + std::to_string(elem_size));
  }
}

VerifyResult verify_pattern(const void* out, const VerifySpec& spec, cudaStream_t stream) {
  switch (spec.elem_size) {
    case 1: return verify_t<1>(out, spec, stream);
    case 2: return verify_t<2>(out, spec, stream);
    case 4: return verify_t<4>(out, spec, stream);
    case 8: return verify_t<8>(out, spec, stream);
    case 16: return verify_t<16>(out, spec, stream);
    default:
      throw Error(ErrorKind::internal, "bench verify: unsupported element size " + std::to_string(spec.elem_size));
  }
}

}  // namespace gt::bench
