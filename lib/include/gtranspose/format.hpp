// Opening files as sources, sinks and in-place matrices, by format.
//
// A location is "path" or, for HDF5, "path:/group/dataset". The format comes
// from the extension: .h5/.hdf5 HDF5, .npy NumPy, anything else raw bytes
// (row-major, no header; the shape and dtype options required).
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

// Splits "file.h5:/grp/x" (only for .h5/.hdf5 files; a raw path may contain ':').
[[nodiscard]] Location parse_location(const std::string& spec);

// What the user told us about a raw file (required for raw, checked for others).
struct OpenOptions {
  std::optional<Shape> shape;
  std::optional<DType> dtype;
};

// Opens a matrix for reading. Throws gt::Error(input) with a one-line message:
// missing/unreadable file, no such dataset (listing candidates), not 2-D,
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
  bool force = false;  // replace an existing output file
  // An HDF5 output's storage where the source is not an HDF5 dataset (an
  // HDF5 source's own layout wins): chunks of this shape (the output's,
  // rows x cols; {0,0}: contiguous) with these filters in order.
  Shape hdf5_chunk{0, 0};
  std::vector<Hdf5Filter> hdf5_filters = {};
};

// Creates the output for the transpose of `src`: shape src.info().shape.transposed(),
// same element type and byte order, as the source's native_type() gives it
// where it has one. HDF5 outputs copy the source's exact datatype, attributes
// and chunk layout when the source is HDF5; the dataset keeps the
// source's name unless `spec` names one. The data goes to a temporary file in
// the destination folder, registered with tempfile.hpp, renamed by commit().
// Throws gt::Error(output) for an existing output without force, an unwritable
// folder, or an element type the format cannot express.
[[nodiscard]] std::unique_ptr<Sink> create_sink(const std::string& spec, const Source& src, const SinkOptions& opts);

// Opens a square matrix for in-place transposition. Throws gt::Error(input)
// when the matrix is not square, plus everything open_source throws.
[[nodiscard]] std::unique_ptr<InplaceMatrix> open_inplace(const std::string& spec, const OpenOptions& opts);

// True when both specs name the same file (same device and inode, or the same
// normalised path when the second does not exist yet).
bool same_file(const std::string& a, const std::string& b);

}  // namespace gt
