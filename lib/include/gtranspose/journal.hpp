// Crash safety for in-place runs: a small journal beside the matrix file so
// that a run stopped at any moment (kill -9, power loss, a full disk) loses
// no element, and the next run with {resume} finishes the job bit-exact.
//
// An in-place run follows a PairGrid: pairs of tiles (a, b) in index order,
// a = b on the diagonal. Engines read a pair, transpose both tiles and hand
// the results to InplaceWriter::write_batch(), which owns the order of the
// writes. Of each pair, the journal holds only what a crash could lose: the
// new content of tile b (the transpose of tile a, which step 2 overwrites);
// of a diagonal tile, only its new lower triangle (a sub-pair of its upper
// and lower triangles; the diagonal itself never moves). A batch is up to
// kJournalGroup of the engine's batches within one row of tile pairs
// (plan.hpp), gathered before anything of them is written, so that its
// tiles a lie side by side in one band of rows. Per batch N:
//   1. its journal data goes to a region of the journal that neither batch
//      N-1 nor N-2 uses, then a header that describes batch N ("saved", with
//      the data's checksum and a checksum of tiles a as they were) and batch
//      N-1 ("tiles a written"); one sync of the journal;
//   2. the new tiles b of batch N-1 and the new tiles a of batch N go to the
//      matrix, in file order (they are disjoint, so their order is free; a
//      band's write-back starts once all its parts are written, so the disk
//      sees long runs); one flush of the matrix, which runs while the next batch's
//      journal data is written (its region is the one batch N-2 used, whose
//      tiles b the flush before this one made durable).
// finish() writes the last tiles b the same way, flushes, and removes the
// journal. On the CPU engine a square on a file (and a rectangle's square
// block) goes another way, with no engine: in bands of whole rows, each
// band's blocks right of the diagonal journaled before it is rewritten
// (inplace/journal_square.cpp, plan.hpp SquareBandPlan); tile pairs remain
// for the CUDA engine, {tile}, a budget that holds no band and host memory. A general shape's bands (no pairs) have a protocol of their own,
// two syncs a band: inplace/journal_bands.cpp. Two syncs a batch, every one of them needed: the power-loss test
// removes each in turn and shows a crash that then loses data.
//
// Recovery reads the latest valid header (there are two copies, written in
// turn, each with its checksum) and redoes batch N-1's tiles b from the
// journal and batch N's tiles a from its tiles b (still original) and its
// tiles b from the journal. Journal data is verified: data that fails its
// checksum is accepted only where the matrix proves it is not needed (tiles
// a still hash to their original content: the batch starts over; tiles b
// already hash to the data: the batch is complete). Otherwise the message
// says which pairs are partly rewritten; it never calls a matrix unchanged
// unless that is proven.
//
// Identity: a journal belongs to a file by device and inode. It is named
// after the file's canonical path ("<realpath>.gtjournal", found through any
// symlink); while it exists, the file carries the extended attribute
// user.gtranspose.journal naming it (found through any hard link or after a
// rename); and a journal beside the file whose header names the file's inode
// is found too. Where none of this can find it from every name (the file has
// several hard links and its file system keeps no extended attributes), in
// place is refused. A lock (an open-file-description lock, which HDF5's own
// flock does not conflict with) keeps a second run off a file transposed in
// place, and every other command on a file with a pending journal is refused
// with the way to finish it.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gtranspose/inplace_writer.hpp"
#include "gtranspose/matrix.hpp"
#include "gtranspose/plan.hpp"

