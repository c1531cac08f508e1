// Raw and .npy matrices: both are a header (empty for raw) followed by the
// elements, so both move through PlainMatrix's positioned I/O.
#include <unistd.h>

#include <cerrno>

#include <algorithm>
#include <cstring>
#include <vector>

#include "formats/internal.hpp"
#include "formats/npy.hpp"
#include "formats/plain_io.hpp"
#include "gtranspose/error.hpp"
#include "gtranspose/sizes.hpp"
#include "gtranspose/tempfile.hpp"

namespace gt::fmt {
namespace {

// A header longer than this is not one np.save writes for a matrix; refuse
// it rather than allocate. (np.load refuses more than 10000 characters
// unless allow_pickle is given, and then reads any length.)
constexpr std::uint64_t kMaxNpyHeader = std::uint64_t(1) << 24;

struct Opened {
  Fd fd;
  MatrixInfo info;
  std::uint64_t data_offset = 0;
  bool fortran = false;
  std::string descr;  // npy only
};

Opened open_raw(const Location& loc, const OpenOptions& opts, bool writable) {
  if (!opts.shape || !opts.dtype) {
    std::string missing = !opts.shape && !opts.dtype ? "{shape} and {dtype} are" : !opts.shape ? "{shape} is" : "{dtype} is";
    throw Error(ErrorKind::usage, "raw input needs {shape} ROWSxCOLS and {dtype} T (" + missing + " missing for " +
                                      loc.path + "; name a NumPy file .npy or an HDF5 file .h5)");
  }
  Opened o;
  o.fd = open_existing(loc.path, writable, loc.path);
  o.info.shape = *opts.shape;
  o.info.dtype = *opts.dtype;
  o.info.elem_size = dtype_size(*opts.dtype);
  o.info.order = o.info.elem_size == 1 ? ByteOrder::not_applicable : ByteOrder::little;
  const std::uint64_t expected = o.info.bytes();
  const std::uint64_t actual = file_size(o.fd.get(), loc.path);
  if (actual != expected)
    throw Error(ErrorKind::input, loc.path + " holds " + std::to_string(actual) + " bytes but {shape} " +
                                      to_string(o.info.shape) + " {dtype} " + dtype_name(*opts.dtype) + " needs " +
                                      std::to_string(expected) + " bytes: check {shape} and {dtype} (or whether the "
                                      "file is complete)");
  return o;
}

Opened open_npy(const Location& loc, const OpenOptions& opts, bool writable) {
  Opened o;
  o.fd = open_existing(loc.path, writable, loc.path);
  const std::uint64_t size = file_size(o.fd.get(), loc.path);
  unsigned char head[12] = {};
  const std::size_t n = std::size_t(std::min<std::uint64_t>(size, sizeof head));
  pread_full(o.fd.get(), head, n, 0, loc.path);
  NpyPreamble pre = parse_npy_preamble(head, n, size, loc.path);
  if (pre.header_len > kMaxNpyHeader)
    throw Error(ErrorKind::input, loc.path + " has a malformed .npy header: it claims " +
                                      std::to_string(pre.header_len) + " bytes of header text");
  std::string text(pre.header_len, '\0');
  pread_full(o.fd.get(), text.data(), pre.header_len, pre.header_start, loc.path);
  const NpyHeader h = parse_npy_dict(text, pre.major, loc.path);
  const NpyDescr e = npy_element(h, loc.path);
  check_matrix_shape(h.shape, e.elem_size, loc.path);
  o.info.shape = {h.shape[0], h.shape[1]};
  o.info.elem_size = e.elem_size;
  o.info.dtype = e.dtype;
  o.info.order = e.order;
  o.fortran = h.fortran_order;
  o.descr = e.descr;
  o.data_offset = pre.header_start + pre.header_len;
  const std::uint64_t expected = o.info.bytes();
  const std::uint64_t actual = size - o.data_offset;
  if (actual != expected)
    throw Error(ErrorKind::input, loc.path + " has " + std::to_string(actual) + " bytes of data but its header says " +
                                      "shape " + shape_repr(h.shape) + " of '" + o.descr + "', which needs " +
                                      std::to_string(expected) + (actual < expected ? ": the file is truncated"
                                                                                    : ": the file has extra bytes at the end"));
  check_against_options(o.info, opts, loc.path, "'" + o.descr + "'");
  return o;
}

PlainMatrix plain_of(const Opened& o, const std::string& name) {
  PlainMatrix m;
  m.fd = o.fd.get();
  m.data_offset = o.data_offset;
  m.logical = o.info.shape;
  m.elem_size = o.info.elem_size;
  m.mirrored = o.fortran;
  m.name = name;
  return m;
}

class PlainSink;

class PlainSource final : public Source {
 public:
  PlainSource(Location loc, Opened o, bool npy)
      : loc_(std::move(loc)), o_(std::move(o)), npy_(npy), m_(plain_of(o_, loc_.path)) {}
  const MatrixInfo& info() const override { return o_.info; }
  const Location& location() const override { return loc_; }
  void read(std::uint64_t r0, std::uint64_t c0, std::uint64_t h, std::uint64_t w, void* dst,
            std::uint64_t ld) override {
    m_.read(r0, c0, h, w, dst, ld);
  }
  // Positioned reads (pread) with no state shared between calls.
  bool concurrent_reads() const override { return true; }
  // A Fortran-order file holds the transpose of its matrix in C order.
  bool stores_transpose() const override { return o_.fortran; }
  void read_transpose(std::uint64_t r0, std::uint64_t c0, std::uint64_t h, std::uint64_t w, void* dst,
                      std::uint64_t ld) override {
    if (!o_.fortran) return Source::read_transpose(r0, c0, h, w, dst, ld);
    m_.read_as_stored(r0, c0, h, w, dst, ld);
  }
  std::string describe() const override {
    if (!npy_) return "raw file " + loc_.path + " (" + dtype_name(*o_.info.dtype) + ", " + to_string(o_.info.shape) + ")";
    return "NumPy file " + loc_.path + " ('" + o_.descr + "', " + to_string(o_.info.shape) +
           (o_.fortran ? ", Fortran order)" : ")");
  }
  NativeType native_type() const override {
    NativeType t;
    if (npy_) t.npy_descr = o_.descr;
    return t;
  }
  // The stored bytes into `dst`'s data (copy_stored_bytes).
  bool copy_to(PlainSink& dst, const std::function<void(std::uint64_t)>& progress, const std::atomic<bool>* cancel);

