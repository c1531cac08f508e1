// cuBLAS and cuBLASLt, loaded on first use. The bench's peers are the only
// users, yet merely linking the two libraries (over 600 MB) costs every
// gtranspose run about 200 MiB of resident memory at start-up, which would
// break the --host-mem promise for small budgets. So the project does not
// link them: this file defines the handful of entry points the peers call,
// each forwarding to the real function found with dlopen/dlsym the first time
// it is called. Without the libraries, each returns
// CUBLAS_STATUS_NOT_INITIALIZED and the bench reports the peers as not set up.
#include <cublasLt.h>
#include <cublas_v2.h>
#include <dlfcn.h>

#include <mutex>
#include <string>

namespace {

#define GT_STR2(x) #x
#define GT_STR(x) GT_STR2(x)

void* open_lib(const char* base) {
  // The soname of the major version the bench was compiled against first,
  // then the unversioned development link.
  std::string versioned = std::string(base) + ".so." GT_STR(CUBLAS_VER_MAJOR);
  void* h = dlopen(versioned.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) h = dlopen((std::string(base) + ".so").c_str(), RTLD_NOW | RTLD_LOCAL);
  return h;
}

void* blas() {
  static void* h = open_lib("libcublas");
  return h;
}
void* lt() {
  static void* h = open_lib("libcublasLt");
  return h;
}

template <class F>
F resolve(void* lib, const char* name) {
  return lib ? reinterpret_cast<F>(dlsym(lib, name)) : nullptr;
}

}  // namespace

// Each forwarder resolves its symbol once (function-local statics are
// initialised thread-safely) and passes its arguments through unchanged.
#define GT_LAZY(lib, name, params, args)                                   \
  extern "C" cublasStatus_t CUBLASWINAPI name params {                     \
    static const auto fn = resolve<decltype(&name)>(lib(), #name);         \
    return fn ? fn args : CUBLAS_STATUS_NOT_INITIALIZED;                   \
  }

GT_LAZY(blas, cublasCreate_v2, (cublasHandle_t * handle), (handle))
GT_LAZY(blas, cublasDestroy_v2, (cublasHandle_t handle), (handle))
GT_LAZY(blas, cublasSetStream_v2, (cublasHandle_t handle, cudaStream_t s), (handle, s))
GT_LAZY(blas, cublasSgeam_64,
        (cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int64_t m, int64_t n, const float* alpha,
         const float* A, int64_t lda, const float* beta, const float* B, int64_t ldb, float* C, int64_t ldc),
        (h, ta, tb, m, n, alpha, A, lda, beta, B, ldb, C, ldc))
GT_LAZY(blas, cublasDgeam_64,
        (cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int64_t m, int64_t n, const double* alpha,
         const double* A, int64_t lda, const double* beta, const double* B, int64_t ldb, double* C, int64_t ldc),
        (h, ta, tb, m, n, alpha, A, lda, beta, B, ldb, C, ldc))
GT_LAZY(blas, cublasCgeam_64,
        (cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int64_t m, int64_t n, const cuComplex* alpha,
         const cuComplex* A, int64_t lda, const cuComplex* beta, const cuComplex* B, int64_t ldb, cuComplex* C,
         int64_t ldc),
        (h, ta, tb, m, n, alpha, A, lda, beta, B, ldb, C, ldc))
GT_LAZY(blas, cublasZgeam_64,
        (cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int64_t m, int64_t n,
         const cuDoubleComplex* alpha, const cuDoubleComplex* A, int64_t lda, const cuDoubleComplex* beta,
         const cuDoubleComplex* B, int64_t ldb, cuDoubleComplex* C, int64_t ldc),
        (h, ta, tb, m, n, alpha, A, lda, beta, B, ldb, C, ldc))

GT_LAZY(lt, cublasLtCreate, (cublasLtHandle_t * handle), (handle))
GT_LAZY(lt, cublasLtDestroy, (cublasLtHandle_t handle), (handle))
GT_LAZY(lt, cublasLtMatrixLayoutCreate,
        (cublasLtMatrixLayout_t * layout, cudaDataType type, uint64_t rows, uint64_t cols, int64_t ld),
        (layout, type, rows, cols, ld))
GT_LAZY(lt, cublasLtMatrixLayoutDestroy, (cublasLtMatrixLayout_t layout), (layout))
GT_LAZY(lt, cublasLtMatrixTransformDescCreate, (cublasLtMatrixTransformDesc_t * desc, cudaDataType scale),
        (desc, scale))
GT_LAZY(lt, cublasLtMatrixTransformDescDestroy, (cublasLtMatrixTransformDesc_t desc), (desc))
GT_LAZY(lt, cublasLtMatrixTransformDescSetAttribute,
        (cublasLtMatrixTransformDesc_t desc, cublasLtMatrixTransformDescAttributes_t attr, const void* buf,
         size_t size),
        (desc, attr, buf, size))
GT_LAZY(lt, cublasLtMatrixTransform,
        (cublasLtHandle_t h, cublasLtMatrixTransformDesc_t desc, const void* alpha, const void* A,
         cublasLtMatrixLayout_t Adesc, const void* beta, const void* B, cublasLtMatrixLayout_t Bdesc, void* C,
         cublasLtMatrixLayout_t Cdesc, cudaStream_t stream),
        (h, desc, alpha, A, Adesc, beta, B, Bdesc, C, Cdesc, stream))

extern "C" const char* CUBLASWINAPI cublasGetStatusString(cublasStatus_t status) {
  static const auto fn = resolve<decltype(&cublasGetStatusString)>(blas(), "cublasGetStatusString");
  if (fn) return fn(status);
  return status == CUBLAS_STATUS_NOT_INITIALIZED ? "cuBLAS not loaded (libcublas.so not found)" : "cuBLAS error";
}
