// The bench's cuBLAS owners. The position-pattern fill and verification
// kernels are in pattern_device.cu (shared with the device tests).
#include <string>

#include "bench_cuda.cuh"
#include "engine/cuda/cuda_util.cuh"

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

}  // namespace gt::bench
