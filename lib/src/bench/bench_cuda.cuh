// The bench's CUDA plumbing: checked calls, RAII owners, and the device-side
// fill and verification that every timed candidate shares.
#pragma once
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/cuda/cuda_util.cuh"
#include "gtranspose/error.hpp"

namespace gt::bench {

[[noreturn]] void throw_cublas(cublasStatus_t s, const char* call, const char* file, int line);

}  // namespace gt::bench

// Every cuBLAS call of the bench goes through this (CUDA calls through
// GT_CUDA_CHECK), so a failure names the call, the file and the line.
#define GT_BENCH_CUBLAS(call)                                                     \
  do {                                                                            \
    cublasStatus_t gt_bench_s_ = (call);                                          \
    if (gt_bench_s_ != CUBLAS_STATUS_SUCCESS)                                     \
      ::gt::bench::throw_cublas(gt_bench_s_, #call, __FILE__, __LINE__);          \
  } while (0)

namespace gt::bench {

// The owners shared with the engine (cuda_util.cuh).
using cuda::DeviceBuffer;
using cuda::Event;
using cuda::Stream;

class CublasHandle {
 public:
  explicit CublasHandle(cudaStream_t stream);
  ~CublasHandle();
  CublasHandle(const CublasHandle&) = delete;
  CublasHandle& operator=(const CublasHandle&) = delete;
  cublasHandle_t get() const { return h_; }

 private:
  cublasHandle_t h_ = nullptr;
};

class CublasLtHandle {
 public:
  CublasLtHandle();
  ~CublasLtHandle();
  CublasLtHandle(const CublasLtHandle&) = delete;
  CublasLtHandle& operator=(const CublasLtHandle&) = delete;
  cublasLtHandle_t get() const { return h_; }

 private:
  cublasLtHandle_t h_ = nullptr;
};

class LtLayout {
 public:
  LtLayout(cudaDataType type, std::uint64_t rows, std::uint64_t cols, std::int64_t ld);
  ~LtLayout();
  LtLayout(const LtLayout&) = delete;
  LtLayout& operator=(const LtLayout&) = delete;
  cublasLtMatrixLayout_t get() const { return l_; }

 private:
  cublasLtMatrixLayout_t l_ = nullptr;
};

class LtTransformDesc {
 public:
  explicit LtTransformDesc(cudaDataType scale_type);
  ~LtTransformDesc();
  LtTransformDesc(const LtTransformDesc&) = delete;
  LtTransformDesc& operator=(const LtTransformDesc&) = delete;
  cublasLtMatrixTransformDesc_t get() const { return d_; }

 private:
  cublasLtMatrixTransformDesc_t d_ = nullptr;
};

// How a verification compares bytes. Byte movers must be bit-exact. The
// vendor peers compute alpha * x in floating point, and the GPU returns a
// canonical NaN for any NaN input, so their NaN payloads may change: those
// elements are counted apart ("NaN-only") rather than as wrong positions.
enum class FloatLanes : std::uint8_t { none, f16, bf16, f32, f64 };

struct VerifySpec {
  std::uint64_t rows = 0, cols = 0;  // the INPUT's shape
  std::size_t elem_size = 0;
  std::uint64_t seed = 0;
  bool transposed = true;            // false: out(r, c) must equal pattern(r, c)
  FloatLanes lanes = FloatLanes::none;
  std::uint64_t matrices = 1;        // consecutive packed outputs to check
};

struct VerifyResult {
  std::uint64_t mismatches = 0;  // wrong bytes at a position
  std::uint64_t nan_only = 0;    // differ only in NaN payloads (see FloatLanes)
  std::uint64_t first_row = 0, first_col = 0;  // output coordinates of the first mismatch
  std::uint64_t first_matrix = 0;
};

// Writes `matrices` packed copies of the rows x cols pattern matrix (seed)
// at dst, asynchronously on stream.
void fill_pattern(void* dst, std::uint64_t rows, std::uint64_t cols, std::size_t elem_size, std::uint64_t seed,
                  std::uint64_t matrices, cudaStream_t stream);

// Checks `out` on the device, counting mismatches there; synchronises the
// stream to read back the three counters.
VerifyResult verify_pattern(const void* out, const VerifySpec& spec, cudaStream_t stream);

// One timed thing in the table: a registry kernel, the D2D copy, or a peer.
enum class CandidateKind : std::uint8_t { transpose, copy, inplace };

struct Candidate {
  std::string name, config;
  CandidateKind kind = CandidateKind::transpose;
  FloatLanes lanes = FloatLanes::none;  // how strictly its output is compared
  std::string note;                     // said on its row whatever the result
  bool from_registry = false;           // a kernels:: entry, so --kernel NAME reproduces it
  // Out of place: reads the input matrix at `in`, writes `out`. In place:
  // `in` is the matrix and `out` is null.
  std::function<void(const void* in, void* out, cudaStream_t stream)> launch;
};

// Handles shared by every peer of one bench, created once (their set-up is
// not what the bench times).
struct PeerHandles {
  std::unique_ptr<CublasHandle> blas;
  std::unique_ptr<CublasLtHandle> lt;
};

// The vendor peers for a rows x cols row-major input of elem_size bytes
// (dtype names the element type, so complex and half types pick the matching
// cuBLAS type): cublas<t>geam where one exists, and cublasLtMatrixTransform.
std::vector<Candidate> make_peers(PeerHandles& h, cudaStream_t stream, std::uint64_t rows, std::uint64_t cols,
                                  std::size_t elem_size, const std::string& dtype);

}  // namespace gt::bench
