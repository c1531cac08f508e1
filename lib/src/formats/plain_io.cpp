#include "formats/plain_io.hpp"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <vector>

#include "core/paths.hpp"
#include "gtranspose/error.hpp"
#include "gtranspose/sizes.hpp"

namespace gt::fmt {
namespace {

using paths::dir_of;

// Linux moves at most 0x7ffff000 bytes per call; asking for 1 GiB keeps each
// call whole and the loop simple.
constexpr std::uint64_t kMaxIo = std::uint64_t(1) << 30;
// Fortran-order rectangles go through a bounce buffer of at most this size:
// outside the engines' buffer accounting, so small ("a few MiB" over the
// budget), yet each stored run it reads or writes is still up to 2 MiB long.
constexpr std::uint64_t kBounceBytes = std::uint64_t(2) << 20;

std::atomic<bool> g_preallocate{true};

// The test-only I/O log (plain_io.hpp): a flag read on every write keeps the
// usual path to one relaxed load.
std::atomic<bool> g_logging{false};
std::function<void(const IoEvent&)>& io_log() {
  static std::function<void(const IoEvent&)> log;
  return log;
}

void log_write(int fd, const void* data, std::uint64_t n, std::uint64_t off) {
  if (!g_logging.load(std::memory_order_relaxed)) return;
  IoEvent e = IoEvent::linked(fd, "");
  e.kind = IoEvent::write;
  e.offset = off;
  e.data = data;
  e.size = n;
  log_io(e);
}

[[noreturn]] void throw_write(int err, const std::string& name, std::uint64_t off) {
  throw Error(ErrorKind::io, "cannot write " + name + " at byte " + std::to_string(off) + ": " + std::strerror(err));
}

template <std::size_t S>
void transpose_fixed(const unsigned char* src, std::uint64_t lds, unsigned char* dst, std::uint64_t ldd,
                     std::uint64_t h, std::uint64_t w) {
  for (std::uint64_t i = 0; i < h; ++i)
    for (std::uint64_t j = 0; j < w; ++j) std::memcpy(dst + (j * ldd + i) * S, src + (i * lds + j) * S, S);
}

// Reads into scattered rows whose file bytes are contiguous: one preadv per
// IOV_MAX rows, resuming mid-row after a short read.
// After a short preadv/pwritev of n bytes: skip the vectors it completed and
// trim the one it stopped in, so the next call resumes exactly there.
void advance(std::vector<iovec>& iov, std::size_t& first, std::uint64_t n) {
  while (n > 0 && first < iov.size()) {
    if (n >= iov[first].iov_len) {
      n -= iov[first].iov_len;
      ++first;
    } else {
      iov[first].iov_base = static_cast<unsigned char*>(iov[first].iov_base) + n;
      iov[first].iov_len -= n;
      n = 0;
    }
  }
}

void preadv_rows(int fd, unsigned char* dst, std::uint64_t rows, std::uint64_t row_bytes, std::uint64_t row_stride,
                 std::uint64_t off, const std::string& name) {
  std::vector<iovec> iov;
  for (std::uint64_t r = 0; r < rows;) {
    std::uint64_t batch = std::min<std::uint64_t>(rows - r, IOV_MAX);
    iov.resize(batch);
    for (std::uint64_t k = 0; k < batch; ++k) iov[k] = {dst + (r + k) * row_stride, row_bytes};
    std::size_t first = 0;
    while (first < iov.size()) {
      ssize_t n = ::preadv(fd, iov.data() + first, int(iov.size() - first), off_t(off));
      if (n < 0) {
        if (errno == EINTR) continue;
        throw_errno(ErrorKind::io, "cannot read " + name + " at byte " + std::to_string(off));
      }
      if (n == 0)
        throw Error(ErrorKind::io, name + " ended early at byte " + std::to_string(off) +
                                       ": was it truncated or replaced while being read?");
      off += std::uint64_t(n);
      advance(iov, first, std::uint64_t(n));
    }
    r += batch;
  }
}

void pwritev_rows(int fd, const unsigned char* src, std::uint64_t rows, std::uint64_t row_bytes,
                  std::uint64_t row_stride, std::uint64_t off, const std::string& name) {
  std::vector<iovec> iov;
  for (std::uint64_t r = 0; r < rows;) {
    std::uint64_t batch = std::min<std::uint64_t>(rows - r, IOV_MAX);
    iov.resize(batch);
    for (std::uint64_t k = 0; k < batch; ++k)
      iov[k] = {const_cast<unsigned char*>(src + (r + k) * row_stride), row_bytes};
    std::size_t first = 0;
    while (first < iov.size()) {
      ssize_t n = ::pwritev(fd, iov.data() + first, int(iov.size() - first), off_t(off));
      if (n < 0) {
        if (errno == EINTR) continue;
        throw_write(errno, name, off);
      }
      if (n == 0) throw_write(ENOSPC, name, off);
      off += std::uint64_t(n);
      advance(iov, first, std::uint64_t(n));
    }
    for (std::uint64_t k = 0; k < batch; ++k)
      log_write(fd, src + (r + k) * row_stride, row_bytes, off - (batch - k) * row_bytes);
    r += batch;
  }
}

}  // namespace

void Fd::reset() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

std::uint64_t element_offset(std::uint64_t base, std::uint64_t r, std::uint64_t c, std::uint64_t cols,
                             std::size_t elem_size) {
  std::uint64_t idx = checked_add(checked_mul(r, cols, "file offset"), c, "file offset");
  return checked_add(base, checked_mul(idx, elem_size, "file offset"), "file offset");
}

Fd open_existing(const std::string& path, bool writable, const std::string& name) {
  // O_NONBLOCK: opening a FIFO for reading blocks until a writer comes (and
  // a device may block too), before any check could refuse it. Regular
  // files ignore the flag; it is cleared below all the same.
  int fd;
  do {
    fd = ::open(path.c_str(), (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) throw_errno(ErrorKind::input, "cannot open " + name);
  Fd f(fd);
  struct stat st;
  if (::fstat(fd, &st) != 0) throw_errno(ErrorKind::input, "cannot stat " + name);
  if (S_ISDIR(st.st_mode)) throw Error(ErrorKind::input, name + " is a folder, not a matrix file");
  if (!S_ISREG(st.st_mode))
    throw Error(ErrorKind::input, name + " is not a regular file (" + file_kind(st.st_mode) +
                                      "): gtranspose reads a matrix by position, so give a file path");
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) throw_errno(ErrorKind::input, "cannot open " + name);
  return f;
}

const char* file_kind(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a regular file";
}

std::uint64_t file_size(int fd, const std::string& name) {
  struct stat st;
  if (::fstat(fd, &st) != 0) throw_errno(ErrorKind::input, "cannot stat " + name);
  return std::uint64_t(st.st_size);
}

void pread_full(int fd, void* buf, std::uint64_t n, std::uint64_t off, const std::string& name) {
  auto* p = static_cast<unsigned char*>(buf);
  while (n > 0) {
    ssize_t got = ::pread(fd, p, std::min(n, kMaxIo), off_t(off));
    if (got < 0) {
      if (errno == EINTR) continue;
      throw_errno(ErrorKind::io, "cannot read " + name + " at byte " + std::to_string(off));
    }
    if (got == 0)
      throw Error(ErrorKind::io, name + " ended early at byte " + std::to_string(off) +
                                     ": was it truncated or replaced while being read?");
    p += got;
    n -= std::uint64_t(got);
    off += std::uint64_t(got);
  }
}

void pwrite_full(int fd, const void* buf, std::uint64_t n, std::uint64_t off, const std::string& name) {
  auto* p = static_cast<const unsigned char*>(buf);
  while (n > 0) {
    ssize_t put = ::pwrite(fd, p, std::min(n, kMaxIo), off_t(off));
    if (put < 0) {
      if (errno == EINTR) continue;
      throw_write(errno, name, off);
    }
    // A zero-byte write of a non-empty buffer only happens on a full device.
    if (put == 0) throw_write(ENOSPC, name, off);
    log_write(fd, p, std::uint64_t(put), off);
    p += put;
    n -= std::uint64_t(put);
    off += std::uint64_t(put);
  }
}

void set_preallocation_enabled(bool on) { g_preallocate.store(on); }

void preallocate(int fd, std::uint64_t size, const std::string& name) {
  if (size == 0 || !g_preallocate.load()) return;
  int rc;
  do {
    rc = ::posix_fallocate(fd, 0, off_t(size));
  } while (rc == EINTR);
  if (rc == 0) return;
  if (rc != EOPNOTSUPP && rc != EINVAL && rc != ENOSYS)
    throw Error(ErrorKind::io, "cannot reserve " + std::to_string(size) + " bytes for " + name + ": " +
                                   std::strerror(rc));
  // No preallocation here: at least give the file its size, which also
  // meets a file-size limit now rather than midway.
  if (::ftruncate(fd, off_t(size)) != 0)
    throw Error(ErrorKind::io, "cannot extend " + name + " to " + std::to_string(size) + " bytes: " +
                                   std::strerror(errno));
}

void start_writeback(int fd, std::uint64_t off, std::uint64_t len, const std::string& name) {
  if (len == 0) return;
  int rc;
  do {
    rc = ::sync_file_range(fd, off_t(off), off_t(len), SYNC_FILE_RANGE_WRITE);
  } while (rc != 0 && errno == EINTR);
  // Not every file system or kernel starts write-back on request (EINVAL),
  // and a pipe cannot (ESPIPE): the closing fsync does all the work there.
  if (rc == 0 || errno == EINVAL || errno == ESPIPE || errno == ENOSYS) return;
  throw_errno(ErrorKind::io, "cannot write " + name + " back to disk at byte " + std::to_string(off));
}

void reserve_keep_size(int fd, std::uint64_t off, std::uint64_t len, const std::string& name) {
  if (len == 0 || !g_preallocate.load()) return;
  int rc;
  do {
    rc = ::fallocate(fd, FALLOC_FL_KEEP_SIZE, off_t(off), off_t(len));
  } while (rc != 0 && errno == EINTR);
  if (rc == 0) return;
  if (errno == ENOSPC || errno == EDQUOT || errno == EFBIG)
    throw Error(ErrorKind::io, "cannot reserve " + std::to_string(len) + " bytes for " + name + ": " +
                                   std::strerror(errno));
}

void check_rect(const Shape& s, std::uint64_t r0, std::uint64_t c0, std::uint64_t h, std::uint64_t w,
                std::uint64_t ld, const std::string& name) {
  if (r0 > s.rows || h > s.rows - r0 || c0 > s.cols || w > s.cols - c0 || ld < w)
    throw Error(ErrorKind::internal, "rectangle rows " + std::to_string(r0) + "+" + std::to_string(h) + ", cols " +
                                         std::to_string(c0) + "+" + std::to_string(w) + " (ld " + std::to_string(ld) +
                                         ") does not fit the " + to_string(s) + " matrix of " + name);
}

void transpose_block(const void* src, std::uint64_t lds, void* dst, std::uint64_t ldd, std::uint64_t h,
                     std::uint64_t w, std::size_t elem_size) {
  auto* s = static_cast<const unsigned char*>(src);
  auto* d = static_cast<unsigned char*>(dst);
  switch (elem_size) {
    case 1: return transpose_fixed<1>(s, lds, d, ldd, h, w);
    case 2: return transpose_fixed<2>(s, lds, d, ldd, h, w);
    case 4: return transpose_fixed<4>(s, lds, d, ldd, h, w);
    case 8: return transpose_fixed<8>(s, lds, d, ldd, h, w);
    case 16: return transpose_fixed<16>(s, lds, d, ldd, h, w);
    default: throw Error(ErrorKind::internal, "transpose_block: unsupported element size " + std::to_string(elem_size));
  }
}

namespace {

// The block a mirrored (Fortran-order) rectangle moves through: whole
// logical columns of `h` rows while they fit kBounceBytes (each stored row
// then is one long run), else shorter runs, so the buffer never outgrows
// kBounceBytes and the engines' memory budget holds.
struct Bounce {
  std::uint64_t rows, cols;
};
Bounce bounce_for(std::uint64_t h, std::uint64_t w, std::size_t elem_size) {
  const std::uint64_t cap = std::max<std::uint64_t>(1, kBounceBytes / elem_size);
  const std::uint64_t rows = std::min(h, cap);
  return {rows, std::max<std::uint64_t>(1, std::min(w, cap / rows))};
}

}  // namespace

void PlainMatrix::read(std::uint64_t r0, std::uint64_t c0, std::uint64_t h, std::uint64_t w, void* dst,
                       std::uint64_t ld) const {
  check_rect(logical, r0, c0, h, w, ld, name);
  if (h == 0 || w == 0) return;
  if (!mirrored) return read_stored(r0, c0, h, w, dst, ld);
  // Logical columns [c0, c0+w) are stored rows; read a block of them at a
  // time and transpose it into place.
  const Bounce b = bounce_for(h, w, elem_size);
  std::vector<unsigned char> buf(b.rows * b.cols * elem_size);
  auto* out = static_cast<unsigned char*>(dst);
  for (std::uint64_t i = 0; i < h; i += b.rows) {
    const std::uint64_t hb = std::min(b.rows, h - i);
    for (std::uint64_t j = 0; j < w; j += b.cols) {
      const std::uint64_t k = std::min(b.cols, w - j);
      read_stored(c0 + j, r0 + i, k, hb, buf.data(), hb);  // buf: k x hb
      transpose_block(buf.data(), hb, out + (i * ld + j) * elem_size, ld, k, hb, elem_size);
    }
  }
}

void PlainMatrix::write(std::uint64_t r0, std::uint64_t c0, std::uint64_t h, std::uint64_t w, const void* src,
                        std::uint64_t ld) const {
  check_rect(logical, r0, c0, h, w, ld, name);
  if (h == 0 || w == 0) return;
  if (!mirrored) return write_stored(r0, c0, h, w, src, ld);
  const Bounce b = bounce_for(h, w, elem_size);
  std::vector<unsigned char> buf(b.rows * b.cols * elem_size);
  const auto* in = static_cast<const unsigned char*>(src);
  for (std::uint64_t i = 0; i < h; i += b.rows) {
    const std::uint64_t hb = std::min(b.rows, h - i);
    for (std::uint64_t j = 0; j < w; j += b.cols) {
      const std::uint64_t k = std::min(b.cols, w - j);
      transpose_block(in + (i * ld + j) * elem_size, ld, buf.data(), hb, hb, k, elem_size);
      write_stored(c0 + j, r0 + i, k, hb, buf.data(), hb);
    }
  }
}

void PlainMatrix::read_as_stored(std::uint64_t r0, std::uint64_t c0, std::uint64_t h, std::uint64_t w, void* dst,
                                 std::uint64_t ld) const {
  check_rect(mirrored ? logical.transposed() : logical, r0, c0, h, w, ld, name);
  if (h && w) read_stored(r0, c0, h, w, dst, ld);
}

void PlainMatrix::start_writeback(std::uint64_t r0, std::uint64_t h) const {
  check_rect(logical, r0, 0, h, logical.cols, logical.cols, name);
  // A mirrored (Fortran-order) matrix's logical rows are not one run of the
  // file: nothing is started there, the closing fsync does it all.
  if (h == 0 || mirrored) return;
  const std::uint64_t off = element_offset(data_offset, r0, 0, logical.cols, elem_size);
  fmt::start_writeback(fd, off, element_offset(0, h, 0, logical.cols, elem_size), name);
}

void PlainMatrix::read_stored(std::uint64_t r0, std::uint64_t c0, std::uint64_t h, std::uint64_t w, void* dst,
                              std::uint64_t ld) const {
  const std::uint64_t cols = mirrored ? logical.rows : logical.cols;
  const std::uint64_t off = element_offset(data_offset, r0, c0, cols, elem_size);
  auto* d = static_cast<unsigned char*>(dst);
  const std::uint64_t row_bytes = w * elem_size;
  if (w == cols) {
    // Full rows are one contiguous run of the file.
    if (ld == w) return pread_full(fd, d, h * row_bytes, off, name);
    return preadv_rows(fd, d, h, row_bytes, ld * elem_size, off, name);
  }
  // Row by row: one pread each, the file offset stepping by a whole stored
  // row. Checking the last row's end for overflow covers every row between.
  element_offset(data_offset, r0 + h - 1, c0 + w, cols, elem_size);
  const std::uint64_t file_stride = cols * elem_size, mem_stride = ld * elem_size;
  for (std::uint64_t i = 0, o = off; i < h; ++i, o += file_stride) pread_full(fd, d + i * mem_stride, row_bytes, o, name);
}

void PlainMatrix::write_stored(std::uint64_t r0, std::uint64_t c0, std::uint64_t h, std::uint64_t w, const void* src,
                               std::uint64_t ld) const {
  const std::uint64_t cols = mirrored ? logical.rows : logical.cols;
  const std::uint64_t off = element_offset(data_offset, r0, c0, cols, elem_size);
  auto* s = static_cast<const unsigned char*>(src);
  const std::uint64_t row_bytes = w * elem_size;
  if (w == cols) {
    if (ld == w) return pwrite_full(fd, s, h * row_bytes, off, name);
    return pwritev_rows(fd, s, h, row_bytes, ld * elem_size, off, name);
  }
  element_offset(data_offset, r0 + h - 1, c0 + w, cols, elem_size);  // the last row's end: no overflow between
  const std::uint64_t file_stride = cols * elem_size, mem_stride = ld * elem_size;
  for (std::uint64_t i = 0, o = off; i < h; ++i, o += file_stride) pwrite_full(fd, s + i * mem_stride, row_bytes, o, name);
}

bool path_exists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

void check_output_path(const std::string& path, bool force) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return;
    if (errno == ENOTDIR) throw Error(ErrorKind::output, "cannot create " + path + ": " + dir_of(path) + " is not a folder");
    throw_errno(ErrorKind::output, "cannot check output " + path);
  }
  // The output replaces OUT by rename(), which replaces a link itself, never
  // what it names: a link to a file (or /dev/stdout, as root) would be
  // swapped for a regular file while its target stayed as it was.
  if (S_ISLNK(st.st_mode)) {
    char target[PATH_MAX];
    const ssize_t n = ::readlink(path.c_str(), target, sizeof target - 1);
    const std::string to = n > 0 ? " (to " + std::string(target, std::size_t(n)) + ")" : std::string();
    throw Error(ErrorKind::output, path + " is a symbolic link" + to +
                                       ", which an output would replace rather than write through: name the file "
                                       "itself, or remove the link");
  }
  if (S_ISDIR(st.st_mode)) throw Error(ErrorKind::output, path + " is a folder: name an output file");
  // A device or a FIFO (as root, even /dev/null) would be swapped for a
  // regular file, never written to.
  if (!S_ISREG(st.st_mode))
    throw Error(ErrorKind::output, path + " is not a regular file (a device, FIFO or socket): name an output file");
  if (!force) throw Error(ErrorKind::output, path + " exists: use {force} to replace it");
}

