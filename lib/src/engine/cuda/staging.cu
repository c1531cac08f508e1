#include "engine/cuda/staging.cuh"

namespace gt::cuda {

cudaError_t PinnedPool::take(std::size_t bytes, PinnedBuffer& out) {
  {
    std::lock_guard<std::mutex> lk(mu_);
    for (auto it = kept_.begin(); it != kept_.end(); ++it)
      if (it->size() == bytes) {
        out = std::move(*it);
        kept_.erase(it);
        return cudaSuccess;
      }
  }
  return out.try_allocate(bytes);
}

void PinnedPool::trim(std::size_t bytes, std::size_t count) {
  std::lock_guard<std::mutex> lk(mu_);
  std::vector<PinnedBuffer> keep;
  for (auto& k : kept_)
    if (k.size() == bytes && keep.size() < count) keep.push_back(std::move(k));
  kept_ = std::move(keep);
}

void PinnedPool::give(PinnedBuffer&& b) {
  if (!b.get()) return;
  std::lock_guard<std::mutex> lk(mu_);
  std::vector<PinnedBuffer> keep;
  for (auto& k : kept_)
    if (k.size() == b.size()) keep.push_back(std::move(k));
  kept_ = std::move(keep);  // buffers of another size are freed here
  kept_.push_back(std::move(b));
}

bool allocate_lanes(std::vector<std::unique_ptr<Lane>>& out, int count, int bufs, std::size_t bytes) {
  out.clear();
  for (int i = 0; i < count; ++i) {
    auto lane = std::make_unique<Lane>();
    for (int j = 0; j < bufs; ++j) {
      const cudaError_t e = lane->d[j].try_allocate(bytes);
      if (e == cudaErrorMemoryAllocation) {
        out.clear();
        return false;
      }
      GT_CUDA_CHECK(e);
    }
    out.push_back(std::move(lane));
  }
  return true;
}

}  // namespace gt::cuda
