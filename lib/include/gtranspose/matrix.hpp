// The three interfaces every format and every engine meet at: a Source is
// read, a Sink is written, an InplaceMatrix is both (square, in place), and a
// HostView lets an engine reach a matrix that lies in host memory directly.
//
// Every rectangle is given as rows [r0, r0+h) x cols [c0, c0+w) of the
// matrix, and the memory side is row-major with a leading dimension `ld` in
// elements (ld >= w): element (i, j) of the rectangle lives at byte offset
// (i*ld + j)*elem_size of the buffer.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "gtranspose/error.hpp"
#include "gtranspose/report.hpp"
#include "gtranspose/types.hpp"

namespace gt {

enum class Format { raw, npy, hdf5 };
const char* format_name(Format f);

// A parsed location: file path, format, and HDF5 dataset path ("" = not given).
struct Location {
  std::string path;
  std::string dataset;
  Format format = Format::raw;
};
// What a format knows about a source's elements beyond MatrixInfo, for a
// sink to write the same type exactly rather than rebuild it from the DType
// (which some element types lack: NumPy bool and void, HDF5 enums, opaque
// and compound types). A source fills what it has; the rest stays empty, and
// sinks fall back to MatrixInfo. Each field names the format whose sink reads
// it, and the format's sink alone interprets it.
struct NativeType {
  // A .npy source's type as np.save would spell it (dtype.str: "<f4" for a
  // header's 'f4' or '|f4', "|V8", "|b1" for '?', "|S4", "<M8[ns]");
  // "" for every other source. The .npy sink writes it as is; the HDF5 sink
  // makes "|b1" the boolean enum h5py writes.
  std::string npy_descr;
  // An HDF5 source's open dataset (an HDF5 hid_t), valid while the source
  // lives: the HDF5 sink copies its datatype, its attributes and its chunk
  // layout and filters from it, and only reads it. -1 for every other source.
  std::int64_t hdf5_dataset = -1;
};

// A matrix that lies whole in host memory (the host-memory API's sources and
// sinks): element (i, j) at data + (i*ld + j)*elem_size. `pinned` means page-
// locked and registered with CUDA, so the CUDA engine copies it by DMA
// directly instead of staging it through its own pinned buffers.
struct HostView {
  void* data = nullptr;
  std::uint64_t ld = 0;
  bool pinned = false;
};

// Threads a format runs codecs on by itself (decoding an HDF5 source's
// compressed chunks, encoding a sink's), and the host memory each one holds:
// the run plan decides how many it may use within host_mem
// (plan/run_plan.cpp) and the job tells the format (set_codec_threads).
struct CodecDemand {
  int threads = 0;                     // wanted (0: the format runs no codecs)
  std::uint64_t bytes_per_thread = 0;  // each one's buffers
  // A source's: what each thread would hold writing the same chunks (an
  // HDF5 output's store slot more), as a dry run predicts the output.
  std::uint64_t writing_bytes_per_thread = 0;
  // The chunks pass through a compressor (deflate, zstd, ...): the codecs'
  // rate on the CPU cores bounds the run (decide_engine reads it).
  bool compressed = false;
};

// What a format did beyond moving bytes, for the run's report: stages of
// its own ("decode", "encode": busy_s is thread-time summed over its codec
// threads, bytes the decoded bytes) and notes naming the path and codec
// that ran. The job adds them to the report, whichever engine ran.
struct FormatReport {
  std::vector<StageStat> stages;
  std::vector<std::string> notes;
};

class Source {
 public:
  virtual ~Source() = default;
  virtual const MatrixInfo& info() const = 0;
  virtual const Location& location() const = 0;
  // Reads a rectangle; throws gt::Error(io) on failure. Safe to call from one
  // thread at a time per Source (engines serialise their reads).
  virtual void read(std::uint64_t r0, std::uint64_t c0, std::uint64_t h, std::uint64_t w, void* dst,
                    std::uint64_t ld) = 0;
  // A block shape that reads efficiently (HDF5: the dataset's chunk shape);
  // {0,0} when any rectangle is as good as another.
  virtual Shape preferred_block() const { return {0, 0}; }
  // Host memory the source holds by itself while it is read (the HDF5 chunk
  // cache, and the compressed copy of a chunk being decompressed; on the
  // direct chunk path, the chunk index read once): the job
  // takes it out of host_mem before the engine divides the rest.
  virtual std::uint64_t reserved_bytes() const { return 0; }
  // The part of reserved_bytes() that indexes this source's own storage
  // (an HDF5 source's chunk index): an output that mirrors its layout holds
  // the rest, not this.
  virtual std::uint64_t index_bytes() const { return 0; }
  // True when read() may be called from several threads at once (positioned
  // I/O); engines then read tiles in parallel. HDF5 takes a global lock: false.
  virtual bool concurrent_reads() const { return false; }
  // Non-null for a matrix in host memory (see HostView).
  virtual const HostView* host_view() const { return nullptr; }
  // The format's own description of the elements (see NativeType); empty by
  // default (memory sources, generated ones).
  virtual NativeType native_type() const { return {}; }
  // Codec threads (see CodecDemand); set before the first read.
  virtual CodecDemand codec_demand() const { return {}; }
  virtual void set_codec_threads(int n) { (void)n; }
  // What the source did so far (see FormatReport).
  virtual FormatReport format_report() const { return {}; }
  // A short human description: "HDF5 dataset /x (f32, 1000x2000) in in.h5".
  virtual std::string describe() const = 0;
  // True when the source's bytes, in order, are its transpose in C order (a
  // Fortran-order .npy): the job then copies them as they are (job.hpp,
  // copy_stored_transpose) instead of transposing. Such a source reads a
  // rectangle of its transpose, as stored, with read_transpose().
  virtual bool stores_transpose() const { return false; }
  virtual void read_transpose(std::uint64_t r0, std::uint64_t c0, std::uint64_t h, std::uint64_t w, void* dst,
                              std::uint64_t ld) {
    (void)r0, (void)c0, (void)h, (void)w, (void)dst, (void)ld;
    throw Error(ErrorKind::internal, "read_transpose() of a source that does not store its transpose");
  }
};

// One filter of a stored chunked dataset, as HDF5 holds it (H5Pget_filter2).
struct StoredFilter {
  unsigned id = 0;
  unsigned flags = 0;  // H5Z_FLAG_OPTIONAL (0x1) or mandatory
  std::vector<unsigned> values;
};

// How other processes may write their parts of a sink's output while this
// sink's process keeps the file (the MPI job, gtranspose/mpi.hpp):
//   plain   the data lies in C order at `data_offset` of the file at `path`
//           (the temporary name, allocated in full): raw, .npy, contiguous HDF5;
//           each process opens it and writes its rows at their offsets.
//   chunks  a chunked HDF5 dataset whose chunks `chunk` (rows x cols) each
//           process encodes with `filters` (HDF5's order) and hands to this
//           sink's write_stored_chunk(), which stores them.
//   none    neither: only this sink's process can write it.
struct SharedLayout {
  enum Kind { none, plain, chunks };
  Kind kind = none;
  std::string path;
  std::uint64_t data_offset = 0;
  Shape chunk{0, 0};
  std::vector<StoredFilter> filters;
};

class Sink {
 public:
  virtual ~Sink() = default;  // a sink destroyed without commit() removes its temporary file
  virtual const MatrixInfo& info() const = 0;
  virtual void write(std::uint64_t r0, std::uint64_t c0, std::uint64_t h, std::uint64_t w, const void* src,
                     std::uint64_t ld) = 0;
  // Flushes, closes, and renames the temporary file to its final name.
  virtual void commit() = 0;
  // True when write() may be called from several threads at once.
  virtual bool concurrent_writes() const { return false; }
  // A hint: output rows [r0, r0+h) are complete and will not be written
  // again, so the sink may start writing them back to disk now (raw, .npy:
  // sync_file_range), which overlaps the disk with the rest of the run and
  // leaves less for commit()'s fsync. Default: nothing.
  virtual void rows_complete(std::uint64_t r0, std::uint64_t h) { (void)r0, (void)h; }
  // Host memory the sink holds by itself while it is written (a chunked HDF5
  // output's chunk cache and the compressed copy of the chunk being stored):
  // like Source::reserved_bytes, the job takes it out of host_mem.
  virtual std::uint64_t reserved_bytes() const { return 0; }
  virtual const HostView* host_view() const { return nullptr; }
  // As Source's: codec threads, set before the first write, and the report.
  virtual CodecDemand codec_demand() const { return {}; }
  virtual void set_codec_threads(int n) { (void)n; }
  virtual FormatReport format_report() const { return {}; }
  virtual std::string describe() const = 0;
  // See SharedLayout; none by default.
  virtual SharedLayout shared_layout() const { return {}; }
  // A chunks layout: stores chunk (i, j) (in chunks) as another process
  // encoded it (n bytes, `mask` the filters it skipped); safe to call while
  // write() runs on other threads.
  virtual void write_stored_chunk(std::uint64_t i, std::uint64_t j, const void* data, std::size_t n, unsigned mask) {
    (void)i, (void)j, (void)data, (void)n, (void)mask;
    throw Error(ErrorKind::internal, "write_stored_chunk() of a sink without a shared chunk layout");
  }
};

// A square matrix opened for reading and writing in place.
class InplaceMatrix {
 public:
  virtual ~InplaceMatrix() = default;
  virtual const MatrixInfo& info() const = 0;
  virtual const Location& location() const = 0;
  virtual void read(std::uint64_t r0, std::uint64_t c0, std::uint64_t h, std::uint64_t w, void* dst,
                    std::uint64_t ld) = 0;
  virtual void write(std::uint64_t r0, std::uint64_t c0, std::uint64_t h, std::uint64_t w, const void* src,
                     std::uint64_t ld) = 0;
  virtual void flush() = 0;  // data durable on return (fsync / H5Fflush)
  // A hint: rows [r0, r0+h) were just written; the matrix may start writing
  // them back to disk now, so that the next flush() finds less to do (the
  // journal's flushes then wait for the tail, not for everything). Default: nothing.
  virtual void start_writeback(std::uint64_t r0, std::uint64_t h) { (void)r0, (void)h; }
  virtual std::uint64_t reserved_bytes() const { return 0; }  // as Source::reserved_bytes
  // True when read() and write() may be called from several threads at once
  // (on disjoint rectangles).
  virtual bool concurrent_io() const { return false; }
  virtual const HostView* host_view() const { return nullptr; }
  virtual std::string describe() const = 0;
};

}  // namespace gt
