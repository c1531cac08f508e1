// The journal's internals (inplace/journal*.cpp): the on-disk header, and
// the journaled InplaceWriter. The protocol is in gtranspose/journal.hpp, the
// file layout and recovery's case analysis at the top of journal.cpp.
#pragma once
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "core/paths.hpp"
#include "formats/plain_io.hpp"
#include "gtranspose/error.hpp"
#include "gtranspose/journal.hpp"
#include "inplace/journal_detail.hpp"

namespace gt::journal_impl {

using journal_detail::Point;
using journal_detail::StreamHash;
using Clock = std::chrono::steady_clock;

// Calls the test hook (journal_detail::set_hook) at point p.
void hit(Point p);

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

std::uint64_t header_sum(const Header& h);
bool valid(const Header& h);
std::string shape_text(std::uint64_t n);
std::string dataset_text(const Header& h);
// What differs between the matrix a journal was written for and this one
// ("" when they are the same).
std::string mismatch(const Header& j, const Header& now);
// Reads up to n bytes at off; false at the end of the file.
bool pread_exact(int fd, void* buf, std::uint64_t n, std::uint64_t off, const std::string& name);
// Makes the folder of `path` durable (its new or removed names).
void sync_folder(const std::string& path);

// --- the journaled writer -----------------------------------------------------

class Journal final : public InplaceWriter {
 public:
  Journal(InplaceMatrix& m, const std::string& matrix_path, ResumeMode mode, std::uint64_t host_mem);
  // Never removes the journal: only finish() does, once the matrix is complete.
  ~Journal() override = default;

  std::uint64_t required_block() const override { return resumed_ ? h_.block : 0; }
  std::uint64_t first_pair() const override { return start_; }
  std::uint64_t journal_bytes() const override { return bytes_; }
  double journal_seconds() const override { return secs_; }

  void begin(const PairGrid& plan) override;

  void write_batch(InplaceMatrix& m, const std::vector<PairWrite>& batch) override;

  void finish(InplaceMatrix& m) override;

 private:
  template <class F>
  void timed(F&& fn) {
    const auto t0 = Clock::now();
    fn();
    secs_ += std::chrono::duration<double>(Clock::now() - t0).count();
  }

  // The identity and shape of the matrix, as a header without a plan.
  Header identity(const InplaceMatrix& m) const;

  // Checks that `w` is pair `index` of the plan; adds its tile b's bytes.
  void check_pair(const PairWrite& w, std::uint64_t index, std::uint64_t& bytes, bool& any_a) const;

  // Writes header h as the next one (its sequence number follows the last).
  void put_header(Header& h);

  void sync_journal();

  // A fresh run: the journal's first header is written and made durable
  // before the journal gets its name, so a journal under its name always has
  // a valid header; the naming fails if one exists already. The file is made
  // unnamed (O_TMPFILE) in the journal's folder and linked to its name, so a
  // kill before that leaves nothing behind. Where the file system cannot make
  // or link unnamed files, it is made under a temporary name (which a kill -9
  // in those few milliseconds leaves in the folder: no signal handler runs).
  void create(const PairGrid& plan);

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
  void resume(InplaceMatrix& m);

  void recover(InplaceMatrix& m);

  // Bytes one recovery buffer may hold (two are used at once).
  std::uint64_t buffer_bytes() const;
  // Rows of a tile `w` elements wide per strip of a recovery buffer.
  std::uint64_t strip_rows(std::uint64_t w) const;

  // True when the journal holds the whole batch the header describes.
  bool data_valid();

  // Step 2 again, from the matrix: every tile b of the batch is still
  // original, and the new tile a is its transpose. Strips of tile b's rows
  // become strips of tile a's columns.
  void redo_tiles_a(InplaceMatrix& m);

  // Step 4 again, from the journal's copy of the new tiles b.
  void rewrite_tiles_b(InplaceMatrix& m);

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

}  // namespace gt::journal_impl
