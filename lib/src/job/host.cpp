// The host-memory API (host.hpp): checks the caller's arrays, wraps them as
// memory Sources, Sinks and InplaceMatrices (memory.hpp) and runs the engine
// the request resolves to, exactly as run_job does for files.
#include "gtranspose/host.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "core/team.hpp"
#include "engine/host_rect.hpp"
#include "gtranspose/cuda.hpp"
#include "gtranspose/error.hpp"
#include "gtranspose/inplace_writer.hpp"
#include "gtranspose/job.hpp"
#include "gtranspose/journal.hpp"
#include "gtranspose/machine.hpp"
#include "gtranspose/memory.hpp"
#include "gtranspose/plan.hpp"
#include "gtranspose/sizes.hpp"
#include "inplace/general.hpp"

namespace gt {
namespace {

[[noreturn]] void usage(const char* api, const std::string& what) {
  throw Error(ErrorKind::usage, std::string(api) + ": " + what);
}

void check_common(const char* api, std::uint64_t rows, std::uint64_t cols, std::size_t elem_size) {
  if (rows == 0 || cols == 0)
    usage(api, "the matrix is empty (" + to_string(Shape{rows, cols}) + "): rows and cols must be at least 1");
  if (!supported_elem_size(elem_size))
    usage(api, "unsupported element size " + std::to_string(elem_size) + " bytes (use 1, 2, 4, 8 or 16)");
}

// The address range [begin, end) the matrix touches; refuses one whose size
// or end does not fit the address space (a wrong ld, rows or cols).
struct Range {
  std::uintptr_t begin = 0, end = 0;
};
Range range_of(const char* api, const char* name, const HostMatrix& m) {
  std::uint64_t span = 0;
  try {
    span = host_matrix_span(m);
  } catch (const Error&) {
    usage(api, std::string("the ") + name + " matrix (" + to_string(m.shape) + ", ld " + std::to_string(m.ld) + ", " +
                   std::to_string(m.elem_size) + "-byte elements) is larger than 64 bits can address");
  }
  const auto begin = reinterpret_cast<std::uintptr_t>(m.data);
  if (span > UINTPTR_MAX - begin)
    usage(api, std::string("the ") + name + " matrix (" + std::to_string(span) +
                   " bytes) runs past the end of the address space");
  return {begin, begin + span};
}

// Asks CUDA what memory the matrix lies in (only for the CUDA engine: the CPU
// engine has no use for the answer, and asking starts a CUDA context). Pinned
// means both the first and the last byte are: a registration covers one
// contiguous range, so a matrix pinned at both ends is pinned throughout.
HostMemoryKind memory_kind(const char* api, const char* name, const Range& r) {
  const PointerKind first = cuda_pointer_kind(reinterpret_cast<const void*>(r.begin));
  const PointerKind last = cuda_pointer_kind(reinterpret_cast<const void*>(r.end - 1));
  if (first == PointerKind::device || last == PointerKind::device)
    usage(api, std::string("the ") + name + " pointer is GPU memory: pass host memory (the library copies it to the "
                                            "GPU and back itself)");
  // Managed memory is host-accessible and staged like pageable memory.
  return first == PointerKind::pinned_host && last == PointerKind::pinned_host ? HostMemoryKind::pinned
                                                                                : HostMemoryKind::pageable;
}

// The caller's arrays, checked (before any engine is made, so a bad
// argument is a usage error on every machine).
struct OutOfPlace {
  HostMatrix src, dst;
  Range ri, ro;
};

OutOfPlace check_out_of_place(const void* in, void* out, std::uint64_t rows, std::uint64_t cols,
                              std::size_t elem_size, const HostOptions& opts) {
  const char* api = "gt::transpose";
  if (!in) usage(api, "in is a null pointer");
  if (!out) usage(api, "out is a null pointer");
  check_common(api, rows, cols, elem_size);
  // The input is rows x cols, the output its cols x rows transpose.
  OutOfPlace a;
  a.src = HostMatrix{const_cast<void*>(in), {rows, cols}, elem_size, opts.ld_in ? opts.ld_in : cols};
  a.dst = HostMatrix{out, {cols, rows}, elem_size, opts.ld_out ? opts.ld_out : rows};
  if (a.src.ld < cols)
    usage(api, "ld_in " + std::to_string(a.src.ld) + " is less than a row of the input (" + std::to_string(cols) +
                   " columns)");
  if (a.dst.ld < rows)
    usage(api, "ld_out " + std::to_string(a.dst.ld) + " is less than a row of the output (" + std::to_string(rows) +
                   " columns: the output is " + to_string(a.dst.shape) + ")");
  a.ri = range_of(api, "input", a.src);
  a.ro = range_of(api, "output", a.dst);
  // Whole ranges, first element to last: an interleaving of two strided
  // matrices that share no element is refused too, which is the safe side.
  if (a.ri.begin < a.ro.end && a.ro.begin < a.ri.end)
    usage(api, "in and out overlap: give the output its own memory, or use gt::transpose_inplace for a square "
               "matrix");
  return a;
}

struct InPlace {
  HostMatrix m;
  Range r;
  bool general = false;  // a rectangle the engines' stages do not take
};

// The report of a host-memory rectangle in place, begun at t0.
RunReport rect_report(const HostMatrix& m, const char* engine, const char* kernel, std::vector<StageStat> stages,
                      std::chrono::steady_clock::time_point t0) {
  RunReport r;
  r.stages = std::move(stages);
  r.engine = engine;
  r.kernel = kernel;
  r.mode = "in-place";
  r.input = r.output = "host memory";
  r.shape = m.shape;
  r.elem_size = m.elem_size;
  r.bytes = m.shape.rows * m.shape.cols * m.elem_size;
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

// A rectangle of no R = kC shape: the gcd decomposition on the CPU's
// threads, whichever engine the Transposer has (the data is in host memory
// and each step moves elements within one row or one column).
RunReport general_inplace(const HostMatrix& m, const HostOptions& opts, EngineKind engine) {
  const std::uint64_t budget = opts.run.host_mem ? opts.run.host_mem : default_host_budget();
  const inplace::GeneralRun run = inplace::plan_general(m.shape.rows, m.shape.cols, m.elem_size, opts.run.threads, budget);
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<StageStat> steps =
      inplace::transpose_general(m.data, m.shape.rows, m.shape.cols, m.elem_size, run, opts.run.stage);
  RunReport r = rect_report(m, "cpu", "gcd decomposition", std::move(steps), t0);
  r.threads = run.threads;
  r.host_mem_budget = budget;
  r.host_buffers = run.scratch;
  r.notes.push_back("rectangle in place by the gcd decomposition (Catanzaro, Keller and Garland): " +
                    std::string(run.rotated ? "a column rotation, " : "") + "a row shuffle and a column shuffle" +
                    (run.skew ? " (a skew of bands of columns, each written back in the row map's order), "
                              : " (gathered down bands of columns), ") +
                    std::to_string(run.threads) + " threads, columns in bands of " + std::to_string(run.band) + ", " +
                    format_bytes(run.scratch) + " of scratch; not interruptible once begun");
  if (engine == EngineKind::cuda) r.notes.push_back("the CPU's threads ran it, not the GPU");
  return r;
}

InPlace check_in_place(void* data, std::uint64_t rows, std::uint64_t cols, std::size_t elem_size,
                       const HostOptions& opts) {
  const char* api = "gt::transpose_inplace";
  if (!data) usage(api, "data is a null pointer");
  check_common(api, rows, cols, elem_size);
  InPlace a;
  a.m = HostMatrix{data, {rows, cols}, elem_size, opts.ld_in ? opts.ld_in : cols};
  if (a.m.ld < cols)
    usage(api, "ld_in " + std::to_string(a.m.ld) + " is less than a row of the matrix (" + std::to_string(cols) + ")");
  if (opts.ld_out != 0 && opts.ld_out != a.m.ld)
    usage(api, "ld_out " + std::to_string(opts.ld_out) + " differs from the matrix's leading dimension " +
                   std::to_string(a.m.ld) + ": in place, ld_in is the only one (leave ld_out 0)");
  if (rows != cols) {
    // The transpose of a rectangle has rows of another length: only a
    // matrix with no gaps between its rows has room for them.
    if (a.m.ld != cols)
      usage(api, "a " + to_string(a.m.shape) + " rectangle with ld_in " + std::to_string(a.m.ld) +
                     " cannot be transposed in place (its transpose's rows would not fit): leave ld_in 0");
    // R = kC and C = kR go through the engines' stages; any other shape
    // through the gcd decomposition in memory (general.hpp), which moves a
    // grid's elements fewer times than its stages would (three passes, no
    // cycle following), and needs no bands in memory.
    const InplaceShape::Kind k = plan_inplace_shape(a.m.shape, "the matrix").kind;
    a.general = k == InplaceShape::grid || k == InplaceShape::general;
  }
  a.r = range_of(api, "in-place", a.m);
  return a;
}

// Faults in pages [first, first + n) from `base` for writing. MADV_POPULATE_WRITE
// (Linux 5.14) keeps the contents without touching them; older kernels get a
// read and write back of one byte a page (the memory is the caller's alone
// while the call runs, as it is during a transpose).
void fault_in(unsigned char* base, std::uint64_t first, std::uint64_t n, std::uint64_t page) {
  unsigned char* p = base + first * page;
#ifdef MADV_POPULATE_WRITE
  if (madvise(p, std::size_t(n * page), MADV_POPULATE_WRITE) == 0) return;
  if (errno != EINVAL)
    throw Error(ErrorKind::io, "gt::prefault_host: cannot make " + format_bytes(n * page) +
                                   " of host memory present: " + std::strerror(errno));
#endif
  for (std::uint64_t i = 0; i < n; ++i) {
    volatile unsigned char* b = p + i * page;
    *b = *b;
  }
}

}  // namespace

int prefault_host(void* data, std::uint64_t bytes) {
  if (bytes == 0) return 0;
  if (!data) usage("gt::prefault_host", "data is a null pointer");
  const long ps = sysconf(_SC_PAGESIZE);
  const std::uint64_t page = ps > 0 ? std::uint64_t(ps) : 4096;
  const auto begin = reinterpret_cast<std::uintptr_t>(data);
  if (bytes > UINTPTR_MAX - begin) usage("gt::prefault_host", "the range runs past the end of the address space");
  // Whole pages: the first and last may hold the caller's other data,
  // which faulting in leaves as it is.
  const std::uintptr_t first = begin / page * page;
  const std::uint64_t pages = (begin + bytes - first + page - 1) / page;
  CopyTeam team(plan_prefault_threads(bytes, int(usable_cores())));
  const std::uint64_t min_pages = std::max<std::uint64_t>(1, kTeamBandBytes / page);
  auto* base = reinterpret_cast<unsigned char*>(first);
  team.split(pages, min_pages, [&](std::uint64_t p0, std::uint64_t n) { fault_in(base, p0, n, page); });
  return team.size();
}

Transposer::Transposer(EngineChoice engine) {
  const EngineDecision d = decide_engine(engine);
  engine_ = make_engine(d.kind);
  note_ = d.note;
}

Transposer::~Transposer() = default;
Transposer::Transposer(Transposer&&) noexcept = default;
Transposer& Transposer::operator=(Transposer&&) noexcept = default;

EngineKind Transposer::kind() const { return engine_->kind(); }
void Transposer::release() { engine_->release(); }

RunReport Transposer::transpose(const void* in, void* out, std::uint64_t rows, std::uint64_t cols,
                                std::size_t elem_size, const HostOptions& opts) {
  OutOfPlace a = check_out_of_place(in, out, rows, cols, elem_size, opts);
  if (kind() == EngineKind::cuda) {
    a.src.memory = memory_kind("gt::transpose", "input", a.ri);
    a.dst.memory = memory_kind("gt::transpose", "output", a.ro);
  }
  auto source = memory_source(a.src);
  auto sink = memory_sink(a.dst);
  RunReport r = execute(*engine_, *source, *sink, opts.run);
  sink->commit();  // nothing to do for memory; kept so a sink is always committed
  if (!note_.empty()) r.notes.insert(r.notes.begin(), note_);
  return r;
}

// The same rectangle through the GPU where the device budget holds it
// whole (engine/host_rect.hpp): nothing, with why, where it does not.
std::optional<RunReport> device_general_inplace(const HostMatrix& m, const HostOptions& opts, std::string* why) {
  const std::uint64_t bytes = m.shape.rows * m.shape.cols * m.elem_size;
  const char* min_env = std::getenv("GT_TEST_HOST_RECT_MIN_BYTES");
  const std::uint64_t min_bytes = min_env && *min_env ? std::strtoull(min_env, nullptr, 10) : kHostRectGpuMinBytes;
  if (bytes < min_bytes) {
    if (why)
      *why = "the matrix (" + format_bytes(bytes) + ") is under " + format_bytes(min_bytes) +
             ", where the CPU's decomposition is faster than the copies through the GPU";
    return std::nullopt;
  }
  const auto t0 = std::chrono::steady_clock::now();
  const std::uint64_t host_budget = opts.run.host_mem ? opts.run.host_mem : default_host_budget();
  cuda::HostRectRun run;
  if (!cuda::host_rect_inplace(m.data, m.shape.rows, m.shape.cols, m.elem_size, opts.run.device_mem, host_budget,
                               opts.run.cancel, run, why))
    return std::nullopt;
  RunReport r = rect_report(m, "cuda", "inplace-rect", std::move(run.stages), t0);
  r.device_mem_budget = run.device_budget;
  r.device_mem_peak = run.device_bytes;
  r.host_mem_budget = host_budget;
  r.host_buffers = run.pinned_bytes;
  r.threads = run.copy_threads;
  r.notes.push_back("rectangle in place through the GPU: copied whole to device memory, transposed there by "
                    "inplace-rect, copied back" +
                    (run.copy_threads ? " through " + std::to_string(run.copy_threads) + " threads' pinned slots of " +
                                            format_bytes(run.pinned_bytes / std::uint64_t(run.copy_threads))
                                      : std::string(" by the driver's copies")));
  return r;
}

RunReport Transposer::transpose_inplace(void* data, std::uint64_t n, std::size_t elem_size, const HostOptions& opts) {
  return transpose_inplace(data, n, n, elem_size, opts);
}

RunReport Transposer::transpose_inplace(void* data, std::uint64_t rows, std::uint64_t cols, std::size_t elem_size,
                                        const HostOptions& opts) {
  InPlace a = check_in_place(data, rows, cols, elem_size, opts);
  if (a.general) {
    if (opts.run.cancel && opts.run.cancel->load()) throw Error(ErrorKind::cancelled, "interrupted");
    std::string why;
    std::optional<RunReport> dev;
    if (kind() == EngineKind::cuda) dev = device_general_inplace(a.m, opts, &why);
    RunReport rep = dev ? std::move(*dev) : general_inplace(a.m, opts, kind());
    if (!dev && kind() == EngineKind::cuda) rep.notes.insert(rep.notes.begin(), "not through the GPU: " + why);
    if (!note_.empty()) rep.notes.insert(rep.notes.begin(), note_);
    return rep;
  }
  if (kind() == EngineKind::cuda) a.m.memory = memory_kind("gt::transpose_inplace", "data", a.r);
  auto matrix = memory_inplace(a.m);
  // Memory needs no journal: the plain writer, and a rectangle's
  // permutation straight through.
  auto stages = plain_inplace_stages(a.m.shape);
  RunReport rep = execute_inplace_stages(*engine_, *matrix, *stages, opts.run);
  if (!note_.empty()) rep.notes.insert(rep.notes.begin(), note_);
  return rep;
}

RunReport transpose(const void* in, void* out, std::uint64_t rows, std::uint64_t cols, std::size_t elem_size,
                    const HostOptions& opts) {
  check_out_of_place(in, out, rows, cols, elem_size, opts);
  return Transposer(opts.engine).transpose(in, out, rows, cols, elem_size, opts);
}

RunReport transpose_inplace(void* data, std::uint64_t n, std::size_t elem_size, const HostOptions& opts) {
  return transpose_inplace(data, n, n, elem_size, opts);
}

RunReport transpose_inplace(void* data, std::uint64_t rows, std::uint64_t cols, std::size_t elem_size,
                            const HostOptions& opts) {
  check_in_place(data, rows, cols, elem_size, opts);
  return Transposer(opts.engine).transpose_inplace(data, rows, cols, elem_size, opts);
}

}  // namespace gt
