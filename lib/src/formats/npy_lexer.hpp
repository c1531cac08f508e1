// The tokenizer behind parse_literal (npy_literal.hpp): CPython 3's rules
// for the tokens a literal is made of. Internal to the .npy format.
#pragma once
#include <cstddef>
#include <string>

#include "formats/npy_literal.hpp"

namespace gt::fmt::npy {

using Text = std::u32string;

// Strict UTF-8, as Python's decoder: no overlong forms, no surrogates.
bool decode_utf8(const std::string& in, Text* out);

struct Token {
  enum Kind { open, close, comma, colon, plus, minus, atom, name, newline, end } kind = end;
  char32_t bracket = 0;  // open, close
  PyVal value;           // atom
  std::string word;      // name
  std::size_t pos = 0;
};

// Tokens of one literal, as CPython's tokenizer cuts them: it drops
// whitespace, comments and line continuations, joins lines inside brackets,
// refuses indentation outside them, counts brackets (at most kMaxNesting
// open), reads numbers and strings (prefixes, escapes) into values, and
// drops Python 2's 'L' after a number where the dialect says so.
class Lexer {
 public:
  Lexer(Text t, const LiteralDialect& d) : t_(std::move(t)), d_(d) {
    // literal_eval strips leading spaces and tabs before parsing.
    while (pos_ < t_.size() && (t_[pos_] == ' ' || t_[pos_] == '\t')) ++pos_;
  }
  bool next(Token* tok);
  const std::string& error() const { return why_; }
  std::size_t pos() const { return pos_; }

 private:
  char32_t at(std::size_t i) const { return i < t_.size() ? t_[i] : char32_t(0); }
  bool eof() const { return pos_ >= t_.size(); }
  bool fail(const std::string& why) {
    why_ = why;
    return false;
  }
  // A newline in any of its spellings; consumes \r\n whole.
  bool take_newline() {
    if (at(pos_) == '\n') return ++pos_, true;
    if (at(pos_) != '\r') return false;
    ++pos_;
    if (at(pos_) == '\n') ++pos_;
    return true;
  }
  bool number(Token* tok);
  bool digits_tail(int base);
  bool string(Token* tok, const std::string& prefix);

  Text t_;
  LiteralDialect d_;
  std::size_t pos_ = 0;
  int level_ = 0;
  bool at_bol_ = true, line_has_tokens_ = false, after_number_ = false;
  std::string why_;
};

}  // namespace gt::fmt::npy