namespace gt {

// The journal's name for a matrix file: "<canonical path>.gtjournal", where
// the canonical path resolves every symlink (the given path where the file
// does not exist).
std::string journal_path(const std::string& matrix_path);

// The pending journal of the file at `matrix_path`, wherever it was found
// (by name, by the file's mark, or beside it by inode); "" if none.
[[nodiscard]] std::string find_journal(const std::string& matrix_path);

// Throws gt::Error(input) when the file at `path` has a pending journal:
// `role` says what the command wanted of it ("read", "replace"), and the
// message says how to finish the interrupted run first.
void refuse_if_pending(const std::string& path, const std::string& role);

// A lock on a matrix file for the length of a run: exclusive in place,
// shared for an input read out of place. Released when destroyed.
class FileLock {
 public:
  FileLock() = default;
  FileLock(FileLock&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  FileLock& operator=(FileLock&& o) noexcept;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  ~FileLock();
  bool held() const { return fd_ >= 0; }

 private:
  friend FileLock lock_file(const std::string&, bool);
  int fd_ = -1;
};
// Throws gt::Error(input) naming the conflict when another process holds a
// conflicting lock. Where the file system has no such locks, returns a lock
// that is not held (held() false) rather than refuse the run.
[[nodiscard]] FileLock lock_file(const std::string& path, bool exclusive);

// --- a rectangle's stages ----------------------------------------------------------
//
// An in-place run goes through stages (plan.hpp, InplaceShape): a square,
// its one block of tile pairs; a tall rectangle (R = kC), its k blocks, the
// segment permutation, the end; a wide one (C = kR), the permutation, its k
// blocks, the end; a grid, one permutation per row of blocks, its blocks,
// the permutation of the whole, the end; a general shape (c = gcd), (c > 1)
// the columns' rotation, the rows' shuffle, the columns' shuffle, the end
// (rect_maps.hpp's steps 1-3, in bands: plan.hpp BandPlan). The end rewrites
// a .npy header's shape: last, after the data, so a file interrupted at any
// moment is still its journal's matrix.
struct InplaceStage {
  enum Kind { block, permute, end, rotate, row_shuffle, col_shuffle };
  Kind kind = block;
  // block: which of the a*b; permute: its permute_region() index (a row of
  // blocks, or kPermuteWhole after the blocks).
  std::uint64_t index = 0;
};
// rotate, row_shuffle, col_shuffle: a general shape's band stages.
inline bool is_band_stage(InplaceStage::Kind k) {
  return k == InplaceStage::rotate || k == InplaceStage::row_shuffle || k == InplaceStage::col_shuffle;
}
[[nodiscard]] std::vector<InplaceStage> inplace_stages(const InplaceShape& shape);
// Block `index` of a rectangle's stages as a square matrix of its own (a
// view of `whole`'s elements: before a wide matrix's or a grid's first
// permutations they are not its rows).
[[nodiscard]] std::unique_ptr<InplaceMatrix> block_view(InplaceMatrix& whole, const InplaceShape& shape,
                                                        std::uint64_t index);

// The writer of a run's stages: the engine writes each block's tile pairs
// through it (InplaceWriter; its finish() ends the block's stage, and the
// last stage's finish() ends the run), and it runs the stages no engine
// does. The journal orders and syncs them all; the plain one (host memory)
// only moves the elements.
class InplaceStages : public InplaceWriter {
 public:
  // The matrix's shape as the run began (a resumed .npy may have its new shape already).
  virtual Shape shape() const = 0;
  // The stage the run goes on with (0 for a fresh run).
  virtual std::uint64_t next_stage() const { return 0; }
  // Before each stage, in order.
  virtual void start_stage(std::uint64_t stage) = 0;
  // A permutation stage (the current one: its region is the stage's,
  // permute_region); `plan` from plan_permute().
  virtual void permute(InplaceMatrix& whole, const PermutePlan& plan) = 0;
  // The end stage of a rectangle: a .npy header's new shape, then the journal removed.
  virtual void end(InplaceMatrix& whole) = 0;
  // A general shape's band stage (the current one), in bands of `plan`
  // (plan_bands()): the journal makes each band's new content durable
  // before it is written back.
  virtual void band_step(InplaceMatrix& whole, const BandPlan& plan) = 0;
  // A square's route (plan.hpp, SquareBandPlan): tile pairs through an
  // engine, or bands of whole rows through the journal (square_bands()).
  // either: a fresh run (bands on the CPU engine where the budget holds one
  // and no {tile} asks for tile pairs: job.cpp, band_route); bands: a resumed run of
  // bands, whose rows required_block() gives; pairs: host memory, a resumed
  // run of pairs.
  enum class SquareRoute { pairs, bands, either };
  virtual SquareRoute square_route() const { return SquareRoute::pairs; }
  // The whole square in bands of `plan` (a resumed run first finishes the
  // band in flight); ends the run.
  virtual void square_bands(InplaceMatrix& whole, const SquareBandPlan& plan) {
    (void)whole, (void)plan;
    throw Error(ErrorKind::internal, "this writer moves no bands");
  }
  // Bytes moved so far by the stages no engine ran (the permutations, the bands), for the report.
  virtual std::uint64_t stage_bytes() const { return 0; }
  // False once the run found its journal damaged beyond what the matrix can
  // prove (the error says so): {resume} cannot finish it.
  virtual bool finishable() const { return true; }
};
// No journal: host memory, or a run that asked for no crash safety.
[[nodiscard]] std::unique_ptr<InplaceStages> plain_inplace_stages(const Shape& shape);

enum class ResumeMode {
  fresh,   // no journal may exist (gt::Error(input) naming it and {resume} if one does)
  resume,  // a journal must exist (gt::Error(usage) if none); recover, then go on
};

// Opens the journal of matrix `m`, whose file is `matrix_path` (for HDF5 the
// .h5 file; the dataset comes from m.location()). fresh: creates the journal
// when the engine calls begin() (header durable before the engine's first
// write) and removes it in finish(). resume: checks that the journal belongs
// to this matrix (shape, element size, file identity, dataset), finishes the
// interrupted batches on the CPU, and reports through required_block() and
// first_pair() where the engine goes on. `host_mem` bounds the buffers
// recovery uses (0: 64 MiB); they are freed before this returns.
// Throws gt::Error(input) for a journal that does not match the matrix or is
// damaged beyond what the matrix can prove; the message says what is known.
[[nodiscard]] std::unique_ptr<InplaceStages> open_inplace_journal(InplaceMatrix& m, const std::string& matrix_path,
                                                                  ResumeMode mode, std::uint64_t host_mem = 0);

}  // namespace gt
