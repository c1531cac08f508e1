// The .npy header: read exactly as NumPy reads it (numpy/lib/format.py:
// the magic and a version of 1.0, 2.0 or 3.0, then ast.literal_eval of the
// header text, then its checks and numpy.dtype(descr)), and written as
// np.save writes it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gtranspose/types.hpp"

namespace gt::fmt {

// What numpy.dtype(descr) gives, reduced to what a header needs.
struct NpyType {
  char kind = 0;               // NumPy's kind: b i u f c S U V M m O; 0 for a structured type or a subarray
  std::int64_t itemsize = 0;   // bytes per element
  ByteOrder order = ByteOrder::not_applicable;
  std::string str;             // dtype.str, as np.save writes it: "<f4" for 'f4' or '|f4', "|S4", "<M8[ns]"
};
// False where numpy.dtype(descr) raises.
[[nodiscard]] bool resolve_npy_dtype(const std::string& descr, NpyType* out);

// The element gtranspose moves for a type it can move.
struct NpyDescr {
  std::string descr;  // the type's dtype.str, which the .npy sink writes back
  std::size_t elem_size = 0;
  std::optional<DType> dtype;  // empty for bool, void, strings, datetimes, long double
  ByteOrder order = ByteOrder::not_applicable;
};
// The descr NumPy would write for dtype in byte order `order`; throws
// gt::Error(output) for types NumPy lacks (bf16).
std::string npy_descr_for(DType t, ByteOrder order, const std::string& out_name);

struct NpyHeader {
  std::string descr_shown;  // 'descr' as the header spells it, quoted and escaped for messages
  NpyType type;
  bool fortran_order = false;
  std::vector<std::uint64_t> shape;
};

// Parses the header text of a file of format version `major` (1, 2 or 3:
// latin-1 with Python 2's 'L' suffix dropped, or UTF-8), as NumPy does.
// Throws gt::Error(input) naming `name` for anything NumPy refuses; a type
// NumPy takes but gtranspose does not move is npy_element's to refuse.
NpyHeader parse_npy_dict(const std::string& text, int major, const std::string& name);
// The element of a header's type; throws gt::Error(input) for a type
// gtranspose cannot move (Python objects, a structured type or subarray, a
// size other than 1, 2, 4, 8 or 16 bytes), saying what it is.
NpyDescr npy_element(const NpyHeader& h, const std::string& name);

// The start of a file: the magic, the version, the header's length.
struct NpyPreamble {
  int major = 0, minor = 0;
  std::uint64_t header_len = 0;  // the dict's length in bytes
  std::uint64_t header_start = 0;
};
// `head` holds the first min(file_size, 12) bytes (n of them). Throws
// gt::Error(input): not a .npy file, a version other than 1.0, 2.0 and
// 3.0, a header longer than the file.
NpyPreamble parse_npy_preamble(const unsigned char* head, std::size_t n, std::uint64_t file_size,
                               const std::string& name);
// True when the n bytes at `head` (n >= 6) start with NumPy's magic.
bool is_npy_magic(const unsigned char* head, std::size_t n);

// The bytes of a header for a C-order array of `shape` and descr, padded so
// the data starts at a multiple of 64 like NumPy; version 1.0 unless the
// header needs 2.0.
std::string make_npy_header(const std::string& descr, std::uint64_t rows, std::uint64_t cols);

std::string shape_repr(const std::vector<std::uint64_t>& shape);  // "(2, 3, 4)", "(5,)"

}  // namespace gt::fmt
