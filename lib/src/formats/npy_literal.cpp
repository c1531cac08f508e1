// ast.literal_eval for .npy headers (npy_literal.hpp): CPython 3's tokenizer
// rules (whitespace, line joining, comments, numbers, strings with their
// escapes and prefixes) and literal_eval's rules (containers, True/False/
// None, set(), one unary sign on a number, real +/- imaginary), with NumPy's
// filter of Python 2's 'L' suffix. The parser keeps its own stack of open
// brackets, at most kMaxNesting deep, so no header can exhaust the C++ stack.
#include "formats/npy_literal.hpp"

#include "formats/npy_lexer.hpp"

#include <cstdio>

namespace gt::fmt::npy {
namespace {

// One open bracket (or the whole text, `open` 0) and the expression being
// read inside it: pending unary signs, a complete left operand, a pending
// binary + or -. Values are reduced as soon as they are complete, with
// literal_eval's rules, so a frame holds only finished values.
struct Frame {
  char32_t open = 0;
  PyVal::Kind kind = PyVal::tuple;  // '{': set or dict once known
  bool known = false;               // '{': whether set or dict is decided
  bool comma = false;               // '(': a tuple, not a parenthesised value
  bool want_value = false;          // dict: a key and ':' were read
  std::vector<PyVal> items;
  int signs = 0;                    // unary signs pending before the next operand
  bool minus = false;               // ... the innermost one is '-'
  bool has_left = false;
  PyVal left;
  char binop = 0;                   // '+' or '-' after `left`
};

class Parser {
 public:
  Parser(Lexer& lex) : lex_(lex) {}
  bool run(PyVal* out, std::string* why);

 private:
  bool fail(std::size_t pos, const std::string& why) {
    why_ = why + " at character " + std::to_string(pos);
    return false;
  }
  bool take(Token* t) {
    if (have_back_) {
      *t = std::move(back_);
      have_back_ = false;
      return true;
    }
    if (!lex_.next(t)) return fail(lex_.pos(), lex_.error());
    return true;
  }
  bool operand(PyVal v, std::size_t pos);
  bool finish_expr(Frame& f, std::size_t pos, PyVal* v);
  bool element(Frame& f, PyVal v, std::size_t pos);
  bool close(Frame& f, char32_t bracket, std::size_t pos, PyVal* v);

