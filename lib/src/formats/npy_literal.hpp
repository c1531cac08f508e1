// The Python literal a .npy header holds, parsed as NumPy parses it:
// numpy/lib/format.py reads the header text and calls ast.literal_eval on it
// (after dropping Python 2's 'L' after integers, for versions 1.0 and 2.0).
// This is that evaluation, in C++, for the literals a header can hold.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <utility>
#include <vector>

namespace gt::fmt::npy {

// A value as ast.literal_eval returns it, with what NumPy's checks need.
struct PyVal {
  enum Kind : std::uint8_t { str, bytes, boolean, none, ellipsis, integer, real, complex, tuple, list, set, dict };
  Kind kind = none;
  std::string s;              // str: UTF-8 of its code points; bytes: the bytes
  bool b = false;             // boolean
  std::uint64_t magnitude = 0;  // integer: |value| when `big` is false
  bool negative = false;      // integer
  bool big = false;           // integer: |value| >= 2^64
  std::vector<PyVal> items;   // tuple, list, set; dict: key, value, key, value, ...

  // What literal_eval's number rules look at: a bare number, a number
  // under one unary sign, or the result of `real +/- imaginary`.
  enum Node : std::uint8_t { plain, number, signed_number, binop } node = plain;
  bool hashable() const;
  std::string repr() const;  // Python's repr, for messages (control characters escaped)
};

// `s` between quotes, with quotes, backslashes and control characters
// escaped as Python's repr does (b'...' for bytes): safe to print.
std::string quoted(const std::string& s, bool bytes = false);

// The text's encoding (NumPy: latin-1 for format versions 1.0 and 2.0,
// UTF-8 for 3.0), and whether the text first goes through NumPy's filter
// for 1.0 and 2.0 (_filter_header: Python's tokenize and untokenize, which
// drop Python 2's 'L' after a number, and a last line of only spaces).
struct LiteralDialect {
  bool utf8 = false;
  bool filtered = true;
};

// Parses the whole text as one literal. Nesting is refused past 200
// brackets, Python's own limit, so the parser's depth stays bounded however
// the header is built. Returns false with *why (a reason and the character
// where it was found) on anything ast.literal_eval would refuse.
bool parse_literal(const std::string& text, const LiteralDialect& dialect, PyVal* out, std::string* why);

// Python's limit on nested brackets ("too many nested parentheses").
constexpr int kMaxNesting = 200;

}  // namespace gt::fmt::npy
