// Positioned file I/O shared by the raw and .npy formats, and by HDF5
// datasets whose data lies contiguous and unfiltered in the file.
#pragma once
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "gtranspose/types.hpp"

namespace gt::fmt {

// An owned file descriptor.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() { reset(); }
  Fd(Fd&& o) noexcept : fd_(o.release()) {}
  Fd& operator=(Fd&& o) noexcept {
    if (this != &o) {
      reset();
      fd_ = o.release();
    }
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }
  int release() {
    int f = fd_;
    fd_ = -1;
    return f;
  }
  void reset();

 private:
  int fd_ = -1;
};

// Byte offset of element (r, c) of a row-major matrix with `cols` columns of
// `elem_size`-byte elements starting at `base`; throws on 64-bit overflow.
std::uint64_t element_offset(std::uint64_t base, std::uint64_t r, std::uint64_t c, std::uint64_t cols,
                             std::size_t elem_size);

// Opens an existing regular file; gt::Error(input) naming `name` and the
// reason. A FIFO, socket or device is refused without blocking on it.
Fd open_existing(const std::string& path, bool writable, const std::string& name);
// "a FIFO", "a character device", ... for messages.
const char* file_kind(mode_t mode);
std::uint64_t file_size(int fd, const std::string& name);

// Whole-buffer positioned I/O, looping over short transfers and EINTR.
// Reads throw gt::Error(io) (also at an unexpected end of file); writes
// throw gt::Error(io) naming the file and the OS reason (No space left on device, File too large).
void pread_full(int fd, void* buf, std::uint64_t n, std::uint64_t off, const std::string& name);
void pwrite_full(int fd, const void* buf, std::uint64_t n, std::uint64_t off, const std::string& name);

// Reserves [0, size) for a new output so a full disk fails now rather than
// midway; falls back to ftruncate where the file system cannot preallocate.
void preallocate(int fd, std::uint64_t size, const std::string& name);
// Starts the write-back of bytes [off, off+len) to disk and returns at once
// (sync_file_range, SYNC_FILE_RANGE_WRITE): a hint that those bytes are
// final, so the disk works while the run goes on and the closing fsync finds
// less to do. Quietly does nothing where the file system or the kernel cannot
// (EINVAL, ESPIPE, ENOSYS); any other failure is gt::Error(io).
void start_writeback(int fd, std::uint64_t off, std::uint64_t len, const std::string& name);
// Reserves blocks without changing the file size (for files another library
// owns, such as HDF5's); silently does nothing where unsupported.
void reserve_keep_size(int fd, std::uint64_t off, std::uint64_t len, const std::string& name);
// Tests turn preallocation off to reach the failure of a write itself; the
// output then grows with its writes (sparse where never written).
void set_preallocation_enabled(bool on);

// A matrix stored row-major at `data_offset` of a file. `mirrored` means the
// file holds the transpose of the logical matrix (a Fortran-order .npy): the
// logical rows x cols matrix is stored as its cols x rows row-major transpose.
struct PlainMatrix {
  int fd = -1;
  std::uint64_t data_offset = 0;
  Shape logical;
  std::size_t elem_size = 0;
  bool mirrored = false;
  std::string name;  // for messages

  void read(std::uint64_t r0, std::uint64_t c0, std::uint64_t h, std::uint64_t w, void* dst, std::uint64_t ld) const;
  void write(std::uint64_t r0, std::uint64_t c0, std::uint64_t h, std::uint64_t w, const void* src,
             std::uint64_t ld) const;
  // A rectangle of the matrix as stored (for a mirrored one, its transpose),
  // with no transposition: what a copy of the stored bytes reads.
  void read_as_stored(std::uint64_t r0, std::uint64_t c0, std::uint64_t h, std::uint64_t w, void* dst,
                      std::uint64_t ld) const;
  // start_writeback() of logical rows [r0, r0+h). A mirrored matrix stores
  // them as columns, scattered over the whole file: nothing is done there.
  void start_writeback(std::uint64_t r0, std::uint64_t h) const;

  // read() and write() keep no state between calls (a Fortran-order bounce
  // buffer belongs to one call), so several threads may call them at once.

 private:
  void read_stored(std::uint64_t r0, std::uint64_t c0, std::uint64_t h, std::uint64_t w, void* dst,
                   std::uint64_t ld) const;
  void write_stored(std::uint64_t r0, std::uint64_t c0, std::uint64_t h, std::uint64_t w, const void* src,
                    std::uint64_t ld) const;
};

// Throws gt::Error(internal) when a rectangle leaves the matrix or ld < w.
void check_rect(const Shape& s, std::uint64_t r0, std::uint64_t c0, std::uint64_t h, std::uint64_t w,
                std::uint64_t ld, const std::string& name);

// Copies the transpose of an h x w block (src, leading dimension lds) into
// dst (w x h, leading dimension ldd). Small and plain: used for Fortran-order files.
void transpose_block(const void* src, std::uint64_t lds, void* dst, std::uint64_t ldd, std::uint64_t h,
                     std::uint64_t w, std::size_t elem_size);

// True if a file or folder exists at path (lstat).
bool path_exists(const std::string& path);
// Refuses an output that exists without force, and always a folder, a
// device, FIFO or socket, and a symbolic link (see format.hpp's
// check_output_file).
void check_output_path(const std::string& path, bool force);
// Creates the temporary output file exclusively; gt::Error(output) with the OS reason.
Fd create_output_file(const std::string& tmp_path, const std::string& final_path);
// fsync, gt::Error(io) on failure.
void sync_file(int fd, const std::string& name, bool data_only);

// --- test only: what reaches the disk, in order ---------------------------------
//
// The power-loss test (tests/host/job/test_journal_powerloss.cpp) records
// every write and sync of plain I/O, and the journal's names, folder syncs
// and marks, then rebuilds the files as a power loss at any moment could
// leave them. A file is named by device and inode, as it lives on.
struct IoEvent {
  enum Kind { write, sync, link, unlink, folder_sync, mark };
  Kind kind = write;
  std::uint64_t dev = 0, ino = 0;  // write, sync, link (the file linked), mark (the file marked)
  std::string path;                // link, unlink: the name; folder_sync: the folder; mark: the value ("" removed)
  std::uint64_t offset = 0;
  const void* data = nullptr;      // write: the bytes (valid during the call only)
  std::uint64_t size = 0;
  bool data_only = false;          // sync: fdatasync, which need not make an extended attribute durable
  static IoEvent linked(int fd, const std::string& name);
  static IoEvent marked(const std::string& file, const std::string& value);
};
// Installs the log (nullptr: none); called from any thread that writes.
void set_io_log(std::function<void(const IoEvent&)> log);
void log_io(const IoEvent& e);
// Logs a write made outside pwrite_full (a vectored write of the HDF5 chunk
// path), so the power-loss test sees it.
void log_written(int fd, const void* data, std::uint64_t n, std::uint64_t off);

}  // namespace gt::fmt
