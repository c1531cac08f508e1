// Locations, dispatch by format, and the checks every format shares.
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>

#include "formats/internal.hpp"
#include "formats/npy.hpp"
#include "formats/plain_io.hpp"
#include "core/paths.hpp"
#include "gtranspose/error.hpp"
#include "gtranspose/plan.hpp"
#include "gtranspose/format.hpp"

namespace gt {
namespace {

using paths::base_of;
using paths::dir_of;

std::string lower(std::string s) {
  for (auto& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool ends_with_ci(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && lower(s.substr(s.size() - suffix.size())) == suffix;
}

bool is_hdf5_name(const std::string& path) { return ends_with_ci(path, ".h5") || ends_with_ci(path, ".hdf5"); }

// The canonical folder of `path` plus its last component; the path itself
// when the folder does not resolve.
std::string normalised(const std::string& path) {
  char buf[PATH_MAX];
  if (::realpath(dir_of(path).c_str(), buf)) return std::string(buf) + "/" + base_of(path);
  return path;
}

}  // namespace

const char* format_name(Format f) {
  switch (f) {
    case Format::raw: return "raw";
    case Format::npy: return "npy";
    case Format::hdf5: return "hdf5";
  }
  return "?";
}

Location parse_location(const std::string& spec) {
  Location loc;
  loc.path = spec;
  // "file.h5:/grp/x": split at the first ':' whose left side is an HDF5 file name.
  for (std::size_t pos = spec.find(':'); pos != std::string::npos; pos = spec.find(':', pos + 1)) {
    std::string left = spec.substr(0, pos);
    if (is_hdf5_name(left)) {
      loc.path = left;
      loc.dataset = spec.substr(pos + 1);
      if (!loc.dataset.empty() && loc.dataset[0] != '/') loc.dataset = "/" + loc.dataset;
      break;
    }
  }
  if (is_hdf5_name(loc.path)) loc.format = Format::hdf5;
  else if (ends_with_ci(loc.path, ".npy")) loc.format = Format::npy;
  else loc.format = Format::raw;
  return loc;
}

bool same_file(const std::string& a, const std::string& b) {
  const std::string pa = parse_location(a).path, pb = parse_location(b).path;
  struct stat sa, sb;
  if (::stat(pa.c_str(), &sa) == 0 && ::stat(pb.c_str(), &sb) == 0)
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  return normalised(pa) == normalised(pb);
}

std::unique_ptr<Source> open_source(const std::string& spec, const OpenOptions& opts) {
  Location loc = parse_location(spec);
  if (loc.path.empty()) throw Error(ErrorKind::usage, "the input path is empty");
  switch (loc.format) {
    case Format::raw: return fmt::open_raw_source(loc, opts);
    case Format::npy: return fmt::open_npy_source(loc, opts);
    case Format::hdf5: return fmt::open_hdf5_source(loc, opts);
  }
  throw Error(ErrorKind::internal, "unknown format");
}

std::unique_ptr<Sink> create_sink(const std::string& spec, const Source& src, const SinkOptions& opts) {
  Location loc = parse_location(spec);
  if (loc.path.empty()) throw Error(ErrorKind::usage, "the output path is empty");
  switch (loc.format) {
    case Format::raw: return fmt::create_raw_sink(loc, src, opts);
    case Format::npy: return fmt::create_npy_sink(loc, src, opts);
    case Format::hdf5: return fmt::create_hdf5_sink(loc, src, opts);
  }
  throw Error(ErrorKind::internal, "unknown format");
}

std::unique_ptr<InplaceMatrix> open_inplace(const std::string& spec, const OpenOptions& opts) {
  Location loc = parse_location(spec);
  if (loc.path.empty()) throw Error(ErrorKind::usage, "the input path is empty");
  switch (loc.format) {
    case Format::raw: return fmt::open_raw_inplace(loc, opts);
    case Format::npy: return fmt::open_npy_inplace(loc, opts);
    case Format::hdf5: return fmt::open_hdf5_inplace(loc, opts);
  }
  throw Error(ErrorKind::internal, "unknown format");
}

namespace fmt {

void check_against_options(const MatrixInfo& info, const OpenOptions& opts, const std::string& name,
                           const std::string& type_text) {
  if (opts.shape && *opts.shape != info.shape)
    throw Error(ErrorKind::usage, "{shape} " + to_string(*opts.shape) + " does not match " + name + ", which is " +
                                      to_string(info.shape) + ": leave {shape} out for .npy and HDF5 inputs");
  if (!opts.dtype) return;
  bool same = info.dtype ? *info.dtype == *opts.dtype : dtype_size(*opts.dtype) == info.elem_size;
  if (!same)
    throw Error(ErrorKind::usage, std::string("{dtype} ") + dtype_name(*opts.dtype) + " does not match " + name +
                                      ", which holds " + type_text + ": leave {dtype} out for .npy and HDF5 inputs");
}

void check_matrix_shape(const std::vector<std::uint64_t>& dims, std::size_t elem_size, const std::string& what) {
  if (dims.size() != 2)
    throw Error(ErrorKind::input, what + " is " + std::to_string(dims.size()) + "-D (shape " + shape_repr(dims) +
                                      "): gtranspose needs a 2-D matrix");
  if (dims[0] == 0 || dims[1] == 0)
    throw Error(ErrorKind::input, what + " is empty (shape " + shape_repr(dims) + "): there is nothing to transpose");
  // A file's header can claim any shape: one whose size does not fit 64 bits
  // is a malformed input, not a usage error.
  std::uint64_t elems = 0, bytes = 0;
  if (__builtin_mul_overflow(dims[0], dims[1], &elems) || __builtin_mul_overflow(elems, elem_size, &bytes))
    throw Error(ErrorKind::input, what + " claims shape " + shape_repr(dims) +
                                      ", whose size does not fit in 64 bits: the file is damaged or not a matrix");
}

const std::string& checked_output(const Location& loc, const SinkOptions& opts) {
  check_output_path(loc.path, opts.force);
  return loc.path;
}

std::string type_text(const MatrixInfo& info, const std::string& fallback) {
  return info.dtype ? dtype_name(*info.dtype) : fallback;
}

void require_inplace_shape(const MatrixInfo& info, const std::string& name, bool mirrored) {
  // Which shapes in place can take is the run plan's decision; here it is
  // the file's shape that does not fit.
  InplaceShape s;
  try {
    s = plan_inplace_shape(info.shape, name);
  } catch (const Error& e) {
    throw Error(ErrorKind::input, e.message());
  }
  if (mirrored && s.kind != InplaceShape::square)
    throw Error(ErrorKind::input, name + " is a Fortran-order " + to_string(info.shape) +
                                      " rectangle: in place takes Fortran order for square matrices only; give an "
                                      "output file instead");
}

void require_square(const MatrixInfo& info, const std::string& name) {
  if (info.shape.rows != info.shape.cols)
    throw Error(ErrorKind::input, "in-place needs a square matrix; " + name + " is " + to_string(info.shape) +
                                      ": give an output file instead");
}

}  // namespace fmt
}  // namespace gt
