// The journal's internals (inplace/journal*.cpp): the on-disk header, a
// pair's parts, and the journaled InplaceWriter. The protocol is in
// gtranspose/journal.hpp, the file layout at the top of journal.cpp.
#pragma once
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "core/paths.hpp"
#include "engine/cpu/host_buffer.hpp"
#include "formats/plain_io.hpp"
#include "gtranspose/error.hpp"
#include "gtranspose/journal.hpp"
#include "gtranspose/plan.hpp"
#include "inplace/journal_detail.hpp"

namespace gt::journal_impl {

using journal_detail::Barrier;
using journal_detail::Point;
using journal_detail::StreamHash;
using Clock = std::chrono::steady_clock;

// Calls the test hook (journal_detail::set_hook) at point p.
void hit(Point p);
// Runs fn unless the test switch skips barrier b.
bool barrier_skipped(Barrier b);
template <class F>
void barrier(Barrier b, F&& fn) {
  if (!barrier_skipped(b)) fn();
}
bool xattrs_disabled();

// --- the on-disk header -------------------------------------------------------

constexpr char kMagic[8] = {'G', 'T', 'J', 'O', 'U', 'R', 'N', 'L'};
// 1: one data area, four syncs a batch, whole diagonal tiles journaled.
// 2: data regions in turn, two syncs a batch, verified recovery.
// 3: the same header; general shapes' band stages (kBand), the only
//    journals written as version 3 (the others are still written as 2).
// 4: the same header; a square in bands of whole rows (journal_square.cpp),
//    the only journals written as version 4.
constexpr std::uint32_t kVersion = 4;
constexpr std::uint32_t kGeneralVersion = 3;
constexpr std::uint32_t kSquareVersion = 4;
constexpr std::uint32_t kOldestVersion = 2;
constexpr std::uint64_t kSlotBytes = 4096;
constexpr std::uint64_t kDataOffset = 2 * kSlotBytes;
static_assert(kDataOffset == kJournalHeaderBytes, "plan.hpp's kJournalHeaderBytes: what a summary says the journal holds");
constexpr std::size_t kNameBytes = 512;
constexpr std::uint64_t kDefaultRecoveryBytes = std::uint64_t(64) << 20;
// The extended attribute that names a matrix's pending journal.
constexpr const char* kMarkName = "user.gtranspose.journal";

// What every version's header starts with: enough to tell whose journal it is.
struct HeaderPrefix {
  char magic[8];
  std::uint32_t version;
  std::uint32_t size;        // sizeof(Header) of that version; the header's checksum is its last 8 bytes
  std::uint64_t seq;         // increases with every write; slot = seq & 1
  std::uint32_t phase;       // kHasPrev | kHasCur, or kPermute, or kBand (version 3)
  std::uint32_t format;      // gt::Format of the matrix
  std::uint64_t n, elem_size, block, pairs;
  std::uint64_t file_size;   // not compared for HDF5, whose file may grow as chunks are rewritten
  std::uint64_t dev, ino;    // of the matrix file
  std::uint64_t folder_dev;  // of the journal's folder: tells a renumbered device from another file
};

// A batch the header describes, and its journal data.
struct BatchRecord {
  std::uint64_t first, count;    // pairs [first, first + count)
  std::uint64_t offset, bytes;   // its journal data in the journal file
  std::uint64_t data_sum;        // StreamHash of those bytes
  std::uint64_t a_sum;           // its tiles a as they were before it (sum_of_sums over its pairs)
  std::uint64_t end() const { return first + count; }
};

constexpr std::uint32_t kHasPrev = 1;  // prev: its tiles a durable, its tiles b written from the journal
constexpr std::uint32_t kHasCur = 2;   // cur: its journal data durable, its tiles b still original
constexpr std::uint32_t kPermute = 4;  // a permutation group in flight: its saved segments durable
constexpr std::uint32_t kBand = 8;     // a band in flight (cur: its new content durable, the matrix maybe partly written)

struct Header {
  HeaderPrefix p;
  std::uint64_t dataset_hash, dataset_len;
  char dataset[kNameBytes];  // the HDF5 dataset (its start, for messages), "" otherwise
  std::uint64_t done;        // pairs below this are complete and durable (of the stage's block); a band stage's rows or columns
  BatchRecord prev, cur;     // a band stage: cur is the band (first, count: its rows or columns)
  // A rectangle's stages (journal.hpp, InplaceStage); a square has one.
  std::uint64_t cols;        // the matrix's columns (p.n its rows); block and pairs are the blocks'
  std::uint64_t stage;       // the inplace_stages() index this header is about
  std::uint64_t group, step; // permutation: the group in flight, and its next step (those below are durable)
  std::uint64_t chains, chain_length;  // permutation: the plan its groups were cut with
  BatchRecord saved;         // permutation: the group's saved segments (count: its chains)
  std::uint64_t header_sum;  // over every byte above
};
static_assert(std::is_trivially_copyable<Header>::value && std::is_standard_layout<Header>::value,
              "the header is written as bytes");
static_assert(sizeof(Header) <= kSlotBytes, "a header fits its slot");
static_assert(sizeof(Header) == offsetof(Header, header_sum) + 8, "no padding after the checksum");

std::uint64_t header_sum(const Header& h);
bool valid(const Header& h);
// The prefix of a header slot of any version whose checksum holds; nullopt otherwise.
std::optional<HeaderPrefix> valid_prefix(const unsigned char* slot, std::size_t n);
std::string shape_text(std::uint64_t n);
std::string dataset_text(const Header& h);
// What differs between the matrix a journal was written for and this one
// ("" when they are the same).
std::string mismatch(const Header& j, const Header& now);
// Reads header slot `slot` (0 or 1) into buf (kSlotBytes, zero past the end
// of the file); returns the bytes the file held there.
std::size_t read_slot(int fd, std::uint64_t slot, unsigned char* buf, const std::string& name);
// Reads up to n bytes at off; false at the end of the file.
bool pread_exact(int fd, void* buf, std::uint64_t n, std::uint64_t off, const std::string& name);
// Makes the folder of `path` durable (its new or removed names).
void sync_folder(const std::string& path);
// The sum of a batch's per-pair sums, or of a stream's chunk sums.
std::uint64_t sum_of_sums(const std::vector<std::uint64_t>& sums);

// Journal data is checksummed in chunks of this many bytes of its stream,
// so several threads can checksum one batch: its sum is sum_of_sums() of
// the chunks' StreamHash digests. ChunkedHash gives the same from a stream
// fed in pieces of any size (recovery reads it from the journal or the matrix).
constexpr std::uint64_t kHashChunk = std::uint64_t(1) << 20;
class ChunkedHash {
 public:
  void update(const void* data, std::size_t n) {
    auto p = static_cast<const unsigned char*>(data);
    while (n) {
      const std::size_t take = std::size_t(std::min<std::uint64_t>(n, kHashChunk - fill_));
      cur_.update(p, take);
      p += take, n -= take, fill_ += take;
      if (fill_ == kHashChunk) {
        sums_.push_back(cur_.digest());
        cur_ = StreamHash();
        fill_ = 0;
      }
    }
  }
  std::uint64_t digest() const {
    std::vector<std::uint64_t> all = sums_;
    if (fill_) all.push_back(cur_.digest());
    return sum_of_sums(all);
  }

