// The crash-safety journal of in-place runs: the protocol is in journal.hpp.
//
// The journal is "<matrix file>.gtjournal", beside the matrix:
//   [0, 4096)      header copy for even sequence numbers
//   [4096, 8192)   header copy for odd sequence numbers
//   [8192, ...)    the batch in flight: the new content of its tiles b
//                  (the transposes of its tiles a), back to back in pair order
// Headers are written alternately with increasing sequence numbers, each with
// its own checksum, so a torn header write leaves the other copy (the last
// durable state) intact; opening takes the valid copy with the highest
// sequence number. The batch data carries a checksum in the header that
// describes it, so a torn data write is detected too.
//
// Per batch: flush the matrix if the previous batch left tiles b unsynced
// (their journal data is about to be overwritten); step 1 data + header
// "saved", one fdatasync; step 2 tiles a, matrix flush; step 3 header
// "a_written", fdatasync; step 4 tiles b (made durable lazily, by the next
// batch or by finish()).
//
// Recovery (a resumed run) reads the latest header:
//   idle                   pairs below `done` are complete: go on from there;
//   saved, data valid      step 2 may be partial, tiles b are still original in
//                          the matrix: redo step 2 from them, then steps 3, 4;
//   saved, data invalid    step 1 was torn, so the matrix was not touched for
//                          this batch (nor its data area reused): go on from
//                          the batch's first pair;
//   a_written, data valid  redo step 4 from the journal;
//   a_written, data invalid   the next batch had begun to reuse the data area,
//                          which it does only after this batch's tiles b were
//                          flushed: the batch is complete.
// Every batch passes "a_written" before any tile b of it is written, which is
// what makes the two "data invalid" cases sound.
#include "gtranspose/journal.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <optional>
#include <type_traits>
#include <vector>

#include "core/paths.hpp"
#include "formats/plain_io.hpp"
#include "gtranspose/cpu_transpose.hpp"
#include "gtranspose/error.hpp"
#include "gtranspose/sizes.hpp"
#include "gtranspose/tempfile.hpp"
#include "inplace/journal_detail.hpp"

