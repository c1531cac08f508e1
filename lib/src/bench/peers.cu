// The vendor peers of the bench: cublas<t>geam and cublasLtMatrixTransform,
// set up so that their output is the row-major transpose of a row-major
// input, and verified with the same pattern check as our kernels.
//
// cuBLAS is column-major. A row-major R x C input with leading dimension C
// is, to cuBLAS, a column-major C x R matrix A with lda = C. The row-major
// C x R output we want (leading dimension R) is a column-major R x C matrix
// with ld = R, and it equals op(A) with op = transpose.
#include <cuComplex.h>
#include <cuda_fp16.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "bench_cuda.cuh"

namespace gt::bench {

namespace {

// cublas<t>geam computes C = alpha * op(A) + beta * op(B). With beta = 0 the
// B operand only has to be valid: passing C itself with transb = N and
// ldb = ldc is the in-place form the cuBLAS documentation allows.
template <typename T, typename Fn>
Candidate geam_peer(const char* name, Fn fn, T one, T zero, cublasHandle_t h, std::uint64_t rows, std::uint64_t cols,
                    FloatLanes lanes, std::string note) {
  Candidate c;
  c.name = name;
  c.lanes = lanes;
  c.note = std::move(note);
  const auto m = static_cast<std::int64_t>(rows), n = static_cast<std::int64_t>(cols);
  c.launch = [=](const void* in, void* out, cudaStream_t) {
    // The handle is bound to the bench's stream once, in PeerHandles.
    T* o = static_cast<T*>(out);
    GT_BENCH_CUBLAS(fn(h, CUBLAS_OP_T, CUBLAS_OP_N, m, n, &one, static_cast<const T*>(in), n, &zero, o, m, o, m));
  };
  return c;
}

struct LtType {
  cudaDataType data, scale;
  FloatLanes lanes;
  const char* label;  // for the row's note
};

LtType lt_type(std::size_t elem_size, const std::string& dtype) {
  switch (elem_size) {
    case 1: return {CUDA_R_8I, CUDA_R_32F, FloatLanes::none, "CUDA_R_8I, scale CUDA_R_32F"};
    case 2:
      if (dtype == "bf16") return {CUDA_R_16BF, CUDA_R_32F, FloatLanes::bf16, "CUDA_R_16BF, scale CUDA_R_32F"};
      return {CUDA_R_16F, CUDA_R_32F, FloatLanes::f16, "CUDA_R_16F, scale CUDA_R_32F"};
    case 4: return {CUDA_R_32F, CUDA_R_32F, FloatLanes::f32, "CUDA_R_32F"};
    case 8:
      if (dtype == "c64") return {CUDA_C_32F, CUDA_C_32F, FloatLanes::f32, "CUDA_C_32F"};
      return {CUDA_R_64F, CUDA_R_64F, FloatLanes::f64, "CUDA_R_64F"};
    default: return {CUDA_C_64F, CUDA_C_64F, FloatLanes::f64, "CUDA_C_64F"};
  }
}

// alpha = 1 and beta = 0 in the scale type, as host values.
struct Scalars {
  alignas(16) unsigned char one[16] = {};
  alignas(16) unsigned char zero[16] = {};
};

Scalars lt_scalars(cudaDataType scale) {
  Scalars s;
  switch (scale) {
    case CUDA_R_32F:
    case CUDA_C_32F: {
      const float f = 1.0f;
      std::memcpy(s.one, &f, sizeof f);
      break;
    }
    default: {
      const double d = 1.0;
      std::memcpy(s.one, &d, sizeof d);
    }
  }
  return s;
}

Candidate lt_peer(cublasLtHandle_t h, std::uint64_t rows, std::uint64_t cols, std::size_t elem_size,
                  const std::string& dtype) {
  const LtType t = lt_type(elem_size, dtype);
  // Column-major views (the default order): A is cols x rows (ld cols),
  // the output is rows x cols (ld rows); TRANSA = T makes op(A) rows x cols.
  auto a = std::make_shared<LtLayout>(t.data, cols, rows, static_cast<std::int64_t>(cols));
  auto o = std::make_shared<LtLayout>(t.data, rows, cols, static_cast<std::int64_t>(rows));
  auto desc = std::make_shared<LtTransformDesc>(t.scale);
  const cublasOperation_t trans = CUBLAS_OP_T;
  GT_BENCH_CUBLAS(cublasLtMatrixTransformDescSetAttribute(desc->get(), CUBLASLT_MATRIX_TRANSFORM_DESC_TRANSA, &trans,
                                                          sizeof trans));
  auto scalars = std::make_shared<Scalars>(lt_scalars(t.scale));
  Candidate c;
  c.name = "cublasLtMatrixTransform";
  c.lanes = t.lanes;
  c.note = t.label;
  c.launch = [=](const void* in, void* out, cudaStream_t stream) {
    // beta = 0 with no B operand, as NVIDIA's own layout-conversion samples do.
    GT_BENCH_CUBLAS(cublasLtMatrixTransform(h, desc->get(), scalars->one, in, a->get(), scalars->zero, nullptr,
                                            nullptr, out, o->get(), stream));
  };
  return c;
}

}  // namespace

std::vector<Candidate> make_peers(PeerHandles& h, cudaStream_t stream, std::uint64_t rows, std::uint64_t cols,
                                  std::size_t elem_size, const std::string& dtype) {
  if (!h.blas) h.blas = std::make_unique<CublasHandle>(stream);
  if (!h.lt) h.lt = std::make_unique<CublasLtHandle>();
  std::vector<Candidate> peers;
  cublasHandle_t b = h.blas->get();
  // geam exists for the four BLAS types only; other dtypes of the same size
  // travel as that type's bytes (and the note says so).
  auto as = [&](const char* native) { return dtype == native ? std::string() : "bytes as " + std::string(native); };
  switch (elem_size) {
    case 4:
      peers.push_back(geam_peer<float>("cublasSgeam", cublasSgeam_64, 1.0f, 0.0f, b, rows, cols, FloatLanes::f32,
                                       as("f32")));
      break;
    case 8:
      if (dtype == "c64")
        peers.push_back(geam_peer<cuComplex>("cublasCgeam", cublasCgeam_64, make_cuComplex(1, 0),
                                             make_cuComplex(0, 0), b, rows, cols, FloatLanes::f32, ""));
      else
        peers.push_back(geam_peer<double>("cublasDgeam", cublasDgeam_64, 1.0, 0.0, b, rows, cols, FloatLanes::f64,
                                          as("f64")));
      break;
    case 16:
      peers.push_back(geam_peer<cuDoubleComplex>("cublasZgeam", cublasZgeam_64, make_cuDoubleComplex(1, 0),
                                                 make_cuDoubleComplex(0, 0), b, rows, cols, FloatLanes::f64,
                                                 as("c128")));
      break;
    default: break;
  }
  peers.push_back(lt_peer(h.lt->get(), rows, cols, elem_size, dtype));
  return peers;
}

}  // namespace gt::bench