 private:
  StreamHash cur_;
  std::uint64_t fill_ = 0;
  std::vector<std::uint64_t> sums_;
};
// ChunkedHash's digest of n contiguous bytes, its chunks hashed on up to
// `threads` threads.
std::uint64_t chunked_digest(const unsigned char* p, std::uint64_t n, int threads);

// --- identity (identity.cpp) ----------------------------------------------------

std::string canonical_path(const std::string& path);
// The journal the file's mark names ("" without one).
std::string read_mark(const std::string& matrix);
// Sets the mark; false where the file system keeps no user extended attributes.
bool set_mark(const std::string& matrix, const std::string& journal);
void clear_mark(const std::string& matrix, const std::string& journal);
bool marks_supported(const std::string& matrix);

// --- a pair's parts (journal_parts.cpp) ----------------------------------------
//
// Of pair p: the journal part J (tile b's new content; on the diagonal its
// new strictly lower triangle, row by row), the A part (tile a's new content;
// on the diagonal the new strictly upper triangle) and the B part (J, put
// where it goes in the matrix). A 1x1 diagonal tile has none.

std::uint64_t journal_bytes_of(const TilePair& p, std::size_t es);

// Buffers recovery and the writer's fallback use, bounded by `bytes` each.
struct Scratch {
  std::uint64_t bytes = 0;
  std::vector<unsigned char> a, b;
};

// The A and B parts, from the engine's buffers.
void write_a_part(InplaceMatrix& m, const PairWrite& w, std::size_t es);
void write_b_part(InplaceMatrix& m, const PairWrite& w, std::size_t es);
// Tile a's checksum as source_sum() gives it, from new_b (the writer's fallback).
std::uint64_t a_sum_from_new_b(const PairWrite& w, std::size_t es, Scratch& s);
// Recovery: the A part again from tile b (still original) in the matrix.
void redo_a_part(InplaceMatrix& m, const TilePair& p, std::size_t es, Scratch& s);
// Recovery: the B part from J at off in the journal; returns J's bytes.
std::uint64_t rewrite_b_part(InplaceMatrix& m, const TilePair& p, std::size_t es, int fd, const std::string& name,
                             std::uint64_t off, Scratch& s);
// Recovery: what the matrix holds where the B part goes, fed to `sum` in J's order.
void hash_b_part(InplaceMatrix& m, const TilePair& p, std::size_t es, ChunkedHash& sum, Scratch& s);
// Recovery: tile a as the matrix holds it, summed as source_sum() does.
std::uint64_t hash_tile_a(InplaceMatrix& m, const TilePair& p, std::size_t es, Scratch& s);

// --- the journaled writer -----------------------------------------------------

class Journal final : public InplaceStages {
 public:
  Journal(InplaceMatrix& m, const std::string& matrix_path, ResumeMode mode, std::uint64_t host_mem);
  // Never removes the journal: only finish() does, once the matrix is complete.
  ~Journal() override = default;