namespace gt {

// --- checksum and test hook ---------------------------------------------------

namespace journal_detail {

namespace {

constexpr std::uint64_t kP1 = 0x9E3779B185EBCA87ull, kP2 = 0xC2B2AE3D27D4EB4Full, kP3 = 0x165667B19E3779F9ull,
                        kP4 = 0x85EBCA77C2B2AE63ull, kP5 = 0x27D4EB2F165667C5ull;

inline std::uint64_t rotl(std::uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
inline std::uint64_t load64(const unsigned char* p) {
  std::uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
// One lane step: multiply the word in, rotate, multiply again.
inline std::uint64_t mix(std::uint64_t acc, std::uint64_t word) { return rotl(acc + word * kP2, 31) * kP1; }

std::function<void(Point)>& hook() {
  static std::function<void(Point)> h;
  return h;
}

}  // namespace

StreamHash::StreamHash(std::uint64_t seed) : lane_{seed + kP1 + kP2, seed + kP2, seed, seed - kP1}, seed_(seed) {}

void StreamHash::update(const void* data, std::size_t n) {
  auto p = static_cast<const unsigned char*>(data);
  total_ += n;
  if (fill_) {  // complete the pending 32 bytes first
    const std::size_t take = std::min(n, sizeof pending_ - fill_);
    std::memcpy(pending_ + fill_, p, take);
    fill_ += take;
    p += take;
    n -= take;
    if (fill_ < sizeof pending_) return;
    for (int i = 0; i < 4; ++i) lane_[i] = mix(lane_[i], load64(pending_ + 8 * i));
    fill_ = 0;
  }
  std::uint64_t v0 = lane_[0], v1 = lane_[1], v2 = lane_[2], v3 = lane_[3];
  for (; n >= 32; p += 32, n -= 32) {
    v0 = mix(v0, load64(p));
    v1 = mix(v1, load64(p + 8));
    v2 = mix(v2, load64(p + 16));
    v3 = mix(v3, load64(p + 24));
  }
  lane_[0] = v0, lane_[1] = v1, lane_[2] = v2, lane_[3] = v3;
  std::memcpy(pending_, p, n);
  fill_ = n;
}

std::uint64_t StreamHash::digest() const {
  std::uint64_t h;
  if (total_ >= 32) {
    h = rotl(lane_[0], 1) + rotl(lane_[1], 7) + rotl(lane_[2], 12) + rotl(lane_[3], 18);
    for (std::uint64_t l : lane_) h = (h ^ mix(0, l)) * kP1 + kP4;
  } else {
    h = seed_ + kP5;
  }
  h += total_;
  const unsigned char* p = pending_;
  std::size_t n = fill_;
  for (; n >= 8; p += 8, n -= 8) h = rotl(h ^ mix(0, load64(p)), 27) * kP1 + kP4;
  for (; n; ++p, --n) h = rotl(h ^ (*p * kP5), 11) * kP1;
  h ^= h >> 33;
  h *= kP2;
  h ^= h >> 29;
  h *= kP3;
  h ^= h >> 32;
  return h;
}

void set_hook(std::function<void(Point)> h) { hook() = std::move(h); }

}  // namespace journal_detail

namespace {

using journal_detail::Point;
using journal_detail::StreamHash;
using Clock = std::chrono::steady_clock;

void hit(Point p) {
  if (auto& h = journal_detail::hook()) h(p);
}

// --- the on-disk header -------------------------------------------------------

enum class Phase : std::uint32_t { idle = 0, saved = 1, a_written = 2 };

constexpr char kMagic[8] = {'G', 'T', 'J', 'O', 'U', 'R', 'N', 'L'};
constexpr std::uint32_t kVersion = 1;
constexpr std::uint64_t kSlotBytes = 4096;
constexpr std::uint64_t kDataOffset = 2 * kSlotBytes;
constexpr std::size_t kNameBytes = 512;
constexpr std::uint64_t kDefaultRecoveryBytes = std::uint64_t(64) << 20;

struct Header {
  char magic[8];
  std::uint32_t version;
  std::uint32_t size;        // sizeof(Header)
  std::uint64_t seq;         // increases with every write; slot = seq & 1
  std::uint32_t phase;       // Phase
  std::uint32_t format;      // gt::Format of the matrix
  // The plan.
  std::uint64_t n, elem_size, block, pairs;
  // The matrix's identity.
  std::uint64_t file_size;   // not compared for HDF5, whose file may grow as chunks are rewritten
  std::uint64_t dev, ino;    // of the matrix file
  std::uint64_t folder_dev;  // of the journal's folder: tells a renumbered device from another file
  std::uint64_t dataset_hash, dataset_len;
  char dataset[kNameBytes];  // the HDF5 dataset (its start, for messages), "" otherwise
  // Progress.
  std::uint64_t done;        // pairs below this are complete and durable
  std::uint64_t batch_first, batch_count, batch_bytes, data_sum;  // the batch in flight (saved, a_written)
  std::uint64_t header_sum;  // over every byte above
};
static_assert(std::is_trivially_copyable<Header>::value && std::is_standard_layout<Header>::value,
              "the header is written as bytes");
static_assert(sizeof(Header) <= kSlotBytes, "a header fits its slot");
static_assert(sizeof(Header) == offsetof(Header, header_sum) + 8, "no padding after the checksum");

std::uint64_t header_sum(const Header& h) { return journal_detail::hash_bytes(&h, offsetof(Header, header_sum)); }

bool valid(const Header& h) {
  return std::memcmp(h.magic, kMagic, sizeof kMagic) == 0 && h.version == kVersion && h.size == sizeof(Header) &&
         h.header_sum == header_sum(h);
}

std::string shape_text(std::uint64_t n) { return std::to_string(n) + "x" + std::to_string(n); }

std::string dataset_text(const Header& h) {
  return std::string(h.dataset, strnlen(h.dataset, kNameBytes)) + (h.dataset_len >= kNameBytes ? "..." : "");
}

// What differs between the matrix a journal was written for and this one
// ("" when they are the same).
std::string mismatch(const Header& j, const Header& now) {
  if (j.n != now.n) return "a " + shape_text(j.n) + " matrix, not " + shape_text(now.n);
  if (j.elem_size != now.elem_size)
    return std::to_string(j.elem_size) + "-byte elements, not " + std::to_string(now.elem_size) + "-byte";
  if (j.format != now.format)
    return std::string("a ") + format_name(Format(j.format)) + " file, not " + format_name(Format(now.format));
  if (j.dataset_hash != now.dataset_hash || j.dataset_len != now.dataset_len)
    return "dataset " + dataset_text(j) + ", not " + dataset_text(now);
  // A device number may change across a reboot; the matrix then still lies
  // on its journal's device, as it did.
  const bool same_device = j.dev == now.dev || (j.dev == j.folder_dev && now.dev == now.folder_dev);
  if (!same_device || j.ino != now.ino)
    return "another file (device " + std::to_string(j.dev) + " inode " + std::to_string(j.ino) + ", now device " +
           std::to_string(now.dev) + " inode " + std::to_string(now.ino) + ")";
  if (Format(j.format) != Format::hdf5 && j.file_size != now.file_size)
    return "a file of " + std::to_string(j.file_size) + " bytes, now " + std::to_string(now.file_size);
  return "";
}

// Reads up to n bytes at off; false at the end of the file.
bool pread_exact(int fd, void* buf, std::uint64_t n, std::uint64_t off, const std::string& name) {
  auto p = static_cast<unsigned char*>(buf);
  while (n) {
    const ssize_t got = ::pread(fd, p, std::size_t(std::min<std::uint64_t>(n, 1u << 30)), off_t(off));
    if (got < 0) {
      if (errno == EINTR) continue;
      throw_errno(ErrorKind::io, "cannot read the journal " + name);
    }
    if (got == 0) return false;
    p += got;
    n -= std::uint64_t(got);
    off += std::uint64_t(got);
  }
  return true;
}

void sync_folder(const std::string& path) {
  const std::string dir = paths::dir_of(path);
  fmt::Fd d(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!d) throw_errno(ErrorKind::io, "cannot open the folder " + dir + " to make the journal durable");
  if (::fsync(d.get()) != 0 && errno != EINVAL && errno != ENOTSUP)  // some file systems cannot sync folders
    throw_errno(ErrorKind::io, "cannot flush the folder " + dir + " to disk");
}

// --- the journaled writer -----------------------------------------------------

class Journal final : public InplaceWriter {
 public:
  Journal(InplaceMatrix& m, const std::string& matrix_path, ResumeMode mode, std::uint64_t host_mem)
      : matrix_(matrix_path), path_(journal_path(matrix_path)), host_mem_(host_mem) {
    id_ = identity(m);
    if (mode == ResumeMode::fresh) {
      if (fmt::path_exists(path_))
        throw Error(ErrorKind::input, matrix_ + " has a journal from an interrupted in-place run (" + path_ +
                                          "): rerun with {resume} to finish it");
      return;
    }
    resume(m);
  }
  // Never removes the journal: only finish() does, once the matrix is complete.
  ~Journal() override = default;

