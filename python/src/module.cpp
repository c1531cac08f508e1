// gtranspose._core: the library as Python sees it. Pointers, shapes and
// options in, the library's report (as its JSON) out; the array protocols
// (NumPy, __cuda_array_interface__, DLPack) are read by the package's Python
// files, which call these. Nothing here decides anything the library does:
// each function fills the library's option structs and calls it.
#include <pybind11/pybind11.h>

#include <chrono>
#include <cstdio>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "dlpack.hpp"
#include "errors.hpp"
#include "gtranspose/cuda.hpp"
#include "gtranspose/device.hpp"
#include "gtranspose/host.hpp"
#include "gtranspose/job.hpp"
#include "gtranspose/memory.hpp"
#include "gtranspose/sizes.hpp"
#include "gtranspose/types.hpp"
#include "runner.hpp"

namespace py = pybind11;

namespace gtpy {
namespace {

void* as_ptr(std::uintptr_t p) { return reinterpret_cast<void*>(p); }

// The options every run takes; 0 (or "auto") leaves a choice to the run plan.
struct RunArgs {
  std::uint64_t host_mem = 0, device_mem = 0, tile = 0;
  int threads = 0, streams = 0;
  std::string kernel = "auto";

  gt::RunOptions options() const {
    gt::RunOptions o;
    o.host_mem = host_mem;
    o.device_mem = device_mem;
    o.tile_elems = tile;
    o.threads = threads;
    o.streams = streams;
    o.kernel = kernel;
    return o;
  }
};

// The report as the CLI's --json writes it, its notes spelled for Python.
std::string report_for_python(gt::RunReport r) {
  for (auto& n : r.notes) n = gt::render_params(n, python_spelling);
  return gt::report_json(r);
}

// Host memory registered with CUDA for one call (HostOptions' pinned path),
// and what it cost, for the report: the figure that says whether it pays.
struct Registrations {
  gt::HostRegistration in, out;
  double seconds = 0;
  void add_note(gt::RunReport& r) const {
    if (in.registered() && out.registered()) {
      char s[32];
      std::snprintf(s, sizeof s, "%.3f", seconds);
      r.notes.push_back(std::string("input and output registered with CUDA for the call in ") + s + " s");
    } else if (in.registered()) {
      r.notes.push_back("the output not registered (" + out.why() + "): staged through pinned buffers");
    } else {
      r.notes.push_back("host memory not registered (" + in.why() + "): staged through pinned buffers");
    }
  }
};

Registrations register_pair(const gt::HostMatrix& in, const gt::HostMatrix& out) {
  const auto t0 = std::chrono::steady_clock::now();
  Registrations r;
  r.in = gt::HostRegistration(in.data, gt::host_matrix_span(in));
  if (r.in.registered()) r.out = gt::HostRegistration(out.data, gt::host_matrix_span(out));
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

// One gt::Transposer (its engine keeps pinned staging from call to call).
// The library's Transposer takes one call at a time; Python threads that
// share one wait their turn, with the GIL released.
class PyTransposer {
 public:
  explicit PyTransposer(const std::string& engine) : t_(gt::parse_engine(engine)) {}

  std::string transpose(std::uintptr_t in, std::uintptr_t out, std::uint64_t rows, std::uint64_t cols,
                        std::size_t elem_size, std::uint64_t ld_in, std::uint64_t ld_out, const RunArgs& args,
                        bool register_memory, const py::object& progress) {
    gt::HostOptions o;
    o.ld_in = ld_in;
    o.ld_out = ld_out;
    return run(args, progress, [&, o](const gt::RunOptions& run) mutable {
      o.run = run;
      if (t_.kind() != gt::EngineKind::cuda) {
        gt::RunReport r = t_.transpose(as_ptr(in), as_ptr(out), rows, cols, elem_size, o);
        if (register_memory) r.notes.push_back("register=True: the CPU engine reads host memory where it lies");
        return r;
      }
      if (!register_memory) return t_.transpose(as_ptr(in), as_ptr(out), rows, cols, elem_size, o);
      const Registrations regs = register_pair(gt::HostMatrix{as_ptr(in), {rows, cols}, elem_size, ld_in},
                                               gt::HostMatrix{as_ptr(out), {cols, rows}, elem_size, ld_out});
      gt::RunReport r = t_.transpose(as_ptr(in), as_ptr(out), rows, cols, elem_size, o);
      regs.add_note(r);
      return r;
    });
  }

  std::string transpose_inplace(std::uintptr_t data, std::uint64_t n, std::size_t elem_size, std::uint64_t ld,
                                const RunArgs& args, const py::object& progress) {
    return transpose_inplace_rect(data, n, n, elem_size, ld, args, progress);
  }

  // rows x cols row-major (a rectangle has no gaps between rows: ld is
  // cols, the library checks it), into cols x rows in the same memory.
  std::string transpose_inplace_rect(std::uintptr_t data, std::uint64_t rows, std::uint64_t cols,
                                     std::size_t elem_size, std::uint64_t ld, const RunArgs& args,
                                     const py::object& progress) {
    gt::HostOptions o;
    o.ld_in = ld;
    return run(args, progress, [&, o](const gt::RunOptions& run) mutable {
      o.run = run;
      return t_.transpose_inplace(as_ptr(data), rows, cols, elem_size, o);
    });
  }

  void release() {
    py::gil_scoped_release nogil;
    std::lock_guard<std::mutex> lk(m_);
    t_.release();
  }

  std::string kind() const { return t_.kind() == gt::EngineKind::cuda ? "cuda" : "cpu"; }

 private:
  template <class F>
  std::string run(const RunArgs& args, const py::object& progress, F&& f) {
    const gt::RunReport r = run_released(
        [&](const gt::RunOptions& run) {
          std::lock_guard<std::mutex> lk(m_);
          return f(run);
        },
        args.options(), progress);
    return report_for_python(r);
  }

  gt::Transposer t_;
  std::mutex m_;
};

std::string run_job(const std::string& input, const std::string& output, bool in_place, bool resume,
                    const std::string& shape, const std::string& dtype, bool force, const std::string& engine,
                    const RunArgs& args, const py::object& progress) {
  gt::JobOptions job;
  job.input = input;
  job.output = output;
  job.in_place = in_place;
  job.resume = resume;
  if (!shape.empty()) job.open.shape = gt::parse_shape(shape);
  if (!dtype.empty()) {
    job.open.dtype = gt::parse_dtype(dtype);
    if (!job.open.dtype)
      throw gt::Error(gt::ErrorKind::usage, "unknown {dtype} '" + dtype + "': use one of " + gt::dtype_names());
  }
  job.sink.force = force;
  job.engine = gt::parse_engine(engine);
  return report_for_python(run_released([&](const gt::RunOptions& run) {
    gt::JobOptions j = job;
    j.run = run;
    return gt::run_job(j);
  }, args.options(), progress));
}

gt::DeviceOptions device_options(std::uint64_t ld_in, std::uint64_t ld_out, std::uintptr_t stream,
                                 const std::string& kernel) {
  gt::DeviceOptions o;
  o.ld_in = ld_in;
  o.ld_out = ld_out;
  o.stream = stream;
  o.kernel = kernel;
  return o;
}

// Page-locked host memory a NumPy array can be made over (buffer protocol).
class PinnedBuffer {
 public:
  explicit PinnedBuffer(std::size_t bytes) : b_(bytes) {}
  void* data() const { return b_.data(); }
  std::size_t size() const { return b_.size(); }

 private:
  gt::PinnedHostBuffer b_;
};

}  // namespace
}  // namespace gtpy

PYBIND11_MODULE(_core, m) {
  using namespace gtpy;
  m.doc() = "gtranspose's compiled core: the library's entry points on pointers. Use the gtranspose package.";
  register_errors(m);
  register_dlpack(m);

  py::class_<RunArgs>(m, "RunArgs", "Budgets and choices of one run (0 or 'auto': the run plan's choice).")
      .def(py::init([](std::uint64_t host_mem, std::uint64_t device_mem, std::uint64_t tile, int threads, int streams,
                       std::string kernel) {
             return RunArgs{host_mem, device_mem, tile, threads, streams, std::move(kernel)};
           }),
           py::arg("host_mem") = 0, py::arg("device_mem") = 0, py::arg("tile") = 0, py::arg("threads") = 0,
           py::arg("streams") = 0, py::arg("kernel") = "auto");

  py::class_<PyTransposer>(m, "Transposer")
      .def(py::init<const std::string&>(), py::arg("engine") = "auto")
      .def("transpose", &PyTransposer::transpose, py::arg("in_ptr"), py::arg("out_ptr"), py::arg("rows"),
           py::arg("cols"), py::arg("elem_size"), py::arg("ld_in"), py::arg("ld_out"), py::arg("args"),
           py::arg("register_memory"), py::arg("progress"))
      .def("transpose_inplace", &PyTransposer::transpose_inplace, py::arg("ptr"), py::arg("n"), py::arg("elem_size"),
           py::arg("ld"), py::arg("args"), py::arg("progress"))
      .def("transpose_inplace_rect", &PyTransposer::transpose_inplace_rect, py::arg("ptr"), py::arg("rows"),
           py::arg("cols"), py::arg("elem_size"), py::arg("ld"), py::arg("args"), py::arg("progress"))
      .def("release", &PyTransposer::release)
      .def_property_readonly("kind", &PyTransposer::kind);

  m.def("run_job", &run_job, py::arg("input"), py::arg("output"), py::arg("in_place"), py::arg("resume"),
        py::arg("shape"), py::arg("dtype"), py::arg("force"), py::arg("engine"), py::arg("args"),
        py::arg("progress"));

  m.def(
      "transpose_device",
      [](std::uintptr_t in, std::uintptr_t out, std::uint64_t rows, std::uint64_t cols, std::size_t es,
         std::uint64_t ld_in, std::uint64_t ld_out, std::uintptr_t stream, const std::string& kernel) {
        py::gil_scoped_release nogil;
        return gt::transpose_device(as_ptr(in), as_ptr(out), rows, cols, es,
                                    device_options(ld_in, ld_out, stream, kernel));
      },
      py::arg("in_ptr"), py::arg("out_ptr"), py::arg("rows"), py::arg("cols"), py::arg("elem_size"),
      py::arg("ld_in"), py::arg("ld_out"), py::arg("stream"), py::arg("kernel"));
  m.def(
      "transpose_device_inplace",
      [](std::uintptr_t data, std::uint64_t n, std::size_t es, std::uint64_t ld, std::uintptr_t stream,
         const std::string& kernel) {
        py::gil_scoped_release nogil;
        return gt::transpose_device_inplace(as_ptr(data), n, es, device_options(ld, 0, stream, kernel));
      },
      py::arg("ptr"), py::arg("n"), py::arg("elem_size"), py::arg("ld"), py::arg("stream"), py::arg("kernel"));
  m.def(
      "transpose_device_inplace_rect",
      [](std::uintptr_t data, std::uint64_t rows, std::uint64_t cols, std::size_t es, std::uintptr_t stream,
         const std::string& kernel) {
        py::gil_scoped_release nogil;
        return gt::transpose_device_inplace(as_ptr(data), rows, cols, es, device_options(0, 0, stream, kernel));
      },
      py::arg("ptr"), py::arg("rows"), py::arg("cols"), py::arg("elem_size"), py::arg("stream"), py::arg("kernel"));
  m.def(
      "copy_device",
      [](std::uintptr_t in, std::uintptr_t out, std::uint64_t rows, std::uint64_t cols, std::size_t es,
         std::uint64_t ld_in, std::uint64_t ld_out, std::uintptr_t stream) {
        py::gil_scoped_release nogil;
        gt::copy_device(as_ptr(in), as_ptr(out), rows, cols, es, device_options(ld_in, ld_out, stream, "auto"));
      },
      py::arg("in_ptr"), py::arg("out_ptr"), py::arg("rows"), py::arg("cols"), py::arg("elem_size"),
      py::arg("ld_in"), py::arg("ld_out"), py::arg("stream"));

  py::class_<PinnedBuffer>(m, "PinnedBuffer", py::buffer_protocol(), "Page-locked host memory (cudaMallocHost).")
      .def(py::init<std::size_t>(), py::arg("bytes"))
      .def_buffer([](PinnedBuffer& b) {
        return py::buffer_info(b.data(), 1, py::format_descriptor<std::uint8_t>::format(), 1,
                               {py::ssize_t(b.size())}, {py::ssize_t(1)});
      });

  m.def("built_with_cuda", &gt::built_with_cuda);
  m.def("cuda_device_count", [] {
    std::string why;
    const int n = gt::cuda_device_count(&why);
    return py::make_tuple(n, why);
  });
  m.def("list_kernels", [] {
    py::list out;
    for (const auto& k : gt::list_kernels()) out.append(py::make_tuple(k.name, k.kind, k.description));
    return out;
  });
  m.def("parse_size", [](const std::string& s) { return gt::parse_size(s); }, py::arg("text"));
  m.def("dtype_names", &gt::dtype_names);
  m.def(
      "prefault",
      [](std::uintptr_t p, std::uint64_t bytes) {
        py::gil_scoped_release nogil;
        return gt::prefault_host(as_ptr(p), bytes);
      },
      py::arg("ptr"), py::arg("bytes"));
  m.def("is_pinned_host", [](std::uintptr_t p) { return gt::is_pinned_host(as_ptr(p)); }, py::arg("ptr"));
}
