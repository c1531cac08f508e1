// The tokenizer of .npy header literals (npy_lexer.hpp).
#include "formats/npy_lexer.hpp"

#include <cstdio>

namespace gt::fmt::npy {
namespace {

bool is_digit(char32_t c) { return c >= '0' && c <= '9'; }
bool is_hex(char32_t c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
int hex_value(char32_t c) { return is_digit(c) ? int(c - '0') : int((c | 0x20) - 'a' + 10); }
bool is_ident_start(char32_t c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_ident_char(char32_t c) { return is_ident_start(c) || is_digit(c) || c >= 0x80; }

void put_utf8(std::string& s, char32_t c) {
  if (c < 0x80) {
    s += char(c);
  } else if (c < 0x800) {
    s += char(0xc0 | (c >> 6));
    s += char(0x80 | (c & 0x3f));
  } else if (c < 0x10000) {
    s += char(0xe0 | (c >> 12));
    s += char(0x80 | ((c >> 6) & 0x3f));
    s += char(0x80 | (c & 0x3f));
  } else {
    s += char(0xf0 | (c >> 18));
    s += char(0x80 | ((c >> 12) & 0x3f));
    s += char(0x80 | ((c >> 6) & 0x3f));
    s += char(0x80 | (c & 0x3f));
  }
}

}  // namespace

bool decode_utf8(const std::string& in, Text* out) {
  for (std::size_t i = 0; i < in.size();) {
    const auto b = static_cast<unsigned char>(in[i]);
    int n = b < 0x80 ? 0 : (b & 0xe0) == 0xc0 ? 1 : (b & 0xf0) == 0xe0 ? 2 : (b & 0xf8) == 0xf0 ? 3 : -1;
    if (n < 0 || i + std::size_t(n) >= in.size() + (n == 0)) return false;
    char32_t c = n == 0 ? b : n == 1 ? (b & 0x1f) : n == 2 ? (b & 0x0f) : (b & 0x07);
    for (int k = 1; k <= n; ++k) {
      const auto cb = static_cast<unsigned char>(in[i + std::size_t(k)]);
      if ((cb & 0xc0) != 0x80) return false;
      c = (c << 6) | (cb & 0x3f);
    }
    static const char32_t kMin[] = {0, 0x80, 0x800, 0x10000};
    if (c < kMin[n] || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff)) return false;
    out->push_back(c);
    i += std::size_t(n) + 1;
  }
  return true;
}

bool Lexer::next(Token* tok) {
  for (;;) {
    if (at_bol_) {
      at_bol_ = false;
      if (level_ == 0) {
        // Outside brackets a line must start in column 0 (eval input has
        // no blocks): an indented line, even one of spaces at the very end,
        // is "unexpected indent". Blank and comment lines are exempt.
        // A backslash continues the line; the column where the first one
        // stood is the line's indentation (CPython's tokenizer, cont_line_col).
        int col = 0, cont_col = 0;
        while (!eof()) {
          const char32_t w = t_[pos_];
          if (w == ' ') ++col;
          else if (w == '\t') col = (col / 8 + 1) * 8;
          else if (w == '\f') col = 0;
          else if (w != '\\') break;
          ++pos_;
          if (w != '\\') continue;
          cont_col = cont_col ? cont_col : col;
          if (!take_newline()) return fail("unexpected character after a line continuation");
          if (eof()) return fail("the text ends after a line continuation");
        }
        const char32_t c = at(pos_);
        // A last line of only spaces, after the final newline: Python alone
        // refuses it, and so does NumPy's filter on Python 3.12 (whose
        // tokenize refuses it too; 3.11's dropped it). Refused either way.
        const bool blank = !eof() && (c == '#' || c == '\n' || c == '\r');
        if (!blank && (cont_col ? cont_col : col) > 0) return fail("unexpected indent");
      }
    }
    while (!eof() && (t_[pos_] == ' ' || t_[pos_] == '\t' || t_[pos_] == '\f')) ++pos_;
    tok->pos = pos_;
    if (eof()) {
      if (level_ > 0) return fail("the text ends inside a bracket");
      tok->kind = line_has_tokens_ ? Token::newline : Token::end;
      line_has_tokens_ = false;
      return true;
    }
    const char32_t c = t_[pos_];
    if (c == '#') {
      while (!eof() && t_[pos_] != '\n' && t_[pos_] != '\r') ++pos_;
      after_number_ = false;
      continue;
    }
    if (c == '\\') {
      ++pos_;
      if (!take_newline()) return fail("unexpected character after a line continuation");
      if (eof()) return fail("the text ends after a line continuation");
      continue;
    }
    if (take_newline()) {
      after_number_ = false;
      if (level_ > 0) continue;
      at_bol_ = true;
      if (!line_has_tokens_) continue;
      line_has_tokens_ = false;
      tok->kind = Token::newline;
      return true;
    }
    line_has_tokens_ = true;
    if (is_ident_start(c)) {
      std::string w;
      while (!eof() && is_ident_char(t_[pos_])) {
        if (t_[pos_] >= 0x80) return fail("a name with non-ASCII characters");
        w += char(t_[pos_++]);
      }
      if (at(pos_) == '\'' || at(pos_) == '"') {
        std::string p;
        for (char ch : w) p += char(ch | 0x20);
        if (p == "r" || p == "u" || p == "b" || p == "br" || p == "rb") return string(tok, p);
        if (p == "f" || p == "fr" || p == "rf") return fail("an f-string, which is not a literal");
      }
      // NumPy drops Python 2's long suffix after a number (format.py,
      // _filter_header) before evaluating headers of versions 1.0 and 2.0.
      if (w == "L" && after_number_ && d_.filtered) continue;
      after_number_ = false;
      tok->kind = Token::name;
      tok->word = w;
      return true;
    }
    if (is_digit(c) || (c == '.' && is_digit(at(pos_ + 1)))) return number(tok);
    after_number_ = false;
    if (c == '\'' || c == '"') return string(tok, "");
    if (c == '.' && at(pos_ + 1) == '.' && at(pos_ + 2) == '.') {
      pos_ += 3;
      tok->kind = Token::atom;
      tok->value = PyVal{};
      tok->value.kind = PyVal::ellipsis;
      return true;
    }
    ++pos_;
    switch (c) {
      case '(': case '[': case '{':
        if (++level_ > kMaxNesting) return fail("too many nested brackets (Python allows 200)");
        tok->kind = Token::open;
        tok->bracket = c;
        return true;
      case ')': case ']': case '}':
        if (level_ == 0) return fail(std::string("unmatched '") + char(c) + "'");
        --level_;
        tok->kind = Token::close;
        tok->bracket = c;
        return true;
      case ',': tok->kind = Token::comma; return true;
      case ':': tok->kind = Token::colon; return true;
      case '+': tok->kind = Token::plus; return true;
      case '-': tok->kind = Token::minus; return true;
      default: break;
    }
    char buf[48];
    if (c >= 0x21 && c < 0x7f) std::snprintf(buf, sizeof buf, "unexpected character '%c'", char(c));
    else std::snprintf(buf, sizeof buf, "unexpected character U+%04X", unsigned(c));
    return fail(buf);
  }
}

// Digits of `base` with single underscores between them, after the first
// digit was consumed or at a '_': CPython's tok_decimal_tail and its
// hexadecimal, octal and binary loops.
bool Lexer::digits_tail(int base) {
  auto ok = [base](char32_t c) {
    return base == 16 ? is_hex(c) : base == 10 ? is_digit(c) : base == 8 ? (c >= '0' && c <= '7') : (c == '0' || c == '1');
  };
  for (;;) {
    while (ok(at(pos_))) ++pos_;
    if (at(pos_) != '_') return true;
    ++pos_;
    if (!ok(at(pos_))) return fail("an invalid number");
  }
}

bool Lexer::number(Token* tok) {
  const std::size_t start = pos_;
  PyVal v;
  v.node = PyVal::number;
  int base = 10;
  bool real = false, imag = false;
  const char32_t p = at(pos_ + 1);
  if (t_[pos_] == '0' && (p == 'x' || p == 'X' || p == 'o' || p == 'O' || p == 'b' || p == 'B')) {
    base = (p | 0x20) == 'x' ? 16 : (p | 0x20) == 'o' ? 8 : 2;
    pos_ += 2;
    if (at(pos_) == '_') ++pos_;  // one underscore may follow the prefix
    const std::size_t first = pos_;
    if (!digits_tail(base)) return false;
    if (pos_ == first) return fail("an invalid number");
    if (is_digit(at(pos_))) return fail("an invalid digit in a number");
  } else {
    const bool dot_first = t_[pos_] == '.';
    bool nonzero = false;
    if (!dot_first) {
      if (t_[pos_] == '0') {
        // Zeros, then maybe more digits: fine only as a float ("05.").
        while (at(pos_) == '0' || at(pos_) == '_') {
          if (at(pos_) == '_' && !is_digit(at(pos_ + 1))) return fail("an invalid number");
          ++pos_;
        }
        if (is_digit(at(pos_))) {
          nonzero = true;
          if (!digits_tail(10)) return false;
        }
      } else if (!digits_tail(10)) {
        return false;
      }
    }
    if (at(pos_) == '.') {
      real = true;
      ++pos_;
      if (is_digit(at(pos_)) && !digits_tail(10)) return false;
    }
    if ((at(pos_) | 0x20) == 'e' && at(pos_) < 0x80) {
      const std::size_t e = pos_++;
      if (at(pos_) == '+' || at(pos_) == '-') ++pos_;
      if (!is_digit(at(pos_))) {
        pos_ = e;
        return fail("an invalid number");
      }
      if (!digits_tail(10)) return false;
      real = true;
    }
    if ((at(pos_) | 0x20) == 'j' && at(pos_) < 0x80) {
      ++pos_;
      imag = true;
    }
    if (nonzero && !real && !imag) return fail("leading zeros in an integer");
  }
  // CPython 3 refuses a letter right after a number ("1L", "1e"); NumPy's
  // filter, for versions 1.0 and 2.0, first splits "1L" into 1 and L.
  if (!d_.filtered && is_ident_char(at(pos_))) return fail("a letter right after a number");
  if (imag) {
    v.kind = PyVal::complex;
  } else if (real) {
    v.kind = PyVal::real;
  } else {
    v.kind = PyVal::integer;
    for (std::size_t i = start + (base == 10 ? 0 : 2); i < pos_; ++i) {
      if (t_[i] == '_') continue;
      if (!v.big && (__builtin_mul_overflow(v.magnitude, std::uint64_t(base), &v.magnitude) ||
                     __builtin_add_overflow(v.magnitude, std::uint64_t(hex_value(t_[i])), &v.magnitude)))
        v.big = true;
    }
  }
  after_number_ = true;
  tok->kind = Token::atom;
  tok->value = std::move(v);
  tok->pos = start;
  return true;
}

bool Lexer::string(Token* tok, const std::string& prefix) {
  const bool raw = prefix.find('r') != std::string::npos, bytes = prefix.find('b') != std::string::npos;
  const char32_t q = t_[pos_];
  const bool triple = at(pos_ + 1) == q && at(pos_ + 2) == q;
  pos_ += triple ? 3 : 1;
  std::string out;
  auto put = [&](char32_t c) {
    if (bytes) out += char(c & 0xff);
    else put_utf8(out, c);
  };
  for (;;) {
    if (eof()) return fail("a string is not closed");
    const char32_t c = t_[pos_];
    if (bytes && c >= 0x80) return fail("a bytes literal with a non-ASCII character");
    if (c == '\n' || c == '\r') {
      if (!triple) return fail("a string is not closed before the end of its line");
      take_newline();
      put('\n');
      continue;
    }
    if (c == q) {
      if (!triple) {
        ++pos_;
        break;
      }
      if (at(pos_ + 1) == q && at(pos_ + 2) == q) {
        pos_ += 3;
        break;
      }
      put(c);
      ++pos_;
      continue;
    }
    if (c != '\\') {
      put(c);
      ++pos_;
      continue;
    }
    ++pos_;
    if (eof()) return fail("a string is not closed");
    const char32_t e = t_[pos_];
    if (raw) {
      // A raw string keeps the backslash; it only stops the quote or the
      // newline after it from ending the string.
      put('\\');
      if (take_newline()) put('\n');
      else put(e), ++pos_;
      continue;
    }
    if (take_newline()) continue;  // a line continuation inside the string
    ++pos_;
    switch (e) {
      case '\\': put('\\'); continue;
      case '\'': put('\''); continue;
      case '"': put('"'); continue;
      case 'a': put(7); continue;
      case 'b': put(8); continue;
      case 'f': put(12); continue;
      case 'n': put(10); continue;
      case 'r': put(13); continue;
      case 't': put(9); continue;
      case 'v': put(11); continue;
      default: break;
    }
    if (e >= '0' && e <= '7') {
      char32_t v = e - '0';
      for (int k = 0; k < 2 && at(pos_) >= '0' && at(pos_) <= '7'; ++k) v = v * 8 + (t_[pos_++] - '0');
      put(v);
      continue;
    }
    int hex = e == 'x' ? 2 : (!bytes && e == 'u') ? 4 : (!bytes && e == 'U') ? 8 : 0;
    if (hex) {
      char32_t v = 0;
      for (int k = 0; k < hex; ++k) {
        if (!is_hex(at(pos_))) return fail("a truncated \\x, \\u or \\U escape");
        v = v * 16 + char32_t(hex_value(t_[pos_++]));
      }
      if (v > 0x10ffff) return fail("a \\U escape beyond U+10FFFF");
      put(v);
      continue;
    }
    // \N{NAME} needs Unicode's name table, which gtranspose does not carry:
    // refused, where NumPy would accept a real name.
    if (!bytes && e == 'N') return fail("a \\N{...} escape, which gtranspose does not resolve");
    put('\\');  // an unknown escape keeps its backslash, as in Python
    put(e);
  }
  // Adjacent literals are one ("'<' 'f4'"); the parser joins them.
  tok->kind = Token::atom;
  tok->value = PyVal{};
  tok->value.kind = bytes ? PyVal::bytes : PyVal::str;
  tok->value.s = std::move(out);
  return true;
}

}  // namespace gt::fmt::npy