  std::uint64_t required_block() const override { return resumed_ ? h_.block : 0; }
  std::uint64_t first_pair() const override { return start_; }
  std::uint64_t journal_bytes() const override { return bytes_; }
  double journal_seconds() const override { return secs_; }

  void begin(const PairGrid& plan) override {
    if (begun_) throw Error(ErrorKind::internal, "journal: begin() called twice");
    if (plan.n() != id_.n)
      throw Error(ErrorKind::internal, "journal: the plan is for n = " + std::to_string(plan.n()) + ", the matrix has " +
                                           std::to_string(id_.n));
    if (resumed_) {
      if (plan.block() != h_.block || plan.count() != h_.pairs)
        throw Error(ErrorKind::internal, "a resumed in-place run must keep its journal's " + shape_text(h_.block) +
                                             " tiles; the engine planned " + shape_text(plan.block()));
    } else {
      create(plan);
    }
    plan_.emplace(plan);
    begun_ = true;
  }

  void write_batch(InplaceMatrix& m, const std::vector<PairWrite>& batch) override {
    if (!begun_ || finished_) throw Error(ErrorKind::internal, "journal: write_batch() outside begin()/finish()");
    if (batch.empty()) return;
    const std::uint64_t es = id_.elem_size;
    std::uint64_t bytes = 0;
    bool any_a = false;
    for (std::size_t i = 0; i < batch.size(); ++i) check_pair(batch[i], next_ + i, bytes, any_a);

    // The previous batch's tiles b must be durable before its data is overwritten.
    if (matrix_dirty_) {
      m.flush();
      matrix_dirty_ = false;
      hit(Point::prev_flushed);
    }

    // Step 1: the new tiles b into the journal, then a header that describes
    // them, then one sync. The matrix is untouched until the sync returns.
    StreamHash sum;
    std::uint64_t off = kDataOffset;
    timed([&] {
      for (const PairWrite& w : batch) {
        const std::uint64_t n = w.pair.b.elems() * es;
        fmt::pwrite_full(fd_.get(), w.new_b, n, off, path_);
        // The disk starts on this tile while the next is copied: the sync
        // below then waits for the tail, not for the whole batch.
        fmt::start_writeback(fd_.get(), off, n, path_);
        sum.update(w.new_b, std::size_t(n));
        off += n;
      }
    });
    bytes_ += bytes;
    hit(Point::data_written);
    Header h = h_;
    h.phase = std::uint32_t(Phase::saved);
    h.done = batch.front().index;
    h.batch_first = batch.front().index;
    h.batch_count = batch.size();
    h.batch_bytes = bytes;
    h.data_sum = sum.digest();
    put_header(h);
    hit(Point::saved_written);
    sync_journal();
    hit(Point::saved_synced);

    // Step 2: the new tiles a into the matrix, durable.
    if (any_a) {
      for (const PairWrite& w : batch) {
        if (!w.new_a) continue;
        const Tile& a = w.pair.a;
        m.write(a.r0, a.c0, a.h, a.w, w.new_a, a.w);
        m.start_writeback(a.r0, a.h);  // overlap the disk with the next tile's copy
        hit(Point::a_tile);
      }
      m.flush();
    }
    hit(Point::a_flushed);

    // Step 3: the journal says so. Every batch passes this point before any
    // tile b is written (recovery relies on it, see the top of this file).
    h.phase = std::uint32_t(Phase::a_written);
    put_header(h);
    hit(Point::a_marked);
    sync_journal();
    hit(Point::a_marked_synced);

    // Step 4: the new tiles b into the matrix; the next batch or finish() flushes them.
    for (const PairWrite& w : batch) {
      const Tile& b = w.pair.b;
      m.write(b.r0, b.c0, b.h, b.w, w.new_b, b.w);
      m.start_writeback(b.r0, b.h);  // the next batch's flush then finds less to do
      hit(Point::b_tile);
    }
    matrix_dirty_ = true;
    next_ += batch.size();
  }