  std::uint64_t required_block() const override { return resuming() ? h_.p.block : 0; }
  std::uint64_t first_pair() const override { return resuming() ? start_ : 0; }
  std::uint64_t journal_bytes() const override { return bytes_; }
  std::vector<StageStat> stage_stats() const override {
    std::vector<StageStat> s{{"journal", secs_, bytes_}, {"journal sync", sync_secs_, 0},
                             {"matrix writes", matrix_secs_, 0}, {"matrix flush", flush_secs_, 0},
                             {"overlap wait", wait_secs_, 0}};
    if (shape_.kind == InplaceShape::general || square_banded_)
      s.insert(s.begin(), {{"band reads", band_read_secs_, moved_ / 2}, {"band permute", band_permute_secs_, 0}});
    return s;
  }
  std::uint64_t journal_syncs() const override { return syncs_; }
  std::uint64_t matrix_flushes() const override { return flushes_; }
  int batches_kept() const override { return journal_batches_kept(kJournalGroup); }
  bool wants_source_sums() const override { return true; }
  std::uint64_t source_sum(const void* tile, std::uint64_t bytes) const override {
    return journal_detail::hash_bytes(tile, std::size_t(bytes));
  }

  void begin(const PairGrid& plan) override;
  // Gathers the engine's batches (kJournalGroup of them, within one row of
  // tile pairs) into one batch of the protocol, which step() writes.
  void write_batch(InplaceMatrix& m, const std::vector<PairWrite>& batch) override;
  void finish(InplaceMatrix& m) override;

  // A rectangle's stages (journal_permute.cpp).
  Shape shape() const override { return {id_.p.n, id_.cols}; }
  std::uint64_t next_stage() const override { return next_stage_; }
  void start_stage(std::uint64_t stage) override;
  void permute(InplaceMatrix& whole, const PermutePlan& plan) override;
  void end(InplaceMatrix& whole) override;
  // A general shape's band stages (journal_bands.cpp).
  void band_step(InplaceMatrix& whole, const BandPlan& plan) override;
  std::uint64_t stage_bytes() const override { return moved_; }
  // A square in bands of whole rows (journal_square.cpp).
  SquareRoute square_route() const override;
  bool finishable() const override { return !damaged_; }
  void square_bands(InplaceMatrix& whole, const SquareBandPlan& plan) override;

 private:
  template <class F>
  static void timed(double& into, F&& fn) {
    const auto t0 = Clock::now();
    fn();
    into += std::chrono::duration<double>(Clock::now() - t0).count();
  }
  template <class F>
  void timed(F&& fn) {
    timed(secs_, fn);
  }

  // One batch of the protocol (journal.hpp): its journal data and header,
  // overlapped with the matrix writes the durable header allows.
  void step(InplaceMatrix& m, const std::vector<PairWrite>& batch);
  // The gathered pairs as one step (none: nothing).
  void step_gathered(InplaceMatrix& m);

  // The identity and shape of the matrix, as a header without a plan.
  Header identity(const InplaceMatrix& m) const;
  // Refuses a fresh run where a journal exists, or could not be found from every name of the file.
  void check_fresh();
  // Checks that `w` is pair `index` of the plan.
  void check_pair(const PairWrite& w, std::uint64_t index) const;
  // Where the next batch's journal data goes: clear of the data of the two
  // batches the durable header may still need.
  std::uint64_t place(std::uint64_t bytes) const;
  // Writes header h as the next one (its sequence number follows the last).
  void put_header(Header& h);
  void sync_journal(Barrier b);
  void flush_now(InplaceMatrix& m, Barrier b);
  // Allocates the journal's blocks up to `end` (where the file system can).
  void reserve(std::uint64_t end);
  // Runs journal_side on this thread while another writes what the durable
  // header allows to the matrix (prev_'s tiles b, cur_'s tiles a) and
  // flushes it; one after the other for small batches.
  void overlap(InplaceMatrix& m, std::uint64_t bytes, const std::function<void()>& journal_side);
  // journal_batch.cpp: a batch's journal data written at offset, returning
  // its checksum; tiles b of one batch and tiles a of another written to the matrix.
  std::uint64_t put_batch_data(const std::vector<PairWrite>& batch, std::uint64_t offset);
  void write_parts(InplaceMatrix& m, const std::vector<PairWrite>& b_of, const std::vector<PairWrite>& a_of);

