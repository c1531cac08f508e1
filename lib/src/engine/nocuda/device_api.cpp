// The device entry points of a CPU-only build: each says CUDA is absent, and
// a host registration holds nothing (host memory is then staged as usual).
#include <string>
#include <utility>

#include "gtranspose/device.hpp"
#include "gtranspose/error.hpp"

namespace gt {
namespace {

[[noreturn]] void no_cuda(const char* api) {
  throw Error(ErrorKind::no_device,
              std::string(api) + ": this gtranspose was built without CUDA: device arrays need a CUDA build");
}

}  // namespace

std::string transpose_device(const void*, void*, std::uint64_t, std::uint64_t, std::size_t, const DeviceOptions&) {
  no_cuda("gt::transpose_device");
}
std::string transpose_device_inplace(void*, std::uint64_t, std::size_t, const DeviceOptions&) {
  no_cuda("gt::transpose_device_inplace");
}
std::string transpose_device_inplace(void*, std::uint64_t, std::uint64_t, std::size_t, const DeviceOptions&) {
  no_cuda("gt::transpose_device_inplace");
}
void copy_device(const void*, void*, std::uint64_t, std::uint64_t, std::size_t, const DeviceOptions&) {
  no_cuda("gt::copy_device");
}

HostRegistration::HostRegistration(void*, std::size_t) : why_("this gtranspose was built without CUDA") {}
HostRegistration::~HostRegistration() = default;
HostRegistration::HostRegistration(HostRegistration&& o) noexcept : p_(std::exchange(o.p_, nullptr)), why_(std::move(o.why_)) {}
HostRegistration& HostRegistration::operator=(HostRegistration&& o) noexcept {
  p_ = std::exchange(o.p_, nullptr);
  why_ = std::move(o.why_);
  return *this;
}

}  // namespace gt
