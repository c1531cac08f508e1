// Locations, dispatch by format, and the checks every format shares.
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cstring>

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

// The format a name says, or nullopt for a name that says none.
std::optional<Format> format_of_name(const std::string& path) {
  if (is_hdf5_name(path)) return Format::hdf5;
  if (ends_with_ci(path, ".npy")) return Format::npy;
  for (const char* ext : {".raw", ".bin", ".dat"})
    if (ends_with_ci(path, ext)) return Format::raw;
  return std::nullopt;
}

constexpr const char* kKnownOutputs = ".h5 or .hdf5 (HDF5), .npy (NumPy), .raw, .bin or .dat (raw bytes)";

// The canonical folder of `path` plus its last component; the path itself
// when the folder does not resolve.
std::string normalised(const std::string& path) {
  char buf[PATH_MAX];
  if (::realpath(dir_of(path).c_str(), buf)) return std::string(buf) + "/" + base_of(path);
  return path;
}

bool is_regular(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// What sniff_format says, or nothing where the file cannot be read (the
// open that follows names the reason).
std::optional<Format> sniff_quietly(const std::string& path) {
  try {
    return fmt::sniff_format(path);
  } catch (const Error&) {
    return std::nullopt;
  }
}

// "file:/dataset": the first ':' whose left side is an HDF5 file by name,
// or an existing file that is HDF5 by content (a netCDF-4 .nc, say); with
// `hdf5` (the format was given), the first ':' of all. A spec that names an
// existing file whole is never split.
std::size_t dataset_colon(const std::string& spec, bool hdf5) {
  if (is_regular(spec)) return std::string::npos;
  for (std::size_t pos = spec.find(':'); pos != std::string::npos; pos = spec.find(':', pos + 1)) {
    const std::string left = spec.substr(0, pos);
    if (left.empty()) continue;
    if (hdf5 || is_hdf5_name(left) || (is_regular(left) && sniff_quietly(left) == Format::hdf5)) return pos;
  }
  return std::string::npos;
}

Location split(const std::string& spec, bool hdf5) {
  Location loc;
  loc.path = spec;
  const std::size_t pos = dataset_colon(spec, hdf5);
  if (pos != std::string::npos) {
    loc.path = spec.substr(0, pos);
    loc.dataset = spec.substr(pos + 1);
    if (!loc.dataset.empty() && loc.dataset[0] != '/') loc.dataset = "/" + loc.dataset;
  }
  return loc;
}

// An input: the format given, else what its first bytes say, else its name
// (a .npy or .h5 whose bytes are neither then fails with that format's own
// message), else raw.
Location locate_input(const std::string& spec, std::optional<Format> given, const char* what) {
  if (spec.empty()) throw Error(ErrorKind::usage, std::string("the ") + what + " path is empty");
  Location loc = given && *given != Format::hdf5 ? Location{spec, "", *given} : split(spec, given == Format::hdf5);
  if (given) {
    loc.format = *given;
    return loc;
  }
  // Opening refuses a FIFO or a device without blocking, and names a
  // missing file: the formats' own opens would say the same.
  const std::optional<Format> sniffed = fmt::sniff_format(loc.path);
  loc.format = sniffed ? *sniffed : format_of_name(loc.path).value_or(Format::raw);
  return loc;
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

std::optional<Format> parse_format(const std::string& name) {
  for (Format f : {Format::raw, Format::npy, Format::hdf5})
    if (lower(name) == format_name(f)) return f;
  return std::nullopt;
}

Location parse_location(const std::string& spec) {
  Location loc = split(spec, false);
  loc.format = format_of_name(loc.path).value_or(Format::raw);
  return loc;
}

Location output_location(const std::string& spec, std::optional<Format> given) {
  if (spec.empty()) throw Error(ErrorKind::usage, "the output path is empty");
  if (given && *given != Format::hdf5) return Location{spec, "", *given};
  Location loc = split(spec, given == Format::hdf5);
  const std::optional<Format> named = given ? given : format_of_name(loc.path);
  if (!named) {
    // A device, FIFO, folder or link is refused as such first: no name makes it an output.
    fmt::check_output_path(loc.path, true);
    const std::string base = base_of(loc.path);
    const std::size_t dot = base.rfind('.');
    const std::string ext = dot == std::string::npos || dot == 0 ? std::string() : base.substr(dot);
    throw Error(ErrorKind::usage, "the output " + loc.path + (ext.empty() ? " has no extension" : " ends in " + ext) +
                                      ", which names no format gtranspose writes: name it " + kKnownOutputs +
                                      ", or give {format} raw, npy or hdf5");
  }
  loc.format = *named;
  return loc;
}

bool same_file(const std::string& a, const std::string& b) {
  const std::string pa = split(a, false).path, pb = split(b, false).path;
  struct stat sa, sb;
  if (::stat(pa.c_str(), &sa) == 0 && ::stat(pb.c_str(), &sb) == 0)
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  return normalised(pa) == normalised(pb);
}

void check_output_file(const std::string& path, bool force) { fmt::check_output_path(path, force); }

std::unique_ptr<Source> open_source(const std::string& spec, const OpenOptions& opts) {
  const Location loc = locate_input(spec, opts.format, "input");
  switch (loc.format) {
    case Format::raw: return fmt::open_raw_source(loc, opts);
    case Format::npy: return fmt::open_npy_source(loc, opts);
    case Format::hdf5: return fmt::open_hdf5_source(loc, opts);
  }
  throw Error(ErrorKind::internal, "unknown format");
}

std::unique_ptr<Sink> create_sink(const std::string& spec, const Source& src, const SinkOptions& opts) {
  const Location loc = output_location(spec, opts.format);
  switch (loc.format) {
    case Format::raw: return fmt::create_raw_sink(loc, src, opts);
    case Format::npy: return fmt::create_npy_sink(loc, src, opts);
    case Format::hdf5: return fmt::create_hdf5_sink(loc, src, opts);
  }
  throw Error(ErrorKind::internal, "unknown format");
}

std::unique_ptr<InplaceMatrix> open_inplace(const std::string& spec, const OpenOptions& opts) {
  const Location loc = locate_input(spec, opts.format, "input");
  switch (loc.format) {
    case Format::raw: return fmt::open_raw_inplace(loc, opts);
    case Format::npy: return fmt::open_npy_inplace(loc, opts);
    case Format::hdf5: return fmt::open_hdf5_inplace(loc, opts);
  }
  throw Error(ErrorKind::internal, "unknown format");
}

namespace fmt {

std::optional<Format> sniff_format(const std::string& path) {
  const Fd fd = open_existing(path, false, path);
  const std::uint64_t size = file_size(fd.get(), path);
  unsigned char head[8];
  // NumPy's magic at the start; HDF5's signature at 0 or after a user block
  // of 512, 1024, 2048, ... bytes, where the HDF5 library looks for it.
  static const unsigned char kHdf5[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
  if (size >= 6) {
    pread_full(fd.get(), head, 6, 0, path);
    if (is_npy_magic(head, 6)) return Format::npy;
  }
  for (std::uint64_t off = 0; off + sizeof head <= size; off = off ? 2 * off : 512) {
    pread_full(fd.get(), head, sizeof head, off, path);
    if (std::memcmp(head, kHdf5, sizeof head) == 0) return Format::hdf5;
  }
  return std::nullopt;
}

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

TempPath checked_output(const Location& loc, const SinkOptions& opts) {
  check_output_path(loc.path, opts.force);
  return TempPath(loc.path, opts.force ? Replace::yes : Replace::no);
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
