#include "errors.hpp"

#include <cerrno>
#include <string>

namespace py = pybind11;

namespace gtpy {
namespace {

// Owned by the module (added as attributes), so they live as long as it does.
struct Classes {
  PyObject* error = nullptr;
  PyObject* value = nullptr;
  PyObject* os = nullptr;
  PyObject* not_found = nullptr;
  PyObject* permission = nullptr;
  PyObject* exists = nullptr;
  PyObject* is_dir = nullptr;
  PyObject* not_dir = nullptr;
  PyObject* runtime = nullptr;
  PyObject* no_device = nullptr;
  PyObject* cuda = nullptr;
};
Classes g_classes;

PyObject* make_class(py::module_& m, const char* name, const char* doc, std::initializer_list<PyObject*> bases) {
  py::tuple b(bases.size());
  std::size_t i = 0;
  for (PyObject* base : bases) b[i++] = py::reinterpret_borrow<py::object>(base);
  const std::string qualified = std::string("gtranspose.") + name;
  PyObject* cls = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, b.ptr(), nullptr);
  if (!cls) throw py::error_already_set();
  m.add_object(name, py::reinterpret_steal<py::object>(cls));
  return cls;
}

PyObject* os_class_of(int e) {
  switch (e) {
    case ENOENT: return g_classes.not_found;
    case EACCES:
    case EPERM: return g_classes.permission;
    case EEXIST: return g_classes.exists;
    case EISDIR: return g_classes.is_dir;
    case ENOTDIR: return g_classes.not_dir;
    default: return g_classes.os;
  }
}

PyObject* class_of(const gt::Error& e) {
  switch (e.kind()) {
    case gt::ErrorKind::usage: return g_classes.value;
    case gt::ErrorKind::input:
    case gt::ErrorKind::output:
    case gt::ErrorKind::io: return os_class_of(e.sys_errno());
    case gt::ErrorKind::no_device: return g_classes.no_device;
    case gt::ErrorKind::cuda: return g_classes.cuda;
    case gt::ErrorKind::cancelled:
    case gt::ErrorKind::internal: return g_classes.runtime;
  }
  return g_classes.runtime;
}

// Raises `e` as its Python class. The message is the exception's only
// argument, so str(exc) is exactly the CLI's line; errno is set as an
// attribute (OSError(errno, msg) would print "[Errno 2] ..." instead).
void raise(const gt::Error& e) {
  PyObject* cls = class_of(e);
  const std::string msg = e.render(python_spelling);
  py::object exc = py::reinterpret_steal<py::object>(PyObject_CallFunction(cls, "s", msg.c_str()));
  if (!exc) return;  // the call left its own error set
  if (e.sys_errno() && PyObject_IsSubclass(cls, PyExc_OSError) == 1)
    exc.attr("errno") = py::int_(e.sys_errno());
  PyErr_SetObject(cls, exc.ptr());
}

}  // namespace

std::string python_spelling(std::string_view param) {
  // Switches read as the keyword set to True; the rest as the keyword's name.
  if (param == "force" || param == "in_place" || param == "resume") return std::string(param) + "=True";
  return std::string(param);
}

void register_errors(py::module_& m) {
  Classes& c = g_classes;
  c.error = make_class(m, "Error", "Base class of every exception gtranspose raises.", {PyExc_Exception});
  c.value = make_class(m, "GtValueError", "A bad argument: a shape, dtype, size, option or array gtranspose cannot take.",
                       {c.error, PyExc_ValueError});
  c.os = make_class(m, "GtOSError", "A file could not be opened, read, written or committed.", {c.error, PyExc_OSError});
  c.not_found = make_class(m, "GtFileNotFoundError", "The input file does not exist.", {c.os, PyExc_FileNotFoundError});
  c.permission =
      make_class(m, "GtPermissionError", "A file or folder may not be read or written.", {c.os, PyExc_PermissionError});
  c.exists = make_class(m, "GtFileExistsError", "A file exists where one was to be created.", {c.os, PyExc_FileExistsError});
  c.is_dir = make_class(m, "GtIsADirectoryError", "A folder was given where a file was expected.",
                        {c.os, PyExc_IsADirectoryError});
  c.not_dir = make_class(m, "GtNotADirectoryError", "A path goes through something that is not a folder.",
                         {c.os, PyExc_NotADirectoryError});
  c.runtime = make_class(m, "GtRuntimeError", "A failure that is not the caller's: a bug, or the device.",
                         {c.error, PyExc_RuntimeError});
  c.no_device = make_class(m, "NoDeviceError", "No usable GPU for what was asked (engine=\"cuda\", device arrays).",
                           {c.runtime});
  c.cuda = make_class(m, "CudaError", "A CUDA call failed.", {c.runtime});
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const gt::Error& e) {
      raise(e);
    }
  });
}

}  // namespace gtpy