 private:
  Location loc_;
  Opened o_;
  bool npy_;
  PlainMatrix m_;
};

class PlainSink final : public Sink {
 public:
  // `header` is written before the data (empty for raw).
  PlainSink(const Location& loc, const Source& src, const SinkOptions& opts, std::string header, std::string what)
      : tmp_(checked_output(loc, opts)),
        fd_(create_output_file(tmp_.path(), loc.path)),
        what_(std::move(what)) {
    info_ = src.info();
    info_.shape = src.info().shape.transposed();
    m_.fd = fd_.get();
    m_.data_offset = header.size();
    m_.logical = info_.shape;
    m_.elem_size = info_.elem_size;
    m_.name = loc.path;
    preallocate(fd_.get(), checked_add(header.size(), info_.bytes(), "output size"), loc.path);
    pwrite_full(fd_.get(), header.data(), header.size(), 0, loc.path);
  }
  const MatrixInfo& info() const override { return info_; }
  void write(std::uint64_t r0, std::uint64_t c0, std::uint64_t h, std::uint64_t w, const void* src,
             std::uint64_t ld) override {
    if (!fd_) throw Error(ErrorKind::internal, "write to " + m_.name + " after commit()");
    m_.write(r0, c0, h, w, src, ld);
  }
  // Positioned writes (pwrite) with no state shared between calls.
  bool concurrent_writes() const override { return true; }
  // Sinks write C order, so output rows [r0, r0+h) are one run of the file.
  void rows_complete(std::uint64_t r0, std::uint64_t h) override {
    if (fd_) m_.start_writeback(r0, h);
  }
  void commit() override {
    if (!fd_) return;
    sync_file(fd_.get(), m_.name, false);
    int fd = fd_.release();
    if (::close(fd) != 0) throw_errno(ErrorKind::io, "cannot close " + m_.name);
    tmp_.commit();
  }
  std::string describe() const override {
    return what_ + " " + m_.name + " (" + type_text(info_, std::to_string(info_.elem_size) + "-byte elements") + ", " + to_string(info_.shape) + ")";
  }
  // Allocated in full at creation: other processes may write their rows.
  SharedLayout shared_layout() const override {
    SharedLayout l;
    l.kind = SharedLayout::plain;
    l.path = tmp_.path();
    l.data_offset = m_.data_offset;
    return l;
  }
  int fd() const { return fd_.get(); }
  std::uint64_t data_offset() const { return m_.data_offset; }
  const std::string& name() const { return m_.name; }

