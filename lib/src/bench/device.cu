// The bench's device side: RAII owners, and the position-pattern fill and
// verification kernels. Verification counts on the device and copies back
// three numbers, never the matrix.
#include <cstring>
#include <string>

#include "bench_cuda.cuh"
#include "engine/cuda/cuda_util.cuh"
#include "gtranspose/pattern.hpp"
#include "gtranspose/sizes.hpp"

namespace gt::bench {

void throw_cublas(cublasStatus_t s, const char* call, const char* file, int line) {
  throw Error(ErrorKind::cuda, std::string(call) + " failed at " + cuda::base_name(file) + ":" + std::to_string(line) +
                                   ": " + cublasGetStatusString(s));
}

CublasHandle::CublasHandle(cudaStream_t stream) {
  GT_BENCH_CUBLAS(cublasCreate(&h_));
  cublasStatus_t s = cublasSetStream(h_, stream);
  if (s != CUBLAS_STATUS_SUCCESS) {
    cublasDestroy(h_);
    h_ = nullptr;
    throw_cublas(s, "cublasSetStream", __FILE__, __LINE__);
  }
}
CublasHandle::~CublasHandle() {
  if (h_) cublasDestroy(h_);
}

CublasLtHandle::CublasLtHandle() { GT_BENCH_CUBLAS(cublasLtCreate(&h_)); }
CublasLtHandle::~CublasLtHandle() {
  if (h_) cublasLtDestroy(h_);
}

LtLayout::LtLayout(cudaDataType type, std::uint64_t rows, std::uint64_t cols, std::int64_t ld) {
  GT_BENCH_CUBLAS(cublasLtMatrixLayoutCreate(&l_, type, rows, cols, ld));
}
LtLayout::~LtLayout() {
  if (l_) cublasLtMatrixLayoutDestroy(l_);
}

LtTransformDesc::LtTransformDesc(cudaDataType scale_type) {
  GT_BENCH_CUBLAS(cublasLtMatrixTransformDescCreate(&d_, scale_type));
}
LtTransformDesc::~LtTransformDesc() {
  if (d_) cublasLtMatrixTransformDescDestroy(d_);
}

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

template <std::size_t ES>
__global__ void fill_kernel(typename Word<ES>::type* dst, std::uint64_t cols, std::uint64_t elems, std::uint64_t total,
                            std::uint64_t seed) {
  const std::uint64_t stride = std::uint64_t(gridDim.x) * blockDim.x;
  for (std::uint64_t i = std::uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
    const std::uint64_t k = i % elems;
    dst[i] = expected_word<ES>(k / cols, k % cols, seed);
  }
}

// counters: [0] mismatches, [1] NaN-only, [2] smallest mismatching index.
template <std::size_t ES>
__global__ void verify_kernel(const typename Word<ES>::type* out, std::uint64_t out_cols, std::uint64_t elems,
                              std::uint64_t total, std::uint64_t seed, bool transposed, FloatLanes lanes,
                              unsigned long long* counters) {
  unsigned long long bad = 0, nan = 0, first = ~0ull;
  const std::uint64_t stride = std::uint64_t(gridDim.x) * blockDim.x;
  for (std::uint64_t i = std::uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
    const std::uint64_t k = i % elems;
    const std::uint64_t orow = k / out_cols, ocol = k % out_cols;
    const auto want = transposed ? expected_word<ES>(ocol, orow, seed) : expected_word<ES>(orow, ocol, seed);
    const auto got = out[i];
    std::uint64_t glo, ghi, wlo, whi;
    split<ES>(got, glo, ghi);
    split<ES>(want, wlo, whi);
    if (glo == wlo && ghi == whi) continue;
    if (nan_only(glo, ghi, wlo, whi, ES, lanes)) {
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

template <std::size_t ES>
void fill_t(void* dst, std::uint64_t rows, std::uint64_t cols, std::uint64_t seed, std::uint64_t matrices,
            cudaStream_t stream) {
  const std::uint64_t elems = checked_mul(rows, cols, "bench matrix elements");
  const std::uint64_t total = checked_mul(elems, matrices, "bench buffer elements");
  fill_kernel<ES><<<grid_for(total), kThreads, 0, stream>>>(static_cast<typename Word<ES>::type*>(dst), cols, elems,
                                                           total, seed);
  GT_CUDA_CHECK(cudaGetLastError());
}

template <std::size_t ES>
VerifyResult verify_t(const void* out, const VerifySpec& s, cudaStream_t stream) {
  const std::uint64_t elems = checked_mul(s.rows, s.cols, "bench matrix elements");
  const std::uint64_t total = checked_mul(elems, s.matrices, "bench buffer elements");
  const std::uint64_t out_cols = s.transposed ? s.rows : s.cols;
  DeviceBuffer counters(3 * sizeof(unsigned long long));
  GT_CUDA_CHECK(cudaMemsetAsync(counters.get(), 0, 2 * sizeof(unsigned long long), stream));
  GT_CUDA_CHECK(cudaMemsetAsync(counters.get() + 2 * sizeof(unsigned long long), 0xFF, sizeof(unsigned long long),
                                stream));
  auto* c = reinterpret_cast<unsigned long long*>(counters.get());
  verify_kernel<ES><<<grid_for(total), kThreads, 0, stream>>>(static_cast<const typename Word<ES>::type*>(out),
                                                             out_cols, elems, total, s.seed, s.transposed, s.lanes, c);
  GT_CUDA_CHECK(cudaGetLastError());
  unsigned long long host[3] = {0, 0, 0};
  GT_CUDA_CHECK(cudaMemcpyAsync(host, c, sizeof host, cudaMemcpyDeviceToHost, stream));
  GT_CUDA_CHECK(cudaStreamSynchronize(stream));
  VerifyResult r;
  r.mismatches = host[0];
  r.nan_only = host[1];
  if (r.mismatches) {
    const std::uint64_t k = host[2] % elems;
    r.first_matrix = host[2] / elems;
    r.first_row = k / out_cols;
    r.first_col = k % out_cols;
  }
  return r;
}

}  // namespace

void fill_pattern(void* dst, std::uint64_t rows, std::uint64_t cols, std::size_t elem_size, std::uint64_t seed,
                  std::uint64_t matrices, cudaStream_t stream) {
  switch (elem_size) {
    case 1: return fill_t<1>(dst, rows, cols, seed, matrices, stream);
    case 2: return fill_t<2>(dst, rows, cols, seed, matrices, stream);
    case 4: return fill_t<4>(dst, rows, cols, seed, matrices, stream);
    case 8: return fill_t<8>(dst, rows, cols, seed, matrices, stream);
    case 16: return fill_t<16>(dst, rows, cols, seed, matrices, stream);
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
