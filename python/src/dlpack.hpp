// DLPack (https://dmlc.github.io/dlpack/): the tensor a producer's
// __dlpack__() hands over in a capsule, read without the DLPack headers.
// The structs below are DLPack's stable C ABI (dlpack.h, unversioned form,
// which every producer still gives when no max_version is asked for).
#pragma once
#include <pybind11/pybind11.h>

#include <cstdint>

namespace gtpy {

struct DLDevice {
  std::int32_t device_type;  // 1 CPU, 2 CUDA, 3 CUDA host (pinned), 13 CUDA managed
  std::int32_t device_id;
};
struct DLDataType {
  std::uint8_t code;  // 0 int, 1 uint, 2 float, 4 bfloat, 5 complex, 6 bool
  std::uint8_t bits;
  std::uint16_t lanes;
};
struct DLTensor {
  void* data;
  DLDevice device;
  std::int32_t ndim;
  DLDataType dtype;
  std::int64_t* shape;
  std::int64_t* strides;  // in elements; null for a compact row-major tensor
  std::uint64_t byte_offset;
};
struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor* self);
};

// Takes the tensor out of a "dltensor" capsule (renaming it "used_dltensor",
// as the protocol asks of a consumer) and gives it back to its producer,
// through its deleter, when this object dies.
class DLPackView {
 public:
  explicit DLPackView(const pybind11::capsule& capsule);
  ~DLPackView();
  DLPackView(const DLPackView&) = delete;
  DLPackView& operator=(const DLPackView&) = delete;
  const DLTensor& tensor() const { return t_->dl_tensor; }

 private:
  DLManagedTensor* t_ = nullptr;
};

void register_dlpack(pybind11::module_& m);

}  // namespace gtpy
