#include "engine/cpu/host_buffer.hpp"

#include <sys/mman.h>

#include <cerrno>
#include <cstdlib>
#include <string>
#include <utility>

#include "gtranspose/error.hpp"
#include "gtranspose/sizes.hpp"

namespace gt::cpu {

namespace {
constexpr std::size_t kMapMin = std::size_t(2) << 20;
}

HostBuffer::HostBuffer(std::size_t bytes) : n_(bytes) {
  if (bytes == 0) return;
  if (bytes >= kMapMin) {
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw_errno(ErrorKind::io, "cannot allocate " + format_bytes(bytes) + " of host memory");
#ifdef MADV_HUGEPAGE
    madvise(p, bytes, MADV_HUGEPAGE);  // advice only: without THP the buffer still works
#endif
    p_ = static_cast<unsigned char*>(p);
    mapped_ = true;
    return;
  }
  void* p = nullptr;
  if (posix_memalign(&p, 64, bytes) != 0)
    throw Error(ErrorKind::io, "cannot allocate " + format_bytes(bytes) + " of host memory");
  p_ = static_cast<unsigned char*>(p);
}

HostBuffer::~HostBuffer() { release(); }

HostBuffer::HostBuffer(HostBuffer&& o) noexcept
    : p_(std::exchange(o.p_, nullptr)), n_(std::exchange(o.n_, 0)), mapped_(std::exchange(o.mapped_, false)) {}

HostBuffer& HostBuffer::operator=(HostBuffer&& o) noexcept {
  if (this != &o) {
    release();
    p_ = std::exchange(o.p_, nullptr);
    n_ = std::exchange(o.n_, 0);
    mapped_ = std::exchange(o.mapped_, false);
  }
  return *this;
}

void HostBuffer::release() {
  if (!p_) return;
  if (mapped_)
    munmap(p_, n_);
  else
    std::free(p_);
  p_ = nullptr;
  n_ = 0;
}

}  // namespace gt::cpu
