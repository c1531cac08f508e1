// The crash-safety journal of in-place runs: the protocol is in journal.hpp.
//
// The journal is "<canonical matrix path>.gtjournal":
//   [0, 4096)      header copy for even sequence numbers
//   [4096, 8192)   header copy for odd sequence numbers
//   [8192, ...)    journal data: each batch's parts J (journal_parts.cpp),
//                  back to back in pair order, at an offset its header
//                  records; three batches' data take turns there (a
//                  general shape's bands: two regions of a band each)
// Headers are written alternately with increasing sequence numbers, each with
// its own checksum, so a torn header write leaves the other copy (the last
// durable state) intact; opening takes the valid copy with the highest
// sequence number.
//
// A header describes up to two batches: `cur` (its data durable, nothing of
// it in the matrix that recovery cannot redo) and `prev` (its tiles a
// durable, its tiles b being written from its data). Batch N's data goes
// where neither batch N-1 nor N-2 has its data, so it can be written while
// batch N-1's matrix flush runs: the durable header then still describes
// N-1 and N-2, and their data stays intact. See journal_recover.cpp for
// what recovery makes of each case.
#include "gtranspose/journal.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "gtranspose/tempfile.hpp"
#include "inplace/journal_internal.hpp"

namespace gt {
namespace journal_impl {

namespace {

// The writer's own scratch (diagonal tiles' gathering, a tile a's checksum
// where the engine gave none).
constexpr std::uint64_t kWriterScratchBytes = std::uint64_t(4) << 20;
// Below this many bytes of journal data a batch's two sides run one after
// the other on the calling thread (a thread costs more than it saves).
constexpr std::uint64_t kOverlapBytes = std::uint64_t(4) << 20;

std::string exists_message(const std::string& matrix, const std::string& journal) {
  return matrix + " has a journal from an interrupted in-place run (" + journal +
         "): rerun with {in_place} {resume} to finish it";
}

fmt::IoEvent unlinked(const std::string& name) {
  fmt::IoEvent e;
  e.kind = fmt::IoEvent::unlink;
  e.path = name;
  return e;
}

}  // namespace

Journal::Journal(InplaceMatrix& m, const std::string& matrix_path, ResumeMode mode, std::uint64_t host_mem)
    : matrix_(matrix_path), path_(journal_path(matrix_path)), host_mem_(host_mem) {
  id_ = identity(m);
  shape_ = plan_inplace_shape({id_.p.n, id_.cols}, m.describe());
  // The oldest version that holds the shape: a binary of version 2 can
  // still resume every shape it knew.
  id_.p.version = shape_.kind == InplaceShape::general ? kGeneralVersion : kOldestVersion;
  stages_ = inplace_stages(shape_);
  if (mode == ResumeMode::fresh)
    check_fresh();
  else
    resume(m);
}

void Journal::start_stage(std::uint64_t stage) {
  if (stage >= stages_.size() || stage < next_stage_)
    throw Error(ErrorKind::internal, "journal: stage " + std::to_string(stage) + " out of order");
  stage_ = stage;
  begun_ = false;
  plan_.reset();
  next_ = resuming() ? start_ : 0;
}

void Journal::check_fresh() {
  const std::string found = find_journal(matrix_);
  if (!found.empty()) throw Error(ErrorKind::input, exists_message(matrix_, found));
  if (fmt::path_exists(path_))
    throw Error(ErrorKind::input, path_ + " is the journal of another file that was once at " + matrix_ +
                                      " (another device or inode): if that file is gone, remove " + path_ +
                                      " and run again");
  // A journal named after one path and marked nowhere could not be found
  // from the file's other names, where another run could then begin.
  struct stat st {};
  if (::stat(matrix_.c_str(), &st) == 0 && st.st_nlink > 1 && !marks_supported(matrix_))
    throw Error(ErrorKind::input, matrix_ + " has " + std::to_string(st.st_nlink) +
                                      " names (hard links) and its file system keeps no extended attributes, so the "
                                      "journal of an in-place run could not be found from every name: transpose it "
                                      "out of place, or leave it one name");
}

void Journal::begin(const PairGrid& plan) {
  if (begun_) throw Error(ErrorKind::internal, "journal: begin() called twice");
  if (stages_[stage_].kind != InplaceStage::block)
    throw Error(ErrorKind::internal, "journal: stage " + std::to_string(stage_) + " has no tile pairs");
  if (plan.n() != shape_.side)
    throw Error(ErrorKind::internal, "journal: the plan is for n = " + std::to_string(plan.n()) + ", the blocks have " +
                                         std::to_string(shape_.side));
  if (resuming()) {
    if (plan.block() != h_.p.block || plan.count() != h_.p.pairs)
      throw Error(ErrorKind::internal, "a resumed in-place run must keep its journal's " + shape_text(h_.p.block) +
                                           " tiles; the engine planned " + shape_text(plan.block()));
  } else if (!created_) {
    create(plan.block(), plan.count());
  } else {
    // A later block: its tiles, in the headers from its first batch on.
    h_.p.block = plan.block();
    h_.p.pairs = plan.count();
  }
  plan_.emplace(plan);
  scratch_.bytes = kWriterScratchBytes;
  gathered_.clear();
  gathered_batches_ = 0;
  begun_ = true;
}

void Journal::check_pair(const PairWrite& w, std::uint64_t index) const {
  if (w.index != index || index >= plan_->count())
    throw Error(ErrorKind::internal, "journal: got tile pair " + std::to_string(w.index) + ", expected " +
                                         std::to_string(index) + " (batches must continue one another)");
  const TilePair p = plan_->pair(index);
  const auto same = [](const Tile& x, const Tile& y) { return x.r0 == y.r0 && x.c0 == y.c0 && x.h == y.h && x.w == y.w; };
  if (!same(p.a, w.pair.a) || !same(p.b, w.pair.b) || !w.new_b || (w.new_a != nullptr) == p.diagonal())
    throw Error(ErrorKind::internal, "journal: tile pair " + std::to_string(index) + " does not match the plan");
}

std::uint64_t Journal::place(std::uint64_t bytes) const {
  // First fit among the start of the data and the ends of the live regions:
  // with batches of one size this settles into three regions in turn.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> live;
  if (h_.p.phase & kHasPrev) live.emplace_back(h_.prev.offset, h_.prev.offset + h_.prev.bytes);
  if (h_.p.phase & (kHasCur | kBand)) live.emplace_back(h_.cur.offset, h_.cur.offset + h_.cur.bytes);
  if (h_.p.phase & kPermute) live.emplace_back(h_.saved.offset, h_.saved.offset + h_.saved.bytes);
  std::vector<std::uint64_t> at{kDataOffset};
  for (const auto& r : live) at.push_back(r.second);
  std::sort(at.begin(), at.end());
  for (std::uint64_t o : at) {
    const bool clear = std::all_of(live.begin(), live.end(),
                                   [&](const auto& r) { return o + bytes <= r.first || o >= r.second; });
    if (clear) return o;
  }
  return at.back();  // unreachable: the last end is clear of every region
}

void Journal::write_batch(InplaceMatrix& m, const std::vector<PairWrite>& batch) {
  if (!begun_ || finished_) throw Error(ErrorKind::internal, "journal: write_batch() outside begin()/finish()");
  if (batch.empty()) return;
  // A step ends at a new row of tile pairs: its tiles a then lie side by
  // side in one band of rows (a row's last pairs with the next row's first
  // would be two bands' short pieces again).
  if (!gathered_.empty() && batch.front().pair.a.r0 != gathered_.front().pair.a.r0) step_gathered(m);
  for (std::size_t i = 0; i < batch.size(); ++i) check_pair(batch[i], next_ + gathered_.size() + i);
  gathered_.insert(gathered_.end(), batch.begin(), batch.end());
  if (++gathered_batches_ >= kJournalGroup) step_gathered(m);
}

void Journal::step_gathered(InplaceMatrix& m) {
  if (gathered_.empty()) return;
  // Moved out first: a step that throws leaves nothing gathered to write twice.
  const std::vector<PairWrite> batch = std::move(gathered_);
  gathered_.clear();
  gathered_batches_ = 0;
  step(m, batch);
}

void Journal::step(InplaceMatrix& m, const std::vector<PairWrite>& batch) {
  const std::size_t es = id_.p.elem_size;
  std::uint64_t bytes = 0;
  for (std::size_t i = 0; i < batch.size(); ++i) {
    check_pair(batch[i], next_ + i);
    bytes += journal_bytes_of(batch[i].pair, es);
  }
  BatchRecord rec{};
  rec.first = batch.front().index;
  rec.count = batch.size();
  rec.offset = place(bytes);
  rec.bytes = bytes;
  reserve(rec.offset + bytes);

  // Two files at once: this batch's journal data (clear of what the durable
  // header describes) on this thread, and on another the matrix writes that
  // header allows (the batch before last's tiles b, the last batch's tiles
  // a), flushed. The header describing this batch follows both.
  overlap(m, bytes, [&] {
    timed([&] { rec.data_sum = put_batch_data(batch, rec.offset); });
    std::vector<std::uint64_t> a_sums;
    a_sums.reserve(batch.size());
    for (const PairWrite& w : batch) a_sums.push_back(w.has_a_sum ? w.a_sum : a_sum_from_new_b(w, es, scratch_));
    rec.a_sum = sum_of_sums(a_sums);
    hit(Point::data_written);
  });
  bytes_ += bytes;

  Header h = h_;
  h.p.phase = kHasCur;
  h.stage = stage_;
  h.prev = {};
  if (!cur_.empty()) {
    h.p.phase |= kHasPrev;
    h.prev = h_.cur;
  }
  h.cur = rec;
  h.done = cur_.empty() ? rec.first : h.prev.first;
  put_header(h);
  hit(Point::saved_written);
  sync_journal(Barrier::journal_synced);
  hit(Point::saved_synced);
  prev_ = std::move(cur_);
  cur_ = batch;
  next_ += batch.size();
}

void Journal::reserve(std::uint64_t end) {
  // Blocks for a new region before its data: writes into allocated blocks
  // change no metadata, so a sync of the matrix (a file system journal
  // commit on ext4) does not wait for this file's data as well.
  if (end <= reserved_) return;
  if (::fallocate(fd_.get(), 0, off_t(reserved_), off_t(end - reserved_)) == 0 || errno == EOPNOTSUPP ||
      errno == ENOSYS || errno == EINVAL)
    reserved_ = end;
  else
    throw_errno(ErrorKind::io, "cannot reserve " + std::to_string(end - reserved_) + " bytes for the journal " + path_);
}

void Journal::overlap(InplaceMatrix& m, std::uint64_t bytes, const std::function<void()>& journal_side) {
  const auto matrix_side = [&] {
    if (prev_.empty() && cur_.empty()) return;
    timed(matrix_secs_, [&] {
      write_parts(m, prev_, cur_);
      flush_now(m, Barrier::matrix_flushed);
    });
    hit(Point::matrix_flushed);
  };
  // Small batches (the tests' tiny tiles) one after the other, so that the
  // protocol's points come in one order.
  if (bytes < kOverlapBytes || (prev_.empty() && cur_.empty())) {
    journal_side();
    matrix_side();
    return;
  }
  std::exception_ptr error;
  std::thread other([&] {
    try {
      matrix_side();
    } catch (...) {
      error = std::current_exception();
    }
  });
  try {
    journal_side();
  } catch (...) {
    other.join();
    throw;
  }
  timed(wait_secs_, [&] { other.join(); });
  if (error) std::rethrow_exception(error);
}

void Journal::finish(InplaceMatrix& m) {
  if (!begun_ || finished_) throw Error(ErrorKind::internal, "journal: finish() without begin()");
  step_gathered(m);
  if (next_ != plan_->count())
    throw Error(ErrorKind::internal, "in-place run ended after " + std::to_string(next_) + " of " +
                                         std::to_string(plan_->count()) + " tile pairs; its journal " + path_ +
                                         " is kept for {resume}");
  if (!cur_.empty()) {
    // What the last header allows, flushed; then the last batch's tiles b,
    // as every other batch's went: after a header that says its tiles a
    // are durable.
    overlap(m, 0, [] {});
    Header h = h_;
    h.p.phase = kHasPrev;
    h.prev = h_.cur;
    h.cur = {};
    h.done = h.prev.first;
    put_header(h);
    sync_journal(Barrier::final_synced);
    timed(matrix_secs_, [&] {
      write_parts(m, cur_, {});
      flush_now(m, Barrier::final_flushed);
    });
    prev_.clear();
    cur_.clear();
  }
  hit(Point::finish_flushed);
  begun_ = false;
  next_stage_ = stage_ + 1;
  // A square's one stage ends the run; a rectangle's next stage goes on
  // from the header just written (its blocks' pairs all durable).
  if (stages_.size() == 1) remove();
}

void Journal::remove() {
  fd_.reset();
  if (::unlink(path_.c_str()) != 0 && errno != ENOENT) throw_errno(ErrorKind::io, "cannot remove the journal " + path_);
  fmt::log_io(unlinked(path_));
  barrier(Barrier::removal_synced, [&] { timed([&] { sync_folder(path_); }); });
  finished_ = true;
  hit(Point::removed);
  // After the journal: a mark naming a journal that is gone means nothing.
  if (marked_) clear_mark(matrix_, path_);
}

void Journal::put_header(Header& h) {
  h.p.seq = h_.p.seq + 1;
  h.header_sum = header_sum(h);
  timed([&] { fmt::pwrite_full(fd_.get(), &h, sizeof h, (h.p.seq & 1) * kSlotBytes, path_); });
  bytes_ += sizeof h;
  h_ = h;
}

void Journal::sync_journal(Barrier b) {
  barrier(b, [&] {
    timed(sync_secs_, [&] { fmt::sync_file(fd_.get(), path_, true); });
    ++syncs_;
  });
}

void Journal::flush_now(InplaceMatrix& m, Barrier b) {
  barrier(b, [&] {
    timed(flush_secs_, [&] { m.flush(); });
    ++flushes_;
  });
}

Header Journal::identity(const InplaceMatrix& m) const {
  Header h{};
  std::memcpy(h.p.magic, kMagic, sizeof kMagic);
  h.p.version = kVersion;
  h.p.size = sizeof(Header);
  const Location& loc = m.location();
  h.p.format = std::uint32_t(loc.format);
  h.p.n = m.info().shape.rows;
  h.cols = m.info().shape.cols;
  h.p.elem_size = m.info().elem_size;
  struct stat st {};
  if (::stat(matrix_.c_str(), &st) != 0) throw_errno(ErrorKind::input, "cannot stat " + matrix_);
  h.p.file_size = std::uint64_t(st.st_size);
  h.p.dev = std::uint64_t(st.st_dev);
  h.p.ino = std::uint64_t(st.st_ino);
  const std::string dir = paths::dir_of(path_);
  if (::stat(dir.c_str(), &st) != 0) throw_errno(ErrorKind::input, "cannot stat the folder " + dir);
  h.p.folder_dev = std::uint64_t(st.st_dev);
  h.dataset_hash = journal_detail::hash_bytes(loc.dataset.data(), loc.dataset.size());
  h.dataset_len = loc.dataset.size();
  std::memcpy(h.dataset, loc.dataset.data(), std::min(loc.dataset.size(), kNameBytes - 1));
  return h;
}

void Journal::start_file(int fd) {
  fd_ = fmt::Fd(fd);
  Header h = h_;
  h_.p.seq = 0;
  put_header(h);
  barrier(Barrier::header_synced, [&] { timed(sync_secs_, [&] { fmt::sync_file(fd_.get(), path_, false); }); });
  hit(Point::created);
}

bool Journal::create_unnamed(const std::string& exists) {
#ifdef O_TMPFILE
  const int fd = ::open(paths::dir_of(path_).c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0644);
  if (fd < 0) return false;  // EOPNOTSUPP, EISDIR (older kernels), EACCES...: the named way says why
  start_file(fd);
  // Linking an unnamed file goes through /proc (AT_EMPTY_PATH would need
  // CAP_DAC_READ_SEARCH); like link(2), it fails if the name exists.
  const std::string self = "/proc/self/fd/" + std::to_string(fd_.get());
  for (bool via_proc : {true, false}) {
    if ((via_proc ? ::linkat(AT_FDCWD, self.c_str(), AT_FDCWD, path_.c_str(), AT_SYMLINK_FOLLOW)
                  : ::linkat(fd_.get(), "", AT_FDCWD, path_.c_str(), AT_EMPTY_PATH)) == 0) {
      fmt::log_io(fmt::IoEvent::linked(fd_.get(), path_));
      hit(Point::named);
      return true;
    }
    if (errno == EEXIST) throw Error(ErrorKind::input, exists);
  }
  fd_.reset();  // the unnamed file goes with its descriptor
#else
  (void)exists;
#endif
  return false;
}

void Journal::create(std::uint64_t block, std::uint64_t pairs) {
  Header h = id_;
  h.p.phase = 0;
  h.p.block = block;
  h.p.pairs = pairs;
  h.stage = stage_;
  h_ = h;
  created_ = true;
  // The mark first: a journal that exists is then found from every name of
  // the file (a hard link elsewhere, the file renamed). A mark whose journal
  // never came to be names nothing and is ignored.
  marked_ = set_mark(matrix_, path_);
  if (marked_) {
    fmt::Fd f(::open(matrix_.c_str(), O_RDONLY | O_CLOEXEC));
    if (!f) throw_errno(ErrorKind::io, "cannot open " + matrix_ + " to make its journal mark durable");
    barrier(Barrier::mark_synced, [&] { fmt::sync_file(f.get(), matrix_, false); });
  }
  hit(Point::marked);
  try {
    make_file();
  } catch (...) {
    if (marked_ && !fmt::path_exists(path_)) clear_mark(matrix_, path_);
    throw;
  }
  barrier(Barrier::folder_synced, [&] { timed([&] { sync_folder(path_); }); });
  hit(Point::begun);
}

void Journal::make_file() {
  const std::string exists = exists_message(matrix_, path_);
  std::string tmp_name;
  const auto create_file = [&](const std::string& p) {
    int fd = ::open(p.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0 && errno == EEXIST && p == path_) throw Error(ErrorKind::input, exists);
    if (fd < 0)
      throw_errno(ErrorKind::output, "cannot create the journal " + path_ +
                                         " (an in-place run keeps one beside the matrix, so its folder must be writable)");
    fmt::log_io(fmt::IoEvent::linked(fd, p));
    start_file(fd);
  };
  if (create_unnamed(exists)) return;
  {
    TempPath tmp(path_);
    create_file(tmp.path());
    tmp_name = tmp.path();
    if (::link(tmp.path().c_str(), path_.c_str()) != 0) {
      if (errno == EEXIST) throw Error(ErrorKind::input, exists);
      // A file system without hard links: the journal under its own name.
      // A crash before its header is durable leaves an empty journal, which
      // a resumed run reports as one that cannot tell how far the run got.
      fd_.reset();
      create_file(path_);
    } else {
      fmt::log_io(fmt::IoEvent::linked(fd_.get(), path_));
    }
    hit(Point::named);
  }  // the temporary name goes; the journal keeps the file
  fmt::log_io(unlinked(tmp_name));
}

}  // namespace journal_impl

std::string journal_path(const std::string& matrix_path) { return journal_impl::canonical_path(matrix_path) + ".gtjournal"; }

std::unique_ptr<InplaceStages> open_inplace_journal(InplaceMatrix& m, const std::string& matrix_path, ResumeMode mode,
                                                    std::uint64_t host_mem) {
  return std::make_unique<journal_impl::Journal>(m, matrix_path, mode, host_mem);
}

}  // namespace gt
