// Crash safety for in-place runs: a small journal beside the matrix file so
// that a run killed at any moment (kill -9, power loss) loses no element, and
// the next run with --resume finishes the job bit-exact.
//
// An in-place run follows an PairGrid: pairs of tiles (a, b) in index
// order, a = b on the diagonal. Engines read a pair, transpose both tiles and
// hand the results to InplaceWriter::write_batch(), which owns the order of
// the writes:
//   1. the new content of every tile b of the batch (the transpose of the
//      original tile a) goes to the journal with a checksum, and the journal
//      is made durable;
//   2. the new content of every tile a (the transpose of tile b) is written
//      to the matrix, and the matrix is made durable;
//   3. the journal records that step 2 is complete (durable);
//   4. the new content of every tile b is written to the matrix; the matrix
//      is made durable before the journal's space is reused.
// At any crash one of these holds for the interrupted batch, and recovery
// redoes it from the file and the journal alone: before 1 is durable the
// matrix is untouched; within 2 every tile b is still original in the file
// (so tile a's new content is its transpose) and tile b's new content is in
// the journal; after 3 only tile b's writes remain, from the journal.
// The journal therefore holds one tile of each pair in flight, never the
// whole matrix.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gtranspose/inplace_writer.hpp"
#include "gtranspose/matrix.hpp"

namespace gt {

// The journal's path for a matrix file: "<file>.gtjournal" beside it.
std::string journal_path(const std::string& matrix_path);

enum class ResumeMode {
  fresh,   // no journal may exist (gt::Error(input) naming it and --resume if one does)
  resume,  // a journal must exist (gt::Error(usage) if none); recover, then go on
};

// Opens the journal of matrix `m`, whose file is `matrix_path` (for HDF5 the
// .h5 file; the dataset comes from m.location()). fresh: creates the journal
// when the engine calls begin() (header durable before the engine's first
// write) and removes it in finish(). resume: checks that the journal belongs
// to this matrix (shape, element size, file identity, dataset), finishes the
// interrupted batch on the CPU, and reports through required_block() and
// first_pair() where the engine goes on. `host_mem` bounds the buffers
// recovery uses (0: 64 MiB); they are freed before this returns.
// Throws gt::Error(input) for a journal that does not match the matrix or is
// damaged beyond the last complete batch; the matrix is then untouched.
[[nodiscard]] std::unique_ptr<InplaceWriter> open_inplace_journal(InplaceMatrix& m, const std::string& matrix_path, ResumeMode mode,
                                                    std::uint64_t host_mem = 0);

}  // namespace gt
