// Host memory for tiles and bench matrices: 64-byte aligned; large blocks
// come straight from mmap with transparent huge pages requested, because a
// transpose walks columns and 4 KiB pages would make nearly every strided
// row a TLB miss.
#pragma once
#include <cstddef>
#include <cstdint>

namespace gt::cpu {

class HostBuffer {
 public:
  HostBuffer() = default;
  // Throws gt::Error(io) when the memory cannot be had.
  explicit HostBuffer(std::size_t bytes);
  ~HostBuffer();
  HostBuffer(HostBuffer&& o) noexcept;
  HostBuffer& operator=(HostBuffer&& o) noexcept;
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;

  unsigned char* data() const { return p_; }
  std::size_t size() const { return n_; }

 private:
  void release();
  unsigned char* p_ = nullptr;
  std::size_t n_ = 0;
  bool mapped_ = false;
};

}  // namespace gt::cpu