  void finish(InplaceMatrix& m) override {
    if (!begun_ || finished_) throw Error(ErrorKind::internal, "journal: finish() without begin()");
    if (next_ != plan_->count())
      throw Error(ErrorKind::internal, "in-place run ended after " + std::to_string(next_) + " of " +
                                           std::to_string(plan_->count()) + " tile pairs; its journal " + path_ +
                                           " is kept for {resume}");
    m.flush();
    matrix_dirty_ = false;
    hit(Point::finish_flushed);
    fd_.reset();
    if (::unlink(path_.c_str()) != 0 && errno != ENOENT) throw_errno(ErrorKind::io, "cannot remove the journal " + path_);
    sync_folder(path_);
    finished_ = true;
    hit(Point::removed);
  }

 private:
  template <class F>
  void timed(F&& fn) {
    const auto t0 = Clock::now();
    fn();
    secs_ += std::chrono::duration<double>(Clock::now() - t0).count();
  }

  // The identity and shape of the matrix, as a header without a plan.
  Header identity(const InplaceMatrix& m) const {
    Header h{};
    std::memcpy(h.magic, kMagic, sizeof kMagic);
    h.version = kVersion;
    h.size = sizeof(Header);
    const Location& loc = m.location();
    h.format = std::uint32_t(loc.format);
    h.n = m.info().shape.rows;
    h.elem_size = m.info().elem_size;
    struct stat st {};
    if (::stat(matrix_.c_str(), &st) != 0) throw_errno(ErrorKind::input, "cannot stat " + matrix_);
    h.file_size = std::uint64_t(st.st_size);
    h.dev = std::uint64_t(st.st_dev);
    h.ino = std::uint64_t(st.st_ino);
    const std::string dir = paths::dir_of(path_);
    if (::stat(dir.c_str(), &st) != 0) throw_errno(ErrorKind::input, "cannot stat the folder " + dir);
    h.folder_dev = std::uint64_t(st.st_dev);
    h.dataset_hash = journal_detail::hash_bytes(loc.dataset.data(), loc.dataset.size());
    h.dataset_len = loc.dataset.size();
    std::memcpy(h.dataset, loc.dataset.data(), std::min(loc.dataset.size(), kNameBytes - 1));
    return h;
  }

