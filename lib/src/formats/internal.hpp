// Factories behind open_source / create_sink / open_inplace, one set per format.
#pragma once
#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gtranspose/format.hpp"
#include "gtranspose/tempfile.hpp"

namespace gt::fmt {

std::unique_ptr<Source> open_raw_source(const Location& loc, const OpenOptions& opts);
std::unique_ptr<Source> open_npy_source(const Location& loc, const OpenOptions& opts);
std::unique_ptr<Source> open_hdf5_source(const Location& loc, const OpenOptions& opts);

std::unique_ptr<Sink> create_raw_sink(const Location& loc, const Source& src, const SinkOptions& opts);
std::unique_ptr<Sink> create_npy_sink(const Location& loc, const Source& src, const SinkOptions& opts);
std::unique_ptr<Sink> create_hdf5_sink(const Location& loc, const Source& src, const SinkOptions& opts);

// What create_raw_sink and create_npy_sink refuse of the source's element
// type (a big-endian raw output; a type NumPy cannot name), before any file
// exists: a dry run asks them too. The second returns the .npy descr.
void check_raw_output(const Location& loc, const Source& src);
std::string npy_output_descr(const Location& loc, const Source& src);

std::unique_ptr<InplaceMatrix> open_raw_inplace(const Location& loc, const OpenOptions& opts);
std::unique_ptr<InplaceMatrix> open_npy_inplace(const Location& loc, const OpenOptions& opts);
std::unique_ptr<InplaceMatrix> open_hdf5_inplace(const Location& loc, const OpenOptions& opts);

// For a raw or .npy source that stores its transpose (a Fortran-order
// .npy) and a raw or .npy sink: copies the stored bytes into the sink's
// data with copy_file_range(2), in the kernel, as cp does, calling
// `progress` with the bytes done. Returns false, having copied nothing,
// where either side is another format or the file systems cannot; the
// caller then copies through memory.
bool copy_stored_bytes(Source& src, Sink& dst, const std::function<void(std::uint64_t)>& progress,
                       const std::atomic<bool>* cancel);

// The format a file's first bytes say (the NumPy magic; the HDF5 signature
// at 0, 512, 1024, ...), nullopt when neither. Throws gt::Error(input) when
// the file cannot be opened, and for a FIFO, device or folder (without
// blocking on it).
[[nodiscard]] std::optional<Format> sniff_format(const std::string& path);

// The chunk shape ({0,0}: not chunked) and filters, in pipeline order, of
// the HDF5 dataset `loc` names (or the file's only 2-D one: `loc.dataset`
// gets its path), read from the file (hdf5/storage.cpp). Throws gt::Error(input).
void hdf5_storage(Location& loc, Shape& chunks, std::vector<std::string>& filters);
// The 2-D datasets of the HDF5 file at `path`, as paths ("/g/x").
std::vector<std::string> hdf5_matrices(const std::string& path);
// The HDF5 library this process runs with: "1.10.8".
std::string hdf5_version();

// Refuses what check_output_file() refuses, and returns the temporary
// beside loc.path that a sink writes and commits: its commit replaces a
// file under the final name only with opts.force, so one created while
// the run was going is kept (TempPath, Replace).
[[nodiscard]] TempPath checked_output(const Location& loc, const SinkOptions& opts);

// Refuses the shape and dtype options where they contradict what a
// self-describing file says.
void check_against_options(const MatrixInfo& info, const OpenOptions& opts, const std::string& name,
                           const std::string& type_text);
// "in.npy is 3-D (shape (2, 3, 4)): gtranspose needs a 2-D matrix" and the empty-matrix case.
void check_matrix_shape(const std::vector<std::uint64_t>& dims, std::size_t elem_size, const std::string& what);
// The text a describe() shows for an element type: "f32", or `fallback`.
std::string type_text(const MatrixInfo& info, const std::string& fallback);
// Throws gt::Error(input) for a square-only operation on a rectangle.
void require_square(const MatrixInfo& info, const std::string& name);
// Throws for a shape in place cannot take (plan_inplace_shape), and for a
// `mirrored` (Fortran-order) rectangle.
void require_inplace_shape(const MatrixInfo& info, const std::string& name, bool mirrored);

}  // namespace gt::fmt
