// Opening files as sources, sinks and in-place matrices, by format.
//
// A location is "path" or, for HDF5, "path:/group/dataset". An input's
// format comes from its content (the HDF5 signature, at 0 or after a user
// block; the NumPy magic), so a netCDF-4 .nc opens as the HDF5 file it is;
// where the content says nothing, from its name (.h5/.hdf5, .npy), and
// anything else is raw bytes (row-major, no header; the shape and dtype
// options required). An output's format comes from its name: .h5/.hdf5,
// .npy, or .raw/.bin/.dat; any other name is refused unless the format is
// given (SinkOptions::format), so a typo never becomes a headerless file.
//
// The interfaces themselves (Source, Sink, InplaceMatrix) are in matrix.hpp.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gtranspose/matrix.hpp"
#include "gtranspose/types.hpp"

namespace gt {

// Splits "file.h5:/grp/x" at the first ':' whose left side is an HDF5 file
// by name (.h5/.hdf5) or an existing HDF5 file by content ("data.nc:/t");
// a raw path may contain ':'. The format is the name's (raw where the name
// says none); open_source() and create_sink() decide the real one.
[[nodiscard]] Location parse_location(const std::string& spec);
// "raw", "npy", "hdf5" (any case); nullopt otherwise.
[[nodiscard]] std::optional<Format> parse_format(const std::string& name);

// What the user told us about a raw file (required for raw, checked for others).
struct OpenOptions {
  std::optional<Shape> shape;
  std::optional<DType> dtype;
  // The input's format, overriding its content and name (a raw file whose
  // bytes happen to start like a NumPy file's).
  std::optional<Format> format;
};

// Opens a matrix for reading. Throws gt::Error(input) with a one-line message:
// missing/unreadable file, a FIFO, device or folder (refused without
// blocking on it), no such dataset (listing candidates), not 2-D,
// raw size mismatch, malformed .npy header, unsupported element type.
// For raw, opts.shape and opts.dtype are required (usage error otherwise).
[[nodiscard]] std::unique_ptr<Source> open_source(const std::string& spec, const OpenOptions& opts);

// One filter of an HDF5 output's pipeline: an HDF5 filter id (1 deflate,
// 2 shuffle, 3 fletcher32, 4 szip, 32001 blosc, 32004 lz4, 32015 zstd) and
// its parameters (cd_values), as H5Pset_filter takes them.
struct Hdf5Filter {
  unsigned id = 0;
  std::vector<unsigned> values;
  bool optional = true;  // HDF5 may store a chunk the filter cannot shrink without it
};

struct SinkOptions {
  // SinkOptions{force} as before the format was added.
  SinkOptions(bool replace = false, std::optional<Format> fmt = std::nullopt) : force(replace), format(fmt) {}
  bool force = false;  // replace an existing output file
  // The output's format, for a name that says none (or another); without it
  // an output must be named .h5/.hdf5, .npy or .raw/.bin/.dat.
  std::optional<Format> format;
  // An HDF5 output's storage where the source is not an HDF5 dataset (an
  // HDF5 source's own layout wins): chunks of this shape (the output's,
  // rows x cols; {0,0}: contiguous) with these filters in order.
  Shape hdf5_chunk{0, 0};
  std::vector<Hdf5Filter> hdf5_filters = {};
};

// Where an output goes and in which format (see SinkOptions::format).
// Throws gt::Error(usage) for a name that says no format, listing those that do.
[[nodiscard]] Location output_location(const std::string& spec, std::optional<Format> format);

// The checks every output file gets before anything is written (the CLI's
// --json report too): refuses a folder, a device, FIFO or socket, a symbolic
// link (a rename would replace the link, not write through it), and an
// existing file without `force`. Throws gt::Error(output) naming {force}.
void check_output_file(const std::string& path, bool force);

// Creates the output for the transpose of `src`: shape src.info().shape.transposed(),
// same element type and byte order, as the source's native_type() gives it
// where it has one. HDF5 outputs copy the source's exact datatype, attributes
// and chunk layout when the source is HDF5; the dataset keeps the
// source's name unless `spec` names one. The data goes to a temporary file in
// the destination folder, registered with tempfile.hpp, renamed by commit().
// Throws gt::Error(output) for an existing output without force, an unwritable
// folder, or an element type the format cannot express; gt::Error(usage) for
// a name that says no format. The commit replaces a file under the final
// name only with force: one that appeared during the run is kept and the
// commit fails.
[[nodiscard]] std::unique_ptr<Sink> create_sink(const std::string& spec, const Source& src, const SinkOptions& opts);

// Opens a square matrix for in-place transposition. Throws gt::Error(input)
// when the matrix is not square, plus everything open_source throws.
[[nodiscard]] std::unique_ptr<InplaceMatrix> open_inplace(const std::string& spec, const OpenOptions& opts);

// What the report says of a matrix stored at `loc` (report.hpp:
// MatrixDescription): its format, dataset, shape, type and byte order from
// `info`, and for HDF5 the chunks and filters read from the file as stored
// (open it elsewhere in this process only with the same access: call this
// before opening it, or after). `text` is the format's own sentence.
// Throws gt::Error(input) when an HDF5 file cannot be read.
[[nodiscard]] MatrixDescription describe_matrix(const Location& loc, const MatrixInfo& info, const std::string& text);

// A dry run's output: its location (the dataset an HDF5 output would get),
// and a Sink that only answers what the planner asks (info, concurrent
// writes, reserved memory, codec threads), as the sink create_sink would
// make is predicted to; writing to it or committing it is an internal error.
struct PlannedOutput {
  Location location;
  std::unique_ptr<Sink> sink;
  bool mirrors_input_layout = false;  // an HDF5 output keeping an HDF5 input's chunks and filters
  std::vector<std::string> notes;
};
// Checks what create_sink would refuse before it writes (the name's format,
// check_output_file, a folder that takes no new file, an element type the
// format cannot hold) and creates nothing. Throws gt::Error as create_sink.
[[nodiscard]] PlannedOutput plan_output(const std::string& spec, const Source& src, const SinkOptions& opts);

// The matrices (2-D datasets) of an HDF5 file, as "/group/x"; empty for
// a file of another format. Throws gt::Error(input) for an unreadable file.
// (The CLI's completion of FILE.h5:/dataset.)
[[nodiscard]] std::vector<std::string> list_matrices(const std::string& path);

// True when both specs name the same file (same device and inode, or the same
// normalised path when the second does not exist yet).
bool same_file(const std::string& a, const std::string& b);

// For a program to call first, before any HDF5 file is opened (the CLI
// does): HDF5 then runs no shutdown of its own at exit. HDF5 1.10 crashes
// in that shutdown (SIGSEGV in H5F__close_cb) on a file whose close failed
// after a full disk or a file-size limit; gtranspose closes every HDF5 file
// it finishes and leaves one it cannot close to the exit. A program that
// keeps HDF5 files of its own open until exit (h5py's) needs the shutdown
// to flush them, and must not call this.
void hdf5_no_shutdown_at_exit();

}  // namespace gt
