#include "dlpack.hpp"

#include <cstring>

namespace py = pybind11;

namespace gtpy {

DLPackView::DLPackView(const py::capsule& capsule) {
  const char* name = PyCapsule_GetName(capsule.ptr());
  if (!name || std::strcmp(name, "dltensor") != 0)
    throw py::value_error(std::string("expected an unused DLPack capsule named 'dltensor', got '") +
                          (name ? name : "(null)") + "'");
  t_ = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), "dltensor"));
  if (!t_) throw py::error_already_set();
  if (PyCapsule_SetName(capsule.ptr(), "used_dltensor") != 0) throw py::error_already_set();
}

DLPackView::~DLPackView() {
  if (t_ && t_->deleter) t_->deleter(t_);
}

void register_dlpack(py::module_& m) {
  py::class_<DLPackView>(m, "DLPackView",
                         "The tensor of a DLPack capsule, held (and the producer's memory kept alive) while this "
                         "object lives.")
      .def(py::init<const py::capsule&>(), py::arg("capsule"))
      .def_property_readonly("ptr",
                             [](const DLPackView& v) {
                               const DLTensor& t = v.tensor();
                               return reinterpret_cast<std::uintptr_t>(t.data) + t.byte_offset;
                             })
      .def_property_readonly("shape",
                             [](const DLPackView& v) {
                               const DLTensor& t = v.tensor();
                               py::tuple s(t.ndim);
                               for (int i = 0; i < t.ndim; ++i) s[i] = t.shape[i];
                               return s;
                             })
      .def_property_readonly("strides",
                             [](const DLPackView& v) -> py::object {
                               const DLTensor& t = v.tensor();
                               if (!t.strides) return py::none();
                               py::tuple s(t.ndim);
                               for (int i = 0; i < t.ndim; ++i) s[i] = t.strides[i];
                               return std::move(s);
                             },
                             "strides in elements, or None for a compact row-major tensor")
      .def_property_readonly("dtype",
                             [](const DLPackView& v) {
                               const DLDataType& d = v.tensor().dtype;
                               return py::make_tuple(d.code, d.bits, d.lanes);
                             },
                             "(code, bits, lanes): code 0 int, 1 uint, 2 float, 4 bfloat, 5 complex, 6 bool")
      .def_property_readonly("device", [](const DLPackView& v) {
        const DLDevice& d = v.tensor().device;
        return py::make_tuple(d.device_type, d.device_id);
      });
}

}  // namespace gtpy