  // Checks that `w` is pair `index` of the plan; adds its tile b's bytes.
  void check_pair(const PairWrite& w, std::uint64_t index, std::uint64_t& bytes, bool& any_a) const {
    if (w.index != index || index >= plan_->count())
      throw Error(ErrorKind::internal, "journal: got tile pair " + std::to_string(w.index) + ", expected " +
                                           std::to_string(index) + " (batches must continue one another)");
    const TilePair p = plan_->pair(index);
    const auto same = [](const Tile& x, const Tile& y) { return x.r0 == y.r0 && x.c0 == y.c0 && x.h == y.h && x.w == y.w; };
    if (!same(p.a, w.pair.a) || !same(p.b, w.pair.b) || !w.new_b || (w.new_a != nullptr) == p.diagonal())
      throw Error(ErrorKind::internal, "journal: tile pair " + std::to_string(index) + " does not match the plan");
    bytes += p.b.elems() * id_.elem_size;
    any_a = any_a || w.new_a;
  }

  // Writes header h as the next one (its sequence number follows the last).
  void put_header(Header& h) {
    h.seq = h_.seq + 1;
    h.header_sum = header_sum(h);
    timed([&] { fmt::pwrite_full(fd_.get(), &h, sizeof h, (h.seq & 1) * kSlotBytes, path_); });
    bytes_ += sizeof h;
    h_ = h;
  }

  void sync_journal() {
    timed([&] { fmt::sync_file(fd_.get(), path_, true); });
  }