  Lexer& lex_;
  std::vector<Frame> stack_;
  Token back_;
  bool have_back_ = false;
  std::string why_;
};

// A complete value arrives where the top frame expects an operand.
bool Parser::operand(PyVal v, std::size_t pos) {
  Frame& f = stack_.back();
  if (f.has_left && !f.binop) return fail(pos, "two values without a comma between them");
  if (f.signs) {
    // literal_eval takes one sign, on a number written as such ("-1",
    // "-(1)"), never on True, a string, a container or a signed number.
    if (f.signs > 1 || v.node != PyVal::number) return fail(pos, "a sign on something other than a number");
    if (f.minus && v.kind == PyVal::integer) v.negative = !v.negative && (v.magnitude || v.big);
    v.node = PyVal::signed_number;
    f.signs = 0;
  }
  if (f.binop) {
    // Only "real +/- imaginary", as literal_eval builds complex numbers.
    const bool left_ok = (f.left.node == PyVal::number || f.left.node == PyVal::signed_number) &&
                         (f.left.kind == PyVal::integer || f.left.kind == PyVal::real);
    if (!left_ok || v.node != PyVal::number || v.kind != PyVal::complex)
      return fail(pos, "an operator other than real +/- imaginary");
    f.left = PyVal{};
    f.left.kind = PyVal::complex;
    f.left.node = PyVal::binop;
    f.binop = 0;
    return true;
  }
  f.left = std::move(v);
  f.has_left = true;
  return true;
}

bool Parser::finish_expr(Frame& f, std::size_t pos, PyVal* v) {
  if (f.signs || f.binop || !f.has_left) return fail(pos, "a value is missing");
  *v = std::move(f.left);
  f.left = PyVal{};
  f.has_left = false;
  return true;
}

// A finished element of a bracket: a key, a value, or an item.
bool Parser::element(Frame& f, PyVal v, std::size_t pos) {
  if (f.open == '{') {
    if (f.want_value) {
      f.want_value = false;
    } else {
      if (f.known && f.kind == PyVal::dict) return fail(pos, "a dict key without ':'");
      f.known = true;
      f.kind = PyVal::set;
      if (!v.hashable()) return fail(pos, "an unhashable set element");
    }
  }
  f.items.push_back(std::move(v));
  return true;
}

bool Parser::close(Frame& f, char32_t bracket, std::size_t pos, PyVal* v) {
  static const char32_t kPair[][2] = {{'(', ')'}, {'[', ']'}, {'{', '}'}};
  for (const auto& p : kPair)
    if (p[0] == f.open && p[1] != bracket) return fail(pos, "a closing bracket that does not match its opening one");
  if (f.has_left || f.signs || f.binop) {
    PyVal last;
    if (!finish_expr(f, pos, &last) || !element(f, std::move(last), pos)) return false;
  }
  if (f.want_value) return fail(pos, "a dict key without a value");
  if (f.open == '(' && !f.comma && f.items.size() == 1) {
    *v = std::move(f.items[0]);  // parentheses around one value change nothing
    return true;
  }
  *v = PyVal{};
  v->kind = f.open == '(' ? PyVal::tuple : f.open == '[' ? PyVal::list : f.known ? f.kind : PyVal::dict;
  v->items = std::move(f.items);
  return true;
}

bool Parser::run(PyVal* out, std::string* why) {
  stack_.emplace_back();
  bool done = false;  // the top value is complete and its line ended
  auto bad = [&](std::size_t pos, const std::string& w) {
    fail(pos, w);
    *why = why_;
    return false;
  };
  for (;;) {
    Token t;
    if (!take(&t)) return *why = why_, false;
    if (done) {
      if (t.kind != Token::end) return bad(t.pos, "more text after the value");
      break;
    }
    Frame& f = stack_.back();
    switch (t.kind) {
      case Token::atom: {
        // Adjacent string literals are one: "'<' 'f4'" is '<f4'.
        Token n;
        while (t.value.kind == PyVal::str || t.value.kind == PyVal::bytes) {
          if (!take(&n)) return *why = why_, false;
          if (n.kind != Token::atom || (n.value.kind != PyVal::str && n.value.kind != PyVal::bytes)) {
            back_ = std::move(n);
            have_back_ = true;
            break;
          }
          if (n.value.kind != t.value.kind) return bad(n.pos, "bytes and str literals side by side");
          t.value.s += n.value.s;
        }
        if (!operand(std::move(t.value), t.pos)) return *why = why_, false;
        break;
      }
      case Token::name: {
        PyVal v;
        if (t.word == "True" || t.word == "False") {
          v.kind = PyVal::boolean;
          v.b = t.word == "True";
        } else if (t.word == "None") {
          v.kind = PyVal::none;
        } else if (t.word == "set") {
          // literal_eval's one call: set() with no arguments.
          Token a, b;
          if (!take(&a) || !take(&b)) return *why = why_, false;
          if (a.kind != Token::open || a.bracket != '(' || b.kind != Token::close || b.bracket != ')')
            return bad(t.pos, "a call other than set()");
          v.kind = PyVal::set;
        } else {
          return bad(t.pos, "the name '" + t.word + "', which is not a literal");
        }
        if (!operand(std::move(v), t.pos)) return *why = why_, false;
        break;
      }
      case Token::plus:
      case Token::minus:
        if (f.has_left && !f.binop) {
          f.binop = t.kind == Token::plus ? '+' : '-';
        } else {
          ++f.signs;
          f.minus = t.kind == Token::minus;
        }
        break;
      case Token::open:
        if (f.has_left && !f.binop) return bad(t.pos, "a call or subscript, which is not a literal");
        stack_.emplace_back();
        stack_.back().open = t.bracket;
        break;
      case Token::close: {
        if (f.open == 0) return bad(t.pos, "an unmatched closing bracket");
        PyVal v;
        if (!close(f, t.bracket, t.pos, &v)) return *why = why_, false;
        stack_.pop_back();
        if (!operand(std::move(v), t.pos)) return *why = why_, false;
        break;
      }
      case Token::comma: {
        if (f.open == 0) return bad(t.pos, "a tuple where NumPy needs a dict");
        PyVal v;
        if (!finish_expr(f, t.pos, &v) || !element(f, std::move(v), t.pos)) return *why = why_, false;
        f.comma = true;
        break;
      }
      case Token::colon: {
        PyVal key;
        if (f.open != '{' || f.want_value || (f.known && f.kind == PyVal::set)) return bad(t.pos, "an unexpected ':'");
        if (!finish_expr(f, t.pos, &key)) return *why = why_, false;
        if (!key.hashable()) return bad(t.pos, "an unhashable dict key");
        f.known = true;
        f.kind = PyVal::dict;
        f.items.push_back(std::move(key));
        f.want_value = true;
        break;
      }
      case Token::newline:
      case Token::end: {
        if (stack_.size() != 1) return bad(t.pos, "the text ends inside a bracket");
        if (!finish_expr(f, t.pos, out)) return *why = why_, false;
        if (t.kind == Token::end) return true;
        done = true;
        break;
      }
    }
  }
  return true;
}

}  // namespace

bool PyVal::hashable() const {
  if (kind == list || kind == set || kind == dict) return false;
  for (const auto& i : items)
    if (!i.hashable()) return false;
  return true;
}

std::string quoted(const std::string& s, bool bytes) {
  std::string r = bytes ? "b'" : "'";
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    // C0, DEL and (UTF-8 C2 80..9F) C1 controls would reach a terminal as
    // commands; they are shown as escapes, as are bytes above 0x7f in bytes.
    const bool c1 = !bytes && c == 0xc2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) < 0xa0 &&
                    static_cast<unsigned char>(s[i + 1]) >= 0x80;
    if (c == '\\' || c == '\'') {
      r += '\\';
      r += char(c);
    } else if (c < 0x20 || c == 0x7f || c1 || (bytes && c >= 0x80)) {
      char b[8];
      std::snprintf(b, sizeof b, "\\x%02x", c1 ? static_cast<unsigned char>(s[++i]) : c);
      r += b;
    } else {
      r += char(c);
    }
  }
  return r + "'";
}

