#include "formats/hdf5/chunks.hpp"

#include <sys/stat.h>
#include <sys/uio.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <ctime>
#include <cstring>

#include "formats/plain_io.hpp"
#include "gtranspose/plan.hpp"
#include "gtranspose/sizes.hpp"

namespace gt::fmt::h5 {

bool filters_of(hid_t dcpl, std::vector<codecs::FilterSpec>& out, std::string* why) {
  const int n = H5Pget_nfilters(dcpl);
  if (n < 0) {
    if (why) *why = "HDF5 cannot list its filters";
    return false;
  }
  for (int i = 0; i < n; ++i) {
    unsigned flags = 0, config = 0;
    std::vector<unsigned> values(16);
    std::size_t nv = values.size();
    H5Z_filter_t id = H5Pget_filter2(dcpl, unsigned(i), &flags, &nv, values.data(), 0, nullptr, &config);
    if (id >= 0 && nv > values.size()) {
      values.resize(nv);
      id = H5Pget_filter2(dcpl, unsigned(i), &flags, &nv, values.data(), 0, nullptr, &config);
    }
    if (id < 0) {
      if (why) *why = "HDF5 cannot describe filter " + std::to_string(i);
      return false;
    }
    values.resize(nv);
    out.push_back({unsigned(id), flags, std::move(values)});
  }
  return true;
}

bool stored_in(hid_t dset, const std::string& path) {
  const Hid f(H5Iget_file_id(dset));
  const Hid fapl(f ? H5Fget_access_plist(f.get()) : H5I_INVALID_HID);
  void* handle = nullptr;
  const bool sec2 = fapl && H5Pget_driver(fapl.get()) == H5FD_SEC2 &&
                    H5Fget_vfd_handle(f.get(), fapl.get(), &handle) >= 0 && handle;
  H5Eclear2(H5E_DEFAULT);
  struct stat a {}, b {};
  return sec2 && ::fstat(*static_cast<int*>(handle), &a) == 0 && ::stat(path.c_str(), &b) == 0 &&
         a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

std::uint64_t chunk_address_base(hid_t file) {
#if H5_VERSION_GE(1, 14, 4)
  (void)file;
  return 0;
#else
  hsize_t ub = 0;
  const Hid fcpl(H5Fget_create_plist(file));
  if (!fcpl || H5Pget_userblock(fcpl.get(), &ub) < 0) fail(ErrorKind::input, "cannot read the user block size");
  return ub;
#endif
}

namespace {

// This thread's CPU time: a codec thread's share of the cores, which wall
// time overstates when more threads run than there are cores.
std::uint64_t thread_cpu_ns() {
  timespec t{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return std::uint64_t(t.tv_sec) * 1000000000u + std::uint64_t(t.tv_nsec);
}

// Times a codec call both ways.
template <class F>
auto timed_codec(ChunkCounters& n, F&& f) {
  const auto t0 = Clock::now();
  const std::uint64_t c0 = thread_cpu_ns();
  auto r = f();
  n.codec_cpu_ns += thread_cpu_ns() - c0;
  n.codec_ns += ns_since(t0);
  return r;
}

// Rows of `row_bytes` at `mem` (one every `stride` bytes) to or from one
// contiguous run of the file at `off`: one preadv/pwritev per IOV_MAX rows.
// A short transfer finishes row by row through the whole-buffer helpers,
// which name the file and the OS reason.
void rows_io(bool write, int fd, std::uint64_t off, unsigned char* mem, std::uint64_t stride, std::uint64_t rows,
             std::uint64_t row_bytes, const std::string& name) {
  std::vector<iovec> iov;
  for (std::uint64_t r = 0; r < rows;) {
    const std::uint64_t n = std::min<std::uint64_t>(rows - r, IOV_MAX);
    iov.resize(std::size_t(n));
    for (std::uint64_t k = 0; k < n; ++k) iov[std::size_t(k)] = {mem + (r + k) * stride, std::size_t(row_bytes)};
    const ssize_t got = write ? ::pwritev(fd, iov.data(), int(n), off_t(off + r * row_bytes))
                              : ::preadv(fd, iov.data(), int(n), off_t(off + r * row_bytes));
    const std::uint64_t whole = got > 0 ? std::uint64_t(got) / row_bytes : 0;
    if (write)  // the power-loss test's log (pwrite_full logs its own)
      for (std::uint64_t k = 0; k < whole; ++k) log_written(fd, iov[std::size_t(k)].iov_base, row_bytes, off + (r + k) * row_bytes);
    for (std::uint64_t k = whole; k < n; ++k) {  // what the vector call left (an error included)
      const std::uint64_t o = off + (r + k) * row_bytes;
      if (write) pwrite_full(fd, mem + (r + k) * stride, row_bytes, o, name);
      else pread_full(fd, mem + (r + k) * stride, row_bytes, o, name);
    }
    r += n;
  }
}

}  // namespace

ChunkIo::ChunkIo(Setup s) : s_(std::move(s)), threads_(s_.threads) {
  chunk_bytes_ = s_.chunk.rows * s_.chunk.cols * s_.elem_size;
  chunk_cols_ = (s_.shape.cols + s_.chunk.cols - 1) / s_.chunk.cols;
  total_chunks_ = ((s_.shape.rows + s_.chunk.rows - 1) / s_.chunk.rows) * chunk_cols_;
  s_.table = s_.table && plan_chunk_table(total_chunks_, sizeof(Entry));
}

ChunkIo::~ChunkIo() {
  // The jobs left running use this object: they finish first (an
  // abandoned run's errors are not news).
  try {
    reap(true);
  } catch (...) {
  }
  store_.reset();  // its thread joined while the counters it adds to live
}

void ChunkIo::set_threads(int n) {
  if (n == threads_) return;
  reap(true);
  pool_.reset();
  store_.reset();
  bufs_.clear();
  threads_ = std::max(0, n);
}

void ChunkIo::reap(bool all) {
  std::lock_guard<std::mutex> lk(pending_mu_);
  std::exception_ptr first;
  while (!pending_.empty() && (all || pool_->finished(*pending_.front()))) {
    const std::shared_ptr<codecs::WorkerPool::Group> g = pending_.front();
    pending_.pop_front();
    try {
      pool_->wait(*g);
    } catch (...) {
      if (!first) first = std::current_exception();
      if (!all) break;  // the rest run on; the next call or drain() waits for them
    }
  }
  if (first) std::rethrow_exception(first);
  // Every encode finished: what they queued is stored next.
  if (all && store_) store_->flush();
}

void ChunkIo::drain() { reap(true); }

std::uint64_t ChunkIo::bytes_per_thread(bool writing) const {
  const std::size_t c = std::size_t(chunk_bytes_);
  const int buffers = writing ? 3 : 2;
  return filtered() ? buffers * std::uint64_t(s_.pipeline.buffer_bytes(c)) + s_.pipeline.state_bytes(c) : 0;
}

codecs::WorkBuffers& ChunkIo::buffers(int worker) {
  codecs::WorkBuffers& w = bufs_[std::size_t(worker)];
  s_.pipeline.prepare(w, std::size_t(chunk_bytes_));
  return w;
}

void ChunkIo::prepare_buffers() {
  // Unfiltered chunks need no buffers (and in place, several engine threads
  // call in at once: nothing shared may change then). One set a pool
  // thread, or one for the caller.
  const std::size_t n = std::size_t(std::max(1, threads_));
  if (filtered() && bufs_.size() < n) bufs_.resize(n);
  if (threads_ > 0 && !pool_) pool_ = codecs::WorkerPool::shared(threads_);
  if (threads_ > 0 && filtered() && s_.store_thread && !store_)
    store_ = std::make_unique<ChunkStore>(
        s_.fd, threads_, s_.pipeline.buffer_bytes(std::size_t(chunk_bytes_)),
        [this](std::uint64_t i, std::uint64_t j, const void* data, std::size_t n, unsigned mask) {
          store_now(i, j, data, n, mask);
        },
        n_);
}

void ChunkIo::run(std::size_t jobs, const codecs::WorkerPool::Job& job) {
  prepare_buffers();
  if (threads_ == 0) {
    for (std::size_t k = 0; k < jobs; ++k) job(k, 0);
    return;
  }
  const auto t0 = Clock::now();
  pool_->run(jobs, job);
  n_.wait_ns += ns_since(t0);
}

std::string ChunkIo::chunk_text(const Ref& c) const {
  const std::uint64_t r = c.i * s_.chunk.rows, k = c.j * s_.chunk.cols;
  return "chunk (" + std::to_string(c.i) + ", " + std::to_string(c.j) + ") (rows " + std::to_string(r) + "-" +
         std::to_string(std::min(r + s_.chunk.rows, s_.shape.rows) - 1) + ", cols " + std::to_string(k) + "-" +
         std::to_string(std::min(k + s_.chunk.cols, s_.shape.cols) - 1) + ") of " + s_.what;
}

ChunkIo::Ref ChunkIo::lookup(std::uint64_t i, std::uint64_t j) const {
  Ref c;
  c.i = i;
  c.j = j;
  hsize_t off[2] = {i * s_.chunk.rows, j * s_.chunk.cols}, size = 0;
  haddr_t addr = HADDR_UNDEF;
  if (H5Dget_chunk_info_by_coord(s_.dset, off, &c.mask, &addr, &size) < 0)
    fail(ErrorKind::io, "cannot locate " + chunk_text(c));
  c.present = addr != HADDR_UNDEF;
  // H5Dread finds a chunk by a search of the index, this by a walk of
  // it: on a damaged index they can disagree, and the data read must
  // be what HDF5 itself reads, or an error.
  hsize_t stored = 0;
  const bool found = H5Dget_chunk_storage_size(s_.dset, off, &stored) >= 0 && stored > 0;
  H5Eclear2(H5E_DEFAULT);
  if (found != c.present || (found && stored != size))
    throw Error(ErrorKind::input, chunk_text(c) + ": the file's chunk index contradicts itself: the file is damaged");
  c.addr = c.present ? s_.base + addr : 0;
  c.size = size;
  return c;
}

void ChunkIo::build_table() {
  std::vector<Entry> t(static_cast<std::size_t>(total_chunks_));
  auto lk = serial();
  quiet();
  for (std::uint64_t k = 0; k < total_chunks_; ++k) {
    const Ref c = lookup(k / chunk_cols_, k % chunk_cols_);
    t[std::size_t(k)] = {c.addr, c.size, c.mask, c.present};
  }
  table_ = std::move(t);
}

std::vector<ChunkIo::Ref> ChunkIo::locate(std::uint64_t r0, std::uint64_t c0, std::uint64_t h, std::uint64_t w) {
  const std::uint64_t rb = s_.chunk.rows, cb = s_.chunk.cols;
  const auto t0 = Clock::now();
  // A source reads from one thread (its reader): the table needs no lock.
  if (s_.table && table_.empty()) build_table();
  std::vector<Ref> refs;
  const auto each = [&](auto&& ref_of) {
    for (std::uint64_t i = r0 / rb; i <= (r0 + h - 1) / rb; ++i)
      for (std::uint64_t j = c0 / cb; j <= (c0 + w - 1) / cb; ++j) refs.push_back(ref_of(i, j));
  };
  if (!table_.empty()) {
    each([&](std::uint64_t i, std::uint64_t j) {
      const Entry& e = table_[std::size_t(i * chunk_cols_ + j)];
      return Ref{i, j, e.addr, e.size, e.mask, e.present};
    });
  } else {
    auto lk = serial();
    quiet();
    each([&](std::uint64_t i, std::uint64_t j) { return lookup(i, j); });
  }
  n_.locate_ns += ns_since(t0);
  return refs;
}

ChunkIo::Span ChunkIo::span_of(const Ref& c, std::uint64_t r0, std::uint64_t c0, std::uint64_t h,
                               std::uint64_t w) const {
  const std::uint64_t cr = c.i * s_.chunk.rows, cc = c.j * s_.chunk.cols;
  return {std::max(cr, r0), std::min({cr + s_.chunk.rows, r0 + h, s_.shape.rows}), std::max(cc, c0),
          std::min({cc + s_.chunk.cols, c0 + w, s_.shape.cols})};
}

bool ChunkIo::aligned(std::uint64_t r0, std::uint64_t c0, std::uint64_t h, std::uint64_t w) const {
  const std::uint64_t rb = s_.chunk.rows, cb = s_.chunk.cols;
  return r0 % rb == 0 && c0 % cb == 0 && ((r0 + h) % rb == 0 || r0 + h == s_.shape.rows) &&
         ((c0 + w) % cb == 0 || c0 + w == s_.shape.cols);
}

void ChunkIo::read(std::uint64_t r0, std::uint64_t c0, std::uint64_t h, std::uint64_t w, void* dst,
                   std::uint64_t ld) {
  check_rect(s_.shape, r0, c0, h, w, ld, s_.what);
  if (h == 0 || w == 0) return;
  const std::vector<Ref> refs = locate(r0, c0, h, w);
  auto* out = static_cast<unsigned char*>(dst);
  run(refs.size(), [&](std::size_t k, int worker) {
    read_chunk(refs[k], span_of(refs[k], r0, c0, h, w), out, r0, c0, ld, worker);
  });
}

void ChunkIo::read_chunk(const Ref& c, const Span& s, unsigned char* dst, std::uint64_t r0, std::uint64_t c0,
                         std::uint64_t ld, int worker) {
  const std::size_t es = s_.elem_size;
  const std::uint64_t cb = s_.chunk.cols, cr = c.i * s_.chunk.rows, cc = c.j * cb;
  const std::uint64_t width = (s.c1 - s.c0) * es;
  auto out = [&](std::uint64_t r) { return dst + ((r - r0) * ld + (s.c0 - c0)) * es; };
  // Where element (r, s.c0) lies in the chunk, in bytes.
  auto in_chunk = [&](std::uint64_t r) { return ((r - cr) * cb + (s.c0 - cc)) * es; };
  if (!c.present) {  // never written: HDF5 reads it as the fill value
    for (std::uint64_t r = s.r0; r < s.r1; ++r)
      for (std::uint64_t k = 0; k < width; k += es) std::memcpy(out(r) + k, s_.fill.data(), es);
    return;
  }
  if (!filtered()) {
    if (c.size != chunk_bytes_)
      throw Error(ErrorKind::input, chunk_text(c) + " holds " + std::to_string(c.size) + " bytes, not the " +
                                        std::to_string(chunk_bytes_) + " of an unfiltered chunk: the file is damaged");
    return unfiltered(false, c, s, out(s.r0), ld * es);
  }
  codecs::WorkBuffers& wb = buffers(worker);
  if (c.size > wb.a.size())
    throw Error(ErrorKind::input, chunk_text(c) + " claims " + std::to_string(c.size) +
                                      " stored bytes, more than its filters make of a " +
                                      std::to_string(chunk_bytes_) + "-byte chunk: the file is damaged");
  const auto t_io = Clock::now();
  pread_full(s_.fd, wb.a.data(), c.size, c.addr, s_.what);
  n_.io_ns += ns_since(t_io);
  codecs::Coded d;
  try {
    d = timed_codec(n_, [&] { return s_.pipeline.decode(wb, std::size_t(c.size), c.mask, std::size_t(chunk_bytes_)); });
  } catch (const codecs::CodecError& e) {
    throw Error(ErrorKind::input, "cannot decode " + chunk_text(c) + ": " + e.what());
  }
  for (std::uint64_t r = s.r0; r < s.r1; ++r) std::memcpy(out(r), d.data + in_chunk(r), width);
  n_.raw += chunk_bytes_;
  n_.stored += c.size;
  ++n_.chunks;
}

void ChunkIo::unfiltered(bool write, const Ref& c, const Span& s, unsigned char* first, std::uint64_t stride) {
  const std::size_t es = s_.elem_size;
  const std::uint64_t cb = s_.chunk.cols, cc = c.j * cb, width = (s.c1 - s.c0) * es, rows = s.r1 - s.r0;
  const std::uint64_t at = c.addr + ((s.r0 - c.i * s_.chunk.rows) * cb + (s.c0 - cc)) * es;  // element (s.r0, s.c0)
  // Rows of a whole chunk width are one run of the file; a narrower part
  // (an edge chunk, or in place) goes row by row, leaving the rest alone.
  const auto t0 = Clock::now();
  if (s.c0 == cc && s.c1 - s.c0 == cb) {
    rows_io(write, s_.fd, at, first, stride, rows, width, s_.what);
  } else {
    for (std::uint64_t k = 0; k < rows; ++k) {
      if (write) pwrite_full(s_.fd, first + k * stride, width, at + k * cb * es, s_.what);
      else pread_full(s_.fd, first + k * stride, width, at + k * cb * es, s_.what);
    }
  }
  n_.io_ns += ns_since(t0);
  n_.raw += rows * width;
  n_.stored += rows * width;
}

void ChunkIo::write(std::uint64_t r0, std::uint64_t c0, std::uint64_t h, std::uint64_t w, const void* src,
                    std::uint64_t ld) {
  check_rect(s_.shape, r0, c0, h, w, ld, s_.what);
  if (h == 0 || w == 0) return;
  if (filtered() && !aligned(r0, c0, h, w))
    throw Error(ErrorKind::internal, "a write of part of a compressed chunk reached the direct path of " + s_.what);
  std::vector<Ref> refs;
  if (filtered()) {  // H5Dwrite_chunk places them: only their coordinates
    for (std::uint64_t i = r0 / s_.chunk.rows; i <= (r0 + h - 1) / s_.chunk.rows; ++i)
      for (std::uint64_t j = c0 / s_.chunk.cols; j <= (c0 + w - 1) / s_.chunk.cols; ++j) refs.push_back({i, j});
  } else {
    refs = locate(r0, c0, h, w);
  }
  const auto* in = static_cast<const unsigned char*>(src);
  if (!filtered() || threads_ == 0) {
    return run(refs.size(), [&](std::size_t k, int worker) {
      write_chunk(refs[k], span_of(refs[k], r0, c0, h, w), in, r0, c0, ld, worker);
    });
  }
  // Encoded and stored on the pool after this returns: the job owns what it
  // needs but `src`, which it reads only until release_input().
  reap(false);
  prepare_buffers();
  const auto t0 = Clock::now();
  const std::size_t n = refs.size();
  auto g = pool_->submit(n, [this, refs = std::move(refs), in, r0, c0, h, w, ld](std::size_t k, int worker) {
    write_chunk(refs[k], span_of(refs[k], r0, c0, h, w), in, r0, c0, ld, worker);
  });
  pool_->wait_released(*g);
  n_.wait_ns += ns_since(t0);
  bool last = false;
  {
    std::lock_guard<std::mutex> lk(pending_mu_);
    pending_.push_back(std::move(g));
    last = (submitted_ += n) >= total_chunks_;
  }
  // The run's last chunks: its write stage ends when they are stored.
  if (last) drain();
}

void ChunkIo::store_encoded(std::uint64_t i, std::uint64_t j, const void* data, std::size_t n, unsigned mask) {
  const std::uint64_t r0 = i * s_.chunk.rows, c0 = j * s_.chunk.cols;
  if (r0 >= s_.shape.rows || c0 >= s_.shape.cols)
    throw Error(ErrorKind::internal, "chunk (" + std::to_string(i) + ", " + std::to_string(j) + ") is outside " + s_.what);
  if (!filtered()) {
    if (n != chunk_bytes_) throw Error(ErrorKind::internal, "an unfiltered chunk of the wrong size for " + s_.what);
    return write(r0, c0, std::min(s_.chunk.rows, s_.shape.rows - r0), std::min(s_.chunk.cols, s_.shape.cols - c0), data,
                 s_.chunk.cols);
  }
  // From any thread, beside the store thread: both take serial() (HDF5's
  // own lock in a thread-safe build) around H5Dwrite_chunk.
  store_now(i, j, data, n, mask);
  n_.raw += chunk_bytes_;
  n_.stored += n;
  ++n_.chunks;
}

void ChunkIo::store_now(std::uint64_t i, std::uint64_t j, const void* data, std::size_t n, unsigned mask) {
  const auto t0 = Clock::now();
  {
    auto lk = serial();
    n_.lock_ns += ns_since(t0);
    quiet();
    hsize_t off[2] = {i * s_.chunk.rows, j * s_.chunk.cols};
    if (H5Dwrite_chunk(s_.dset, H5P_DEFAULT, mask, off, n, data) < 0)
      fail(ErrorKind::io, "cannot write " + chunk_text({i, j}));
  }
  n_.io_ns += ns_since(t0);
}

void ChunkIo::write_chunk(const Ref& c, const Span& s, const unsigned char* src, std::uint64_t r0,
                          std::uint64_t c0, std::uint64_t ld, int worker) {
  const std::size_t es = s_.elem_size;
  const std::uint64_t cb = s_.chunk.cols, cr = c.i * s_.chunk.rows, cc = c.j * cb;
  const std::uint64_t width = (s.c1 - s.c0) * es, rows = s.r1 - s.r0;
  auto in = [&](std::uint64_t r) { return src + ((r - r0) * ld + (s.c0 - c0)) * es; };
  auto in_chunk = [&](std::uint64_t r) { return ((r - cr) * cb + (s.c0 - cc)) * es; };
  if (!filtered()) {
    if (!c.present) throw Error(ErrorKind::internal, chunk_text(c) + " has no storage to write to");
    return unfiltered(true, c, s, const_cast<unsigned char*>(in(s.r0)), ld * es);
  }
  codecs::WorkBuffers& wb = buffers(worker);
  // An edge chunk is stored whole: the part past the matrix is zeros.
  if (rows != s_.chunk.rows || s.c1 - s.c0 != cb) std::memset(wb.a.data(), 0, std::size_t(chunk_bytes_));
  for (std::uint64_t r = s.r0; r < s.r1; ++r) std::memcpy(wb.a.data() + in_chunk(r), in(r), width);
  codecs::WorkerPool::release_input();
  codecs::Coded e;
  try {
    e = timed_codec(n_, [&] { return s_.pipeline.encode(wb, std::size_t(chunk_bytes_)); });
  } catch (const codecs::CodecError& err) {
    throw Error(ErrorKind::io, "cannot encode " + chunk_text(c) + ": " + err.what());
  }
  if (store_) store_->put(c.i, c.j, e, wb);
  else store_now(c.i, c.j, e.data, e.size, e.mask);
  n_.raw += chunk_bytes_;
  n_.stored += e.size;
  ++n_.chunks;
}

std::string ChunkIo::note(const char* verb) const {
  char io[256];
  const bool enc = std::string(verb) == "encoded";
  const auto sec = [](const std::atomic<std::uint64_t>& ns) { return double(ns) / 1e9; };
  if (enc && filtered() && store_)
    std::snprintf(io, sizeof io,
                  "%.2f s in H5Dwrite_chunk on the store thread, %.2f s of codec threads waiting for a store slot, "
                  "%.2f s waiting for threads to take the chunks",
                  sec(n_.io_ns), sec(n_.store_wait_ns), sec(n_.wait_ns));
  else if (enc && filtered())
    std::snprintf(io, sizeof io, "%.2f s in H5Dwrite_chunk (%.2f s of it waiting for the lock), %.2f s waiting for threads to take the chunks",
                  sec(n_.io_ns), sec(n_.lock_ns), sec(n_.wait_ns));
  else if (filtered())
    std::snprintf(io, sizeof io, "%.2f s of file I/O, %.2f s finding chunks (%s), %.2f s waiting for decoded tiles",
                  sec(n_.io_ns), sec(n_.locate_ns),
                  table_.empty() ? "looked up tile by tile" : "the index read once", sec(n_.wait_ns));
  else
    std::snprintf(io, sizeof io, "%.2f s of file I/O", sec(n_.io_ns));
  if (!filtered())
    return std::string("direct chunks, uncompressed: pread/pwrite at their offsets") +
           (threads_ ? " on " + std::to_string(threads_) + " threads" : "") + ", " + io;
  const std::uint64_t raw = n_.raw, stored = n_.stored;
  char ratio[32] = "";
  if (stored) std::snprintf(ratio, sizeof ratio, " (%.2f:1)", double(raw) / double(stored));
  char secs[96];
  std::snprintf(secs, sizeof secs, "%.2f s of codec CPU time (%.2f s wall)", double(n_.codec_cpu_ns) / 1e9,
                double(n_.codec_ns) / 1e9);
  return "direct chunks, " + s_.pipeline.names() + " on " + std::to_string(std::max(1, threads_)) +
         " codec threads: " + format_bytes(raw) + " " + verb + (enc ? " to " : " from ") + format_bytes(stored) +
         " stored" + ratio + ", " + secs + ", " + io;
}

// Busy time is the codecs' CPU time: threads the cores cannot all run at
// once do not count their time off the CPU.
StageStat ChunkIo::stage(const char* name) const { return {name, double(n_.codec_cpu_ns) / 1e9, n_.raw}; }

}  // namespace gt::fmt::h5