 private:
  TempPath tmp_;  // declared first: destroyed last, after the descriptor is closed
  Fd fd_;
  MatrixInfo info_;
  PlainMatrix m_;
  std::string what_;
};

bool PlainSource::copy_to(PlainSink& dst, const std::function<void(std::uint64_t)>& progress,
                          const std::atomic<bool>* cancel) {
  // A few hundred MiB a call: the kernel copies without user space, and
  // progress and a cancel still come between calls.
  constexpr std::uint64_t kStep = std::uint64_t(256) << 20;
  const std::uint64_t total = o_.info.bytes();
  loff_t from = loff_t(o_.data_offset), to = loff_t(dst.data_offset());
  std::uint64_t done = 0;
  while (done < total) {
    if (cancel && cancel->load()) throw Error(ErrorKind::cancelled, "interrupted");
    const ssize_t n = ::copy_file_range(o_.fd.get(), &from, dst.fd(), &to, std::size_t(std::min(kStep, total - done)), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      // Nothing copied yet and the file systems cannot: the caller copies
      // through memory. Once bytes moved, a failure is the write's.
      if (done == 0 && (n == 0 || errno == EXDEV || errno == EINVAL || errno == ENOSYS || errno == EOPNOTSUPP))
        return false;
      if (n == 0) throw Error(ErrorKind::io, loc_.path + " ended early at byte " + std::to_string(from));
      throw_errno(ErrorKind::io, "cannot copy " + loc_.path + " to " + dst.name() + " at byte " + std::to_string(to));
    }
    done += std::uint64_t(n);
    if (progress) progress(done);
  }
  dst.rows_complete(0, dst.info().shape.rows);
  return true;
}

class PlainInplace final : public InplaceMatrix {
 public:
  PlainInplace(Location loc, Opened o) : loc_(std::move(loc)), o_(std::move(o)), m_(plain_of(o_, loc_.path)) {}
  const MatrixInfo& info() const override { return o_.info; }
  const Location& location() const override { return loc_; }
  void read(std::uint64_t r0, std::uint64_t c0, std::uint64_t h, std::uint64_t w, void* dst,
            std::uint64_t ld) override {
    m_.read(r0, c0, h, w, dst, ld);
  }
  void write(std::uint64_t r0, std::uint64_t c0, std::uint64_t h, std::uint64_t w, const void* src,
             std::uint64_t ld) override {
    m_.write(r0, c0, h, w, src, ld);
  }
  void flush() override { sync_file(o_.fd.get(), loc_.path, true); }
  void start_writeback(std::uint64_t r0, std::uint64_t h) override { m_.start_writeback(r0, h); }
  bool concurrent_io() const override { return true; }  // pread/pwrite, nothing shared
  std::string describe() const override {
    return (loc_.format == Format::npy ? "NumPy file " : "raw file ") + loc_.path + " (" +
           type_text(o_.info, "'" + o_.descr + "'") + ", " + to_string(o_.info.shape) + ", in place)";
  }

 private:
  Location loc_;
  Opened o_;
  PlainMatrix m_;
};

}  // namespace

bool copy_stored_bytes(Source& src, Sink& dst, const std::function<void(std::uint64_t)>& progress,
                       const std::atomic<bool>* cancel) {
  auto* in = dynamic_cast<PlainSource*>(&src);
  auto* out = dynamic_cast<PlainSink*>(&dst);
  if (!in || !out || !in->stores_transpose()) return false;
  return in->copy_to(*out, progress, cancel);
}

std::unique_ptr<Source> open_raw_source(const Location& loc, const OpenOptions& opts) {
  return std::make_unique<PlainSource>(loc, open_raw(loc, opts, false), false);
}

std::unique_ptr<Source> open_npy_source(const Location& loc, const OpenOptions& opts) {
  return std::make_unique<PlainSource>(loc, open_npy(loc, opts, false), true);
}

void check_raw_output(const Location& loc, const Source& src) {
  // gtranspose moves bytes and never converts them, and a raw file has no
  // header to say its byte order: every raw input is read as little-endian,
  // so big-endian bytes written there would read back as other numbers.
  if (src.info().order == ByteOrder::big)
    throw Error(ErrorKind::output, src.describe() + " holds big-endian elements and a raw file cannot say so: write " +
                                       loc.path + " as .npy or .h5 instead, which keep the byte order");
}

std::unique_ptr<Sink> create_raw_sink(const Location& loc, const Source& src, const SinkOptions& opts) {
  check_raw_output(loc, src);
  return std::make_unique<PlainSink>(loc, src, opts, std::string(), "raw file");
}

std::string npy_output_descr(const Location& loc, const Source& src) {
  // A .npy source's own descr, kept exactly; otherwise the one NumPy gives the dtype.
  std::string descr = src.native_type().npy_descr;
  if (descr.empty()) {
    if (!src.info().dtype)
      throw Error(ErrorKind::output, "the element type of " + src.describe() + " has no NumPy name, so " +
                                         loc.path + " cannot describe it: write .raw or .h5 instead");
    descr = npy_descr_for(*src.info().dtype, src.info().order, loc.path);
  }
  return descr;
}

std::unique_ptr<Sink> create_npy_sink(const Location& loc, const Source& src, const SinkOptions& opts) {
  const std::string descr = npy_output_descr(loc, src);
  const Shape out = src.info().shape.transposed();
  return std::make_unique<PlainSink>(loc, src, opts, make_npy_header(descr, out.rows, out.cols), "NumPy file");
}

std::unique_ptr<InplaceMatrix> open_raw_inplace(const Location& loc, const OpenOptions& opts) {
  Opened o = open_raw(loc, opts, true);
  require_inplace_shape(o.info, loc.path, false);
  return std::make_unique<PlainInplace>(loc, std::move(o));
}

std::unique_ptr<InplaceMatrix> open_npy_inplace(const Location& loc, const OpenOptions& opts) {
  Opened o = open_npy(loc, opts, true);
  require_inplace_shape(o.info, loc.path, o.fortran);
  // A Fortran-order file goes through the mirrored access like any read:
  // slower, but the logical matrix is what gets transposed.
  return std::make_unique<PlainInplace>(loc, std::move(o));
}

}  // namespace gt::fmt
