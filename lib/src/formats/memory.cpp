// Host-memory matrices (memory.hpp): a Source, a Sink and an InplaceMatrix
// over an array the program already holds. Every call is a rectangle copy
// with no state of its own, so concurrent calls on disjoint rectangles need
// no lock; the engines run several at once to copy large matrices (a single
// thread's memcpy is far below what the memory bus gives several).
#include "gtranspose/memory.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

#include "core/stream_copy.hpp"
#include "formats/plain_io.hpp"
#include "gtranspose/error.hpp"
#include "gtranspose/machine.hpp"
#include "gtranspose/plan.hpp"
#include "gtranspose/sizes.hpp"

namespace gt {

std::uint64_t host_matrix_span(const HostMatrix& m) {
  if (m.shape.rows == 0 || m.shape.cols == 0) return 0;
  const std::uint64_t ld = m.ld ? m.ld : m.shape.cols;
  const std::uint64_t elems =
      checked_add(checked_mul(m.shape.rows - 1, ld, "host matrix extent"), m.shape.cols, "host matrix extent");
  return checked_mul(elems, m.elem_size, "host matrix extent in bytes");
}

namespace fmt {
namespace {

int machine_cores() {
  static const int cores = int(usable_cores());
  return cores;
}

// Which way a rectangle copy goes: out of the program's array into an
// engine's buffer (read), or back into the array (write).
enum class Into { buffer, array };

// GT_STAGING_STORES=plain: plain stores whatever the plan says; =stream:
// streaming stores into buffers of any size too (the rule before PERF.md run
// 121). Measurement switches (plan.hpp, kStreamingMinCores,
// kCacheStagedTileBytes) so that one machine times each kind.
enum class Stores { plan, plain, stream };
Stores stores_switch() {
  static const Stores mode = [] {
    const char* e = std::getenv("GT_STAGING_STORES");
    const std::string v = e ? e : "";
    return v == "plain" ? Stores::plain : v == "stream" ? Stores::stream : Stores::plan;
  }();
  return mode;
}

// Copies an h x w rectangle of es-byte elements between two row-major
// layouts (leading dimensions in elements): one copy when both are
// contiguous, else one per row; with streaming stores where the plan says
// (plan_streaming_copy), fenced before the caller hands the bytes on.
void copy_rect(unsigned char* dst, std::uint64_t ldd, const unsigned char* src, std::uint64_t lds, std::uint64_t h,
               std::uint64_t w, std::size_t es, Into into) {
  if (h == 0 || w == 0) return;
  const std::size_t row = std::size_t(w * es);
  const bool contiguous = ldd == w && lds == w;
  const std::uint64_t bytes = h * row;
  const Stores mode = stores_switch();
  const bool streaming = mode != Stores::plain && plan_streaming_copy(contiguous ? bytes : row, bytes, machine_cores(),
                                                                      into == Into::buffer && mode == Stores::plan);
  auto copy = [streaming](void* d, const void* s, std::size_t n) {
    if (streaming)
      stream_copy(d, s, n);
    else
      std::memcpy(d, s, n);
  };
  if (contiguous)
    copy(dst, src, std::size_t(bytes));
  else
    for (std::uint64_t i = 0; i < h; ++i) copy(dst + i * ldd * es, src + i * lds * es, row);
  if (streaming) stream_fence();
}

ByteOrder native_order(std::size_t es) {
  if (es == 1) return ByteOrder::not_applicable;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  return ByteOrder::big;
#else
  return ByteOrder::little;
#endif
}

// Checks what every factory needs; returns the matrix with ld filled in.
HostMatrix checked(const HostMatrix& m) {
  if (!m.data) throw Error(ErrorKind::usage, "host matrix: the data pointer is null");
  if (m.shape.rows == 0 || m.shape.cols == 0)
    throw Error(ErrorKind::usage, "host matrix is empty (" + to_string(m.shape) + "): there is nothing to transpose");
  if (!supported_elem_size(m.elem_size))
    throw Error(ErrorKind::usage, "host matrix: unsupported element size " + std::to_string(m.elem_size) +
                                      " bytes (use 1, 2, 4, 8 or 16)");
  HostMatrix r = m;
  if (r.ld == 0) r.ld = r.shape.cols;
  if (r.ld < r.shape.cols)
    throw Error(ErrorKind::usage, "host matrix: leading dimension " + std::to_string(r.ld) + " is less than its " +
                                      std::to_string(r.shape.cols) + " columns");
  const std::uint64_t span = host_matrix_span(r);
  if (span > UINTPTR_MAX - reinterpret_cast<std::uintptr_t>(r.data))
    throw Error(ErrorKind::usage, "host matrix: " + std::to_string(span) + " bytes from its data pointer run past "
                                  "the end of the address space");
  return r;
}

// The state the three classes share: the matrix, its info, its view and its
// description; read() and write() copy rectangles out of and into it.
class MemoryMatrix {
 public:
  explicit MemoryMatrix(const HostMatrix& m) : m_(checked(m)) {
    info_.shape = m_.shape;
    info_.elem_size = m_.elem_size;
    info_.order = native_order(m_.elem_size);
    view_.data = m_.data;
    view_.ld = m_.ld;
    view_.pinned = m_.memory == HostMemoryKind::pinned;
    text_ = "host memory (" + std::to_string(m_.elem_size) + "-byte elements, " + to_string(m_.shape);
    if (m_.ld != m_.shape.cols) text_ += ", ld " + std::to_string(m_.ld);
    if (m_.memory == HostMemoryKind::pinned) text_ += ", pinned";
    if (m_.memory == HostMemoryKind::pageable) text_ += ", pageable";
    text_ += ")";
  }

