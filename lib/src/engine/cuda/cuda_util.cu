#include "engine/cuda/cuda_util.cuh"

#include <cstring>
#include <string>

#include "gtranspose/error.hpp"
#include "gtranspose/sizes.hpp"

namespace gt::cuda {

template <bool Pinned>
Buffer<Pinned>::Buffer(std::size_t bytes, const char* hint) : n_(bytes) {
  void* p = nullptr;
  cudaError_t e = Pinned ? cudaMallocHost(&p, bytes ? bytes : 1) : cudaMalloc(&p, bytes ? bytes : 1);
  if (e != cudaSuccess) {
    cudaGetLastError();
    n_ = 0;
    throw Error(ErrorKind::cuda, std::string("cannot allocate ") + format_bytes(bytes) +
                                     (Pinned ? " of pinned host memory: " : " on the GPU: ") + cudaGetErrorString(e) +
                                     (hint ? std::string(" (") + hint + ")" : std::string()));
  }
  p_ = static_cast<unsigned char*>(p);
}

template <bool Pinned>
cudaError_t Buffer<Pinned>::try_allocate(std::size_t bytes) {
  reset();
  void* p = nullptr;
  cudaError_t e = Pinned ? cudaMallocHost(&p, bytes ? bytes : 1) : cudaMalloc(&p, bytes ? bytes : 1);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return e;
  }
  p_ = static_cast<unsigned char*>(p);
  n_ = bytes;
  return cudaSuccess;
}

template <bool Pinned>
void Buffer<Pinned>::reset() {
  if (p_) {
    if (Pinned) cudaFreeHost(p_);
    else cudaFree(p_);
  }
  p_ = nullptr;
  n_ = 0;
}

template class Buffer<false>;
template class Buffer<true>;

Stream::Stream() { GT_CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
Stream::~Stream() {
  if (s_) cudaStreamDestroy(s_);
}

Event::Event(unsigned flags) { GT_CUDA_CHECK(cudaEventCreateWithFlags(&e_, flags)); }
Event::~Event() {
  if (e_) cudaEventDestroy(e_);
}

}  // namespace gt::cuda