  // A fresh run: the journal's first header is written and made durable
  // before the journal gets its name, so a journal under its name always has
  // a valid header; the naming fails if one exists already. The file is made
  // unnamed (O_TMPFILE) in the journal's folder and linked to its name, so a
  // kill before that leaves nothing behind. Where the file system cannot make
  // or link unnamed files, it is made under a temporary name (which a kill -9
  // in those few milliseconds leaves in the folder: no signal handler runs).
  void create(const PairGrid& plan) {
    Header h = id_;
    h.phase = std::uint32_t(Phase::idle);
    h.block = plan.block();
    h.pairs = plan.count();
    h.seq = 0;
    h_ = h;
    const std::string exists = matrix_ + " has a journal from an interrupted in-place run (" + path_ +
                               "): rerun with {resume} to finish it";
    // The first header into fd, durable.
    const auto start = [&](int fd) {
      fd_ = fmt::Fd(fd);
      h_.seq = 0;
      put_header(h);
      timed([&] { fmt::sync_file(fd_.get(), path_, false); });
      hit(Point::created);
    };
    const auto create_file = [&](const std::string& p) {
      int fd = ::open(p.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
      if (fd < 0 && errno == EEXIST && p == path_) throw Error(ErrorKind::input, exists);
      if (fd < 0)
        throw_errno(ErrorKind::output, "cannot create the journal " + path_ +
                                           " (an in-place run keeps one beside the matrix, so its folder must be writable)");
      start(fd);
    };
    if (!create_unnamed(start, exists)) {
      TempPath tmp(path_);
      create_file(tmp.path());
      if (::link(tmp.path().c_str(), path_.c_str()) != 0) {
        if (errno == EEXIST) throw Error(ErrorKind::input, exists);
        // A file system without hard links: create the journal under its
        // own name. A crash before its header is durable then leaves an
        // empty journal, which a resumed run recognises (the matrix is unchanged).
        fd_.reset();
        create_file(path_);
      }
      hit(Point::named);
    }  // the temporary name goes; the journal keeps the file
    timed([&] { sync_folder(path_); });
    hit(Point::begun);
  }

  // The journal as an unnamed file in its folder, started by `start` and
  // then linked to its name. False, with nothing created, where the file
  // system has no unnamed files or they cannot be linked (no /proc); the
  // caller then makes it under a temporary name, which reports the errors.
  template <class Start>
  bool create_unnamed(const Start& start, const std::string& exists) {
#ifdef O_TMPFILE
    const int fd = ::open(paths::dir_of(path_).c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0644);
    if (fd < 0) return false;  // EOPNOTSUPP, EISDIR (older kernels), EACCES...: the named way says why
    start(fd);
    // Linking an unnamed file goes through /proc (AT_EMPTY_PATH would need
    // CAP_DAC_READ_SEARCH); like link(2), it fails if the name exists.
    const std::string self = "/proc/self/fd/" + std::to_string(fd_.get());
    for (bool via_proc : {true, false}) {
      if ((via_proc ? ::linkat(AT_FDCWD, self.c_str(), AT_FDCWD, path_.c_str(), AT_SYMLINK_FOLLOW)
                    : ::linkat(fd_.get(), "", AT_FDCWD, path_.c_str(), AT_EMPTY_PATH)) == 0) {
        hit(Point::named);
        return true;
      }
      if (errno == EEXIST) throw Error(ErrorKind::input, exists);
    }
    fd_.reset();  // the unnamed file goes with its descriptor
#else
    (void)start;
    (void)exists;
#endif
    return false;
  }

  // a resumed run: read the journal, check it belongs to this matrix, finish the
  // interrupted batch.
  void resume(InplaceMatrix& m) {
    int fd = ::open(path_.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT)
      throw Error(ErrorKind::usage, "nothing to resume: " + matrix_ + " has no journal (" + path_ +
                                        "); run without {resume}");
    if (fd < 0) throw_errno(ErrorKind::input, "cannot open the journal " + path_);
    fd_ = fmt::Fd(fd);

    std::optional<Header> best;
    for (std::uint64_t slot = 0; slot < 2; ++slot) {
      Header h{};
      if (pread_exact(fd_.get(), &h, sizeof h, slot * kSlotBytes, path_) && valid(h) && (h.seq & 1) == slot &&
          (!best || h.seq > best->seq))
        best = h;
    }
    if (!best) {
      struct stat st {};
      if (::fstat(fd_.get(), &st) == 0 && std::uint64_t(st.st_size) <= kDataOffset)
        throw Error(ErrorKind::input, path_ + " holds no complete header: the run that made it stopped before it wrote to " +
                                          matrix_ + ", which is unchanged; remove " + path_ + " and run again without {resume}");
      throw Error(ErrorKind::input, path_ + " is damaged (neither copy of its header is valid), so " + matrix_ +
                                        " cannot be finished from it: restore the matrix from a copy");
    }
    const Header& h = *best;
    const std::string why = mismatch(h, id_);
    if (!why.empty())
      throw Error(ErrorKind::input, path_ + " was written for " + why + ": it cannot finish " + matrix_ +
                                        " (left untouched); put back the file it belongs to and rerun with {resume}");
    const Phase phase = Phase(h.phase);
    const bool consistent =
        h.block >= 1 && h.block <= h.n && h.pairs == PairGrid::with_block(h.n, h.block).count() &&
        h.done <= h.pairs && (phase == Phase::idle || phase == Phase::saved || phase == Phase::a_written) &&
        (phase == Phase::idle || (h.batch_count >= 1 && h.batch_first == h.done && h.batch_count <= h.pairs - h.done));
    if (!consistent)
      throw Error(ErrorKind::input, path_ + " is damaged (its header does not describe a plan for " + matrix_ +
                                        "): restore the matrix from a copy");
    h_ = h;
    resumed_ = true;
    plan_.emplace(PairGrid::with_block(h.n, h.block));
    recover(m);
    plan_.reset();  // begin() installs the engine's plan
  }

  void recover(InplaceMatrix& m) {
    const Phase phase = Phase(h_.phase);
    std::uint64_t next = h_.done;
    if (phase != Phase::idle) {
      const std::uint64_t end = h_.batch_first + h_.batch_count;
      const bool data_ok = data_valid();
      if (!data_ok) {
        next = phase == Phase::saved ? h_.batch_first : end;
      } else {
        if (phase == Phase::saved) {
          redo_tiles_a(m);
          m.flush();
          hit(Point::a_flushed);
          Header h = h_;
          h.phase = std::uint32_t(Phase::a_written);
          put_header(h);
          hit(Point::a_marked);
          sync_journal();
          hit(Point::a_marked_synced);
        }
        rewrite_tiles_b(m);
        m.flush();
        hit(Point::recovered);
        next = end;
      }
      Header h = h_;
      h.phase = std::uint32_t(Phase::idle);
      h.done = next;
      h.batch_first = h.batch_count = h.batch_bytes = h.data_sum = 0;
      put_header(h);
      sync_journal();
      hit(Point::idle_synced);
    }
    next_ = start_ = next;
  }

  // Bytes one recovery buffer may hold (two are used at once).
  std::uint64_t buffer_bytes() const {
    const std::uint64_t total = host_mem_ ? std::max<std::uint64_t>(host_mem_ / 4, 1u << 16) : kDefaultRecoveryBytes;
    return total / 2;
  }
  // Rows of a tile `w` elements wide per strip of a recovery buffer.
  std::uint64_t strip_rows(std::uint64_t w) const {
    return std::max<std::uint64_t>(1, buffer_bytes() / (w * id_.elem_size));
  }

  // True when the journal holds the whole batch the header describes.
  bool data_valid() {
    std::uint64_t expect = 0;
    for (std::uint64_t k = h_.batch_first; k < h_.batch_first + h_.batch_count; ++k)
      expect += plan_->pair(k).b.elems() * id_.elem_size;
    if (expect != h_.batch_bytes)
      throw Error(ErrorKind::input, path_ + " is damaged (its batch size does not match its plan): restore " + matrix_ +
                                        " from a copy");
    std::vector<unsigned char> buf(std::size_t(std::min(expect, buffer_bytes())));
    StreamHash sum;
    for (std::uint64_t off = 0; off < expect; off += buf.size()) {
      const std::uint64_t n = std::min<std::uint64_t>(buf.size(), expect - off);
      if (!pread_exact(fd_.get(), buf.data(), n, kDataOffset + off, path_)) return false;
      sum.update(buf.data(), std::size_t(n));
    }
    return sum.digest() == h_.data_sum;
  }

  // Step 2 again, from the matrix: every tile b of the batch is still
  // original, and the new tile a is its transpose. Strips of tile b's rows
  // become strips of tile a's columns.
  void redo_tiles_a(InplaceMatrix& m) {
    const std::size_t es = id_.elem_size;
    std::vector<unsigned char> in, out;
    for (std::uint64_t k = h_.batch_first; k < h_.batch_first + h_.batch_count; ++k) {
      const TilePair p = plan_->pair(k);
      if (p.diagonal()) continue;
      const Tile& a = p.a;
      const Tile& b = p.b;
      const std::uint64_t rows = std::min(b.h, strip_rows(b.w));
      in.resize(std::size_t(rows * b.w * es));
      out.resize(in.size());
      for (std::uint64_t r = 0; r < b.h; r += rows) {
        const std::uint64_t h = std::min(rows, b.h - r);
        m.read(b.r0 + r, b.c0, h, b.w, in.data(), b.w);
        // One thread: recovery moves one batch, and a pool is not worth starting for it.
        cpu_transpose(in.data(), h, b.w, b.w, out.data(), h, es, 1);
        m.write(a.r0, a.c0 + r, b.w, h, out.data(), h);
      }
      hit(Point::a_tile);
    }
  }

  // Step 4 again, from the journal's copy of the new tiles b.
  void rewrite_tiles_b(InplaceMatrix& m) {
    const std::size_t es = id_.elem_size;
    std::vector<unsigned char> buf;
    std::uint64_t off = kDataOffset;
    for (std::uint64_t k = h_.batch_first; k < h_.batch_first + h_.batch_count; ++k) {
      const Tile b = plan_->pair(k).b;
      const std::uint64_t rows = std::min(b.h, strip_rows(b.w));
      buf.resize(std::size_t(rows * b.w * es));
      for (std::uint64_t r = 0; r < b.h; r += rows) {
        const std::uint64_t h = std::min(rows, b.h - r);
        fmt::pread_full(fd_.get(), buf.data(), h * b.w * es, off, path_);
        m.write(b.r0 + r, b.c0, h, b.w, buf.data(), b.w);
        off += h * b.w * es;
      }
      hit(Point::b_tile);
    }
  }

  std::string matrix_, path_;
  std::uint64_t host_mem_ = 0;
  Header id_{};   // the matrix as it is now
  Header h_{};    // the last header read or written
  fmt::Fd fd_;
  std::optional<PairGrid> plan_;
  bool resumed_ = false, begun_ = false, finished_ = false, matrix_dirty_ = false;
  std::uint64_t start_ = 0;  // where a resumed run goes on
  std::uint64_t next_ = 0;   // the next pair to write
  std::uint64_t bytes_ = 0;
  double secs_ = 0;
};

}  // namespace

std::string journal_path(const std::string& matrix_path) { return matrix_path + ".gtjournal"; }

std::unique_ptr<InplaceWriter> open_inplace_journal(InplaceMatrix& m, const std::string& matrix_path, ResumeMode mode,
                                                    std::uint64_t host_mem) {
  return std::make_unique<Journal>(m, matrix_path, mode, host_mem);
}

}  // namespace gt
