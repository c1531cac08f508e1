// Host memory as CUDA sees it: which addresses are pinned (so the engine may
// DMA them directly), and pinned allocations for programs that do not include
// CUDA headers.
#include <cuda_runtime_api.h>

#include <string>

#include "gtranspose/cuda.hpp"
#include "gtranspose/error.hpp"
#include "gtranspose/sizes.hpp"

namespace gt {

PointerKind cuda_pointer_kind(const void* p) {
  // Without a usable device every query fails; say so without asking (and
  // without leaving an error behind for the next CUDA call to trip on).
  if (!p || cuda_device_count() == 0) return PointerKind::unregistered;
  cudaPointerAttributes a{};
  const cudaError_t e = cudaPointerGetAttributes(&a, p);
  if (e != cudaSuccess) {
    // CUDA 10 and older answer cudaErrorInvalidValue for plain malloc memory;
    // 11 and newer say cudaMemoryTypeUnregistered with no error.
    cudaGetLastError();
    return PointerKind::unregistered;
  }
  switch (a.type) {
    case cudaMemoryTypeHost: return PointerKind::pinned_host;
    case cudaMemoryTypeDevice: return PointerKind::device;
    case cudaMemoryTypeManaged: return PointerKind::managed;
    default: return PointerKind::unregistered;
  }
}

bool is_pinned_host(const void* p) { return cuda_pointer_kind(p) == PointerKind::pinned_host; }

void* alloc_pinned(std::size_t bytes) {
  if (bytes == 0) return nullptr;
  std::string why;
  if (cuda_device_count(&why) == 0)
    throw Error(ErrorKind::no_device, "cannot allocate pinned host memory: " + why);
  void* p = nullptr;
  const cudaError_t e = cudaMallocHost(&p, bytes);
  if (e != cudaSuccess) {
    cudaGetLastError();
    throw Error(ErrorKind::cuda, "cannot allocate " + format_bytes(bytes) + " of pinned host memory: " +
                                     cudaGetErrorString(e));
  }
  return p;
}

void free_pinned(void* p) noexcept {
  if (p && cudaFreeHost(p) != cudaSuccess) cudaGetLastError();
}

}  // namespace gt