  void read(std::uint64_t r0, std::uint64_t c0, std::uint64_t h, std::uint64_t w, void* dst, std::uint64_t ld) const {
    check_rect(m_.shape, r0, c0, h, w, ld, text_);
    copy_rect(static_cast<unsigned char*>(dst), ld, at(r0, c0), m_.ld, h, w, m_.elem_size, Into::buffer);
  }
  void write(std::uint64_t r0, std::uint64_t c0, std::uint64_t h, std::uint64_t w, const void* src,
             std::uint64_t ld) const {
    check_rect(m_.shape, r0, c0, h, w, ld, text_);
    copy_rect(at(r0, c0), m_.ld, static_cast<const unsigned char*>(src), ld, h, w, m_.elem_size, Into::array);
  }

  const MatrixInfo& info() const { return info_; }
  const Location& location() const { return loc_; }  // empty path: no file, no journal
  const HostView* view() const { return &view_; }
  const std::string& describe() const { return text_; }

 private:
  unsigned char* at(std::uint64_t r, std::uint64_t c) const {
    return static_cast<unsigned char*>(m_.data) + (r * m_.ld + c) * m_.elem_size;
  }

  HostMatrix m_;
  MatrixInfo info_;
  Location loc_;
  HostView view_;
  std::string text_;
};

class MemorySource final : public Source {
 public:
  explicit MemorySource(const HostMatrix& m) : m_(m) {}
  const MatrixInfo& info() const override { return m_.info(); }
  const Location& location() const override { return m_.location(); }
  void read(std::uint64_t r0, std::uint64_t c0, std::uint64_t h, std::uint64_t w, void* dst,
            std::uint64_t ld) override {
    m_.read(r0, c0, h, w, dst, ld);
  }
  bool concurrent_reads() const override { return true; }
  const HostView* host_view() const override { return m_.view(); }
  std::string describe() const override { return m_.describe(); }

 private:
  MemoryMatrix m_;
};

class MemorySink final : public Sink {
 public:
  explicit MemorySink(const HostMatrix& m) : m_(m) {}
  const MatrixInfo& info() const override { return m_.info(); }
  void write(std::uint64_t r0, std::uint64_t c0, std::uint64_t h, std::uint64_t w, const void* src,
             std::uint64_t ld) override {
    m_.write(r0, c0, h, w, src, ld);
  }
  void commit() override {}  // the data is in place as soon as it is written
  bool concurrent_writes() const override { return true; }
  const HostView* host_view() const override { return m_.view(); }
  std::string describe() const override { return m_.describe(); }

 private:
  MemoryMatrix m_;
};

class MemoryInplace final : public InplaceMatrix {
 public:
  // Any shape: which ones in place takes is the run plan's decision
  // (plan_inplace_shape); a rectangle must have no gaps between its rows.
  explicit MemoryInplace(const HostMatrix& m) : m_(m) {
    if (m.shape.rows != m.shape.cols && m.ld && m.ld != m.shape.cols)
      throw Error(ErrorKind::usage, "in place, a host matrix that is not square must have no gaps between rows (ld " +
                                        std::to_string(m.ld) + ", " + std::to_string(m.shape.cols) + " columns)");
  }
  const MatrixInfo& info() const override { return m_.info(); }
  const Location& location() const override { return m_.location(); }
  void read(std::uint64_t r0, std::uint64_t c0, std::uint64_t h, std::uint64_t w, void* dst,
            std::uint64_t ld) override {
    m_.read(r0, c0, h, w, dst, ld);
  }
  void write(std::uint64_t r0, std::uint64_t c0, std::uint64_t h, std::uint64_t w, const void* src,
             std::uint64_t ld) override {
    m_.write(r0, c0, h, w, src, ld);
  }
  void flush() override {}  // memory is as durable as it gets
  bool concurrent_io() const override { return true; }
  const HostView* host_view() const override { return m_.view(); }
  std::string describe() const override { return m_.describe(); }

 private:
  MemoryMatrix m_;
};

}  // namespace
}  // namespace fmt

std::unique_ptr<Source> memory_source(const HostMatrix& m) { return std::make_unique<fmt::MemorySource>(m); }
std::unique_ptr<Sink> memory_sink(const HostMatrix& m) { return std::make_unique<fmt::MemorySink>(m); }
std::unique_ptr<InplaceMatrix> memory_inplace(const HostMatrix& m) { return std::make_unique<fmt::MemoryInplace>(m); }

}  // namespace gt
