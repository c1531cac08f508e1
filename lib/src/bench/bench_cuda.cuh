// The bench's CUDA plumbing: checked calls, RAII owners, the candidates and
// their peers. The device-side fill and verification every timed candidate
// shares are in pattern_device.cuh.
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

#include "bench/pattern_device.cuh"
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
