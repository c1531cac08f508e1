// Host memory as a CPU-only build sees it: nothing is pinned, and pinned
// memory cannot be had.
#include "gtranspose/cuda.hpp"
#include "gtranspose/error.hpp"

namespace gt {

PointerKind cuda_pointer_kind(const void*) { return PointerKind::unregistered; }
bool is_pinned_host(const void*) { return false; }

void* alloc_pinned(std::size_t bytes) {
  if (bytes == 0) return nullptr;
  throw Error(ErrorKind::no_device,
              "cannot allocate pinned host memory: this gtranspose was built without CUDA (use ordinary memory)");
}
void free_pinned(void*) noexcept {}

}  // namespace gt
