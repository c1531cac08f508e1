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

#include <sys/stat.h>

#include <algorithm>
#include <cstring>

#include "gtranspose/tempfile.hpp"
#include "inplace/journal_internal.hpp"

namespace gt {
namespace journal_impl {

Journal::Journal(InplaceMatrix& m, const std::string& matrix_path, ResumeMode mode, std::uint64_t host_mem)
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

void Journal::begin(const PairGrid& plan) {
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

void Journal::write_batch(InplaceMatrix& m, const std::vector<PairWrite>& batch) {
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

void Journal::finish(InplaceMatrix& m) {
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

Header Journal::identity(const InplaceMatrix& m) const {
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

void Journal::check_pair(const PairWrite& w, std::uint64_t index, std::uint64_t& bytes, bool& any_a) const {
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

void Journal::put_header(Header& h) {
  h.seq = h_.seq + 1;
  h.header_sum = header_sum(h);
  timed([&] { fmt::pwrite_full(fd_.get(), &h, sizeof h, (h.seq & 1) * kSlotBytes, path_); });
  bytes_ += sizeof h;
  h_ = h;
}

void Journal::sync_journal() {
  timed([&] { fmt::sync_file(fd_.get(), path_, true); });
}

void Journal::create(const PairGrid& plan) {
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

}  // namespace journal_impl

std::string journal_path(const std::string& matrix_path) { return matrix_path + ".gtjournal"; }

std::unique_ptr<InplaceWriter> open_inplace_journal(InplaceMatrix& m, const std::string& matrix_path, ResumeMode mode,
                                                    std::uint64_t host_mem) {
  return std::make_unique<journal_impl::Journal>(m, matrix_path, mode, host_mem);
}

}  // namespace gt