  // The resumed stage is the one running (a resumed run's block keeps its tiles).
  bool resuming() const { return resumed_ && stage_ == resumed_stage_; }
  // The journal removed, its folder synced, the matrix's mark cleared.
  void remove();

  // A fresh run: the journal's first header is written and made durable
  // before the journal gets its name, so a journal under its name always has
  // a valid header; the naming fails if one exists already. The file is made
  // unnamed (O_TMPFILE) in the journal's folder and linked to its name, so a
  // kill before that leaves nothing behind; where the file system cannot, it
  // is made under a temporary name. The matrix is marked (xattr) before.
  void create(std::uint64_t block, std::uint64_t pairs);
  void make_file();
  bool create_unnamed(const std::string& exists);
  void start_file(int fd);

  // A resumed run: read the journal, check it belongs to this matrix, finish
  // the interrupted batches (journal_recover.cpp).
  void resume(InplaceMatrix& m);
  void recover(InplaceMatrix& m);
  // A permutation group in flight: its saved segments verified (journal_permute.cpp).
  void recover_permute(InplaceMatrix& whole);
  // A band in flight: rewritten from the journal, or proven untouched or
  // complete by the matrix (journal_bands.cpp); sets start_.
  void recover_band(InplaceMatrix& whole);
  // A square's band in flight (journal_square.cpp): complete, untouched or
  // rebuilt from the journal; returns the band the run goes on with.
  std::uint64_t recover_square(InplaceMatrix& whole, const SquareBandPlan& plan);
  // Checks a resumed square's header (check_consistent's part for version 4).
  bool square_consistent(const Header& h) const;
  [[noreturn]] void no_valid_header(std::uint64_t size) const;
  void check_consistent(const Header& h) const;
  bool data_valid(const BatchRecord& b);
  std::uint64_t buffer_bytes() const;
  std::string pairs_text(const BatchRecord& b) const;

  std::string matrix_, path_;
  std::uint64_t host_mem_ = 0;
  InplaceShape shape_;
  std::vector<InplaceStage> stages_;
  std::uint64_t stage_ = 0, next_stage_ = 0, resumed_stage_ = 0;
  bool created_ = false, resave_ = false;  // resave_: a group's saved segments are taken again (step 0, damaged)
  std::uint64_t moved_ = 0;
  Header id_{};   // the matrix as it is now
  Header h_{};    // the last header read or written
  fmt::Fd fd_;
  std::optional<PairGrid> plan_;
  bool resumed_ = false, begun_ = false, finished_ = false, marked_ = false;
  std::uint64_t start_ = 0;  // where a resumed run goes on
  std::uint64_t next_ = 0;   // the next pair to write
  // The batches the durable header describes, as the engine handed them
  // over (it keeps their buffers: batches_kept()): cur_ (saved: its tiles a
  // go to the matrix next) and prev_ (its tiles a durable: its tiles b next).
  std::vector<PairWrite> cur_, prev_;
  // Pairs handed over but not yet a step: nothing of them is written
  // anywhere, so a crash finds their tiles as they were. gathered_ counts
  // the engine's batches among them (the engine keeps their buffers).
  std::vector<PairWrite> gathered_;
  int gathered_batches_ = 0;
  Scratch scratch_;
  std::uint64_t bytes_ = 0, syncs_ = 0, flushes_ = 0;
  std::uint64_t reserved_ = kDataOffset;  // blocks allocated below this
  double secs_ = 0, sync_secs_ = 0, matrix_secs_ = 0, flush_secs_ = 0, wait_secs_ = 0;
  double band_read_secs_ = 0, band_permute_secs_ = 0;  // general shapes' bands: reads, permutation and checksums
  // A band as read and as it becomes, kept from stage to stage: a new
  // buffer of hundreds of MiB costs its page faults again (1.7 s a pass on
  // the 2-core VM for two 206 MiB buffers, zeroed).
  cpu::HostBuffer band_was_, band_now_;
  bool square_banded_ = false;  // a square ran (or resumes) in bands
  bool damaged_ = false;        // square_bands() found the journal damaged (it threw, saying so)
};

}  // namespace gt::journal_impl