Fd create_output_file(const std::string& tmp_path, const std::string& final_path) {
  int fd;
  do {
    fd = ::open(tmp_path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) throw_errno(ErrorKind::output, "cannot create " + final_path + " in folder " + dir_of(final_path));
  return Fd(fd);
}

void sync_file(int fd, const std::string& name, bool data_only) {
  int rc;
  do {
    rc = data_only ? ::fdatasync(fd) : ::fsync(fd);
  } while (rc != 0 && errno == EINTR);
  if (rc != 0) throw_errno(ErrorKind::io, "cannot flush " + name + " to disk");
  if (g_logging.load(std::memory_order_relaxed)) {
    IoEvent e = IoEvent::linked(fd, "");
    e.kind = IoEvent::sync;
    e.data_only = data_only;
    log_io(e);
  }
}

IoEvent IoEvent::linked(int fd, const std::string& name) {
  IoEvent e;
  e.kind = link;
  e.path = name;
  struct stat st {};
  if (::fstat(fd, &st) == 0) e.dev = std::uint64_t(st.st_dev), e.ino = std::uint64_t(st.st_ino);
  return e;
}

IoEvent IoEvent::marked(const std::string& file, const std::string& value) {
  IoEvent e;
  e.kind = mark;
  e.path = value;
  struct stat st {};
  if (::stat(file.c_str(), &st) == 0) e.dev = std::uint64_t(st.st_dev), e.ino = std::uint64_t(st.st_ino);
  return e;
}

void set_io_log(std::function<void(const IoEvent&)> log) {
  g_logging.store(false);
  io_log() = std::move(log);
  g_logging.store(bool(io_log()));
}

void log_written(int fd, const void* data, std::uint64_t n, std::uint64_t off) { log_write(fd, data, n, off); }

void log_io(const IoEvent& e) {
  if (g_logging.load(std::memory_order_relaxed)) io_log()(e);
}

}  // namespace gt::fmt
