// The .npy header: parsed and written as NumPy does (numpy/lib/format.py).
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gtranspose/types.hpp"

namespace gt::fmt {

// What a descr string such as '<f4', '>c16', '|u1' or '|V8' means to us.
struct NpyDescr {
  std::string descr;  // exactly as in the file
  std::size_t elem_size = 0;
  std::optional<DType> dtype;  // empty for void and bool
  ByteOrder order = ByteOrder::not_applicable;
};
// Throws gt::Error(input) naming `name` for a type gtranspose cannot move.
NpyDescr parse_npy_descr(const std::string& descr, const std::string& name);
// The descr NumPy would write for dtype in byte order `order`; throws
// gt::Error(output) for types NumPy lacks (bf16).
std::string npy_descr_for(DType t, ByteOrder order, const std::string& out_name);

struct NpyHeader {
  int major = 1, minor = 0;
  NpyDescr descr;
  bool fortran_order = false;
  std::vector<std::uint64_t> shape;
  std::uint64_t data_offset = 0;
};

// Parses the Python dict literal of a header, e.g.
// "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }".
// Throws gt::Error(input) naming `name` on anything malformed.
NpyHeader parse_npy_dict(const std::string& dict, const std::string& name);

// Parses a whole header from the first bytes of a file of `file_size` bytes.
// `head` holds at least the first min(file_size, 12) bytes; `more` fetches
// the header text once its length is known.
struct NpyPreamble {
  int major = 0, minor = 0;
  std::uint64_t header_len = 0;  // the dict's length in bytes
  std::uint64_t header_start = 0;
};
NpyPreamble parse_npy_preamble(const unsigned char* head, std::size_t n, std::uint64_t file_size,
                               const std::string& name);

// The bytes of a header for a C-order array of `shape` and descr, padded so
// the data starts at a multiple of 64 like NumPy; version 1.0 unless the
// header needs 2.0.
std::string make_npy_header(const std::string& descr, std::uint64_t rows, std::uint64_t cols);

std::string shape_repr(const std::vector<std::uint64_t>& shape);  // "(2, 3, 4)", "(5,)"

}  // namespace gt::fmt
