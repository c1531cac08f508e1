// Sources and sinks: one small interface over every file format.
//
// A location is "path" or, for HDF5, "path:/group/dataset". The format comes
// from the extension: .h5/.hdf5 HDF5, .npy NumPy, anything else raw bytes
// (row-major, no header; --shape and --dtype required).
//
// Every rectangle is given as rows [r0, r0+h) x cols [c0, c0+w) of the
// matrix in the file, and the memory side is row-major with a leading
// dimension `ld` in elements (ld >= w): element (i, j) of the rectangle lives
// at byte offset (i*ld + j)*elem_size of the buffer.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

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
// Splits "file.h5:/grp/x" (only for .h5/.hdf5 files; a raw path may contain ':').
Location parse_location(const std::string& spec);

// What the user told us about a raw file (required for raw, checked for others).
struct OpenOptions {
  std::optional<Shape> shape;
  std::optional<DType> dtype;
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
  // cache, and the compressed copy of a chunk being decompressed): the job
  // takes it out of --host-mem before the engine divides the rest.
  virtual std::uint64_t reserved_bytes() const { return 0; }
  // True when read() may be called from several threads at once (positioned
  // I/O); engines then read tiles in parallel. HDF5 takes a global lock: false.
  virtual bool concurrent_reads() const { return false; }
  // Non-null for a matrix in host memory (see HostView).
  virtual const HostView* host_view() const { return nullptr; }
  // A short human description: "HDF5 dataset /x (f32, 1000x2000) in in.h5".
  virtual std::string describe() const = 0;
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
  // like Source::reserved_bytes, the job takes it out of --host-mem.
  virtual std::uint64_t reserved_bytes() const { return 0; }
  virtual const HostView* host_view() const { return nullptr; }
  virtual std::string describe() const = 0;
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

// Opens a matrix for reading. Throws gt::Error(input) with a one-line message:
// missing/unreadable file, no such dataset (listing candidates), not 2-D,
// raw size mismatch, malformed .npy header, unsupported element type.
// For raw, opts.shape and opts.dtype are required (usage error otherwise).
std::unique_ptr<Source> open_source(const std::string& spec, const OpenOptions& opts);

struct SinkOptions {
  bool force = false;  // replace an existing output file
};

// Creates the output for the transpose of `src`: shape src.info().shape.transposed(),
// same element type and byte order. HDF5 outputs copy the source's exact
// datatype and attributes when the source is HDF5; the dataset keeps the
// source's name unless `spec` names one. The data goes to a temporary file in
// the destination folder, registered with tempfile.hpp, renamed by commit().
// Throws gt::Error(output) for an existing output without force, an unwritable
// folder, or an element type the format cannot express.
std::unique_ptr<Sink> create_sink(const std::string& spec, const Source& src, const SinkOptions& opts);

// Opens a square matrix for in-place transposition. Throws gt::Error(input)
// when the matrix is not square, plus everything open_source throws.
std::unique_ptr<InplaceMatrix> open_inplace(const std::string& spec, const OpenOptions& opts);

// True when both specs name the same file (same device and inode, or the same
// normalised path when the second does not exist yet).
bool same_file(const std::string& a, const std::string& b);

}  // namespace gt
