// What the CUDA side offers the rest of the library. Every function here
// exists in a CPU-only build too, where it reports that CUDA is absent.
#pragma once
#include <cstddef>
#include <string>
#include <utility>
#include <vector>


namespace gt {

bool built_with_cuda();
// Number of usable devices (0 when the build has no CUDA, the driver is
// missing or no GPU exists); `why` receives the reason when 0.
int cuda_device_count(std::string* why = nullptr);
std::string cuda_device_name(int device = 0);
// The CUDA runtime this build carries and the newest CUDA the installed
// driver supports, as 1000*major + 10*minor (12040: 12.4); 0 when there is
// none (a CPU-only build; no driver).
int cuda_runtime_version();
int cuda_driver_version();

struct KernelListing {
  std::string name, kind, description;
};
std::vector<KernelListing> list_kernels();  // empty in a CPU-only build
// Whether the kernel registry of this build knows `name` (a CPU-only build
// knows none); the one check of a kernel name outside the CUDA engine.
bool kernel_known(const std::string& name);

// What CUDA knows about an address: ordinary (pageable) memory, host memory
// page-locked by cudaMallocHost or cudaHostRegister, GPU memory, or managed
// memory. `unregistered` whenever CUDA cannot say (CPU-only build, no driver,
// no GPU); any error the query raises is cleared. The first call starts the
// CUDA runtime on the current device where one exists.
enum class PointerKind { unregistered, pinned_host, device, managed };
PointerKind cuda_pointer_kind(const void* p);
// True for host memory that CUDA copies by DMA directly (PointerKind::pinned_host).
bool is_pinned_host(const void* p);

// Page-locked host memory (cudaMallocHost), for programs that want the
// host-memory API's fastest path without including CUDA headers. Throws
// gt::Error(no_device) where there is no usable GPU (and in a CPU-only build),
// gt::Error(cuda) when the allocation fails. 0 bytes gives nullptr;
// free_pinned(nullptr) does nothing.
void* alloc_pinned(std::size_t bytes);
void free_pinned(void* p) noexcept;

// Owns one alloc_pinned allocation.
class PinnedHostBuffer {
 public:
  PinnedHostBuffer() = default;
  explicit PinnedHostBuffer(std::size_t bytes) : p_(alloc_pinned(bytes)), n_(bytes) {}
  ~PinnedHostBuffer() { free_pinned(p_); }
  PinnedHostBuffer(PinnedHostBuffer&& o) noexcept : p_(std::exchange(o.p_, nullptr)), n_(std::exchange(o.n_, 0)) {}
  PinnedHostBuffer& operator=(PinnedHostBuffer&& o) noexcept {
    if (this != &o) {
      free_pinned(p_);
      p_ = std::exchange(o.p_, nullptr);
      n_ = std::exchange(o.n_, 0);
    }
    return *this;
  }
  PinnedHostBuffer(const PinnedHostBuffer&) = delete;
  PinnedHostBuffer& operator=(const PinnedHostBuffer&) = delete;
  void* data() const { return p_; }
  std::size_t size() const { return n_; }

 private:
  void* p_ = nullptr;
  std::size_t n_ = 0;
};

}  // namespace gt
