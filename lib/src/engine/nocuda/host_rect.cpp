// engine/host_rect.hpp in a CPU-only build: never through a GPU.
#include "engine/host_rect.hpp"

namespace gt::cuda {

bool host_rect_inplace(void*, std::uint64_t, std::uint64_t, std::size_t, std::uint64_t, std::uint64_t,
                       const std::atomic<bool>*, HostRectRun&, std::string* why) {
  if (why) *why = "this gtranspose was built without CUDA";
  return false;
}

}  // namespace gt::cuda