std::string PyVal::repr() const {
  switch (kind) {
    case str: return quoted(s);
    case bytes: return quoted(s, true);
    case boolean: return b ? "True" : "False";
    case none: return "None";
    case ellipsis: return "Ellipsis";
    case integer: return big ? std::string(negative ? "-" : "") + "<a number of 20 digits or more>"
                             : (negative ? "-" : "") + std::to_string(magnitude);
    case real: return "a float";
    case complex: return "a complex number";
    case tuple: return "a tuple";
    case list: return "a list";
    case set: return "a set";
    case dict: return "a dict";
  }
  return "?";
}

bool parse_literal(const std::string& text, const LiteralDialect& dialect, PyVal* out, std::string* why) {
  if (text.find('\0') != std::string::npos) {
    *why = "a NUL character at character " + std::to_string(text.find('\0'));
    return false;
  }
  // NumPy's filter for 1.0 and 2.0 runs Python's pure tokenizer, which
  // splits lines at '\n' only: a lone '\r' there can swallow the rest of a
  // line or turn later spaces into an indent, where the C tokenizer sees a
  // plain newline. np.save never writes one; such a header is refused
  // rather than read in a way NumPy might not.
  for (std::size_t i = 0; dialect.filtered && i < text.size(); ++i)
    if (text[i] == '\r' && (i + 1 == text.size() || text[i + 1] != '\n')) {
      *why = "a carriage return without a line feed at character " + std::to_string(i) +
             " (format 1.0 and 2.0 headers go through Python's tokenizer first, which reads one its own way)";
      return false;
    }
  Text t;
  if (dialect.utf8) {
    if (!decode_utf8(text, &t)) {
      *why = "text that is not UTF-8 (format version 3.0 headers are UTF-8)";
      return false;
    }
  } else {
    for (unsigned char c : text) t.push_back(c);  // latin-1: each byte is its code point
  }
  Lexer lex(std::move(t), dialect);
  Parser p(lex);
  return p.run(out, why);
}

}  // namespace gt::fmt::npy
