// numpy.dtype(descr) for the descr string of a .npy header (npy.hpp), as
// NumPy 1.24 resolves it (numpy/core/src/multiarray/descriptor.c,
// _convert_from_str; numpy/core/_internal.py, _commastring): a byte order,
// then a datetime ("M8[ns]"), a one-letter code ("d"), a kind and size
// ("f4", "S10", "U3"), a name ("float32"), or a comma string ("1f4", "()f4",
// "f4,i4"). Only what a header can describe is kept: the kind, the size,
// the byte order and the canonical spelling np.save writes (dtype.str).
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <string>

#include "formats/npy.hpp"
#include "formats/npy_lexer.hpp"
#include "formats/npy_literal.hpp"

namespace gt::fmt {
namespace {

constexpr char kNative = '<';  // the hosts gtranspose runs on are little-endian

bool is_order(char c) { return c == '<' || c == '>' || c == '|' || c == '='; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

struct Entry {
  const char* name;
  char kind;
  int size;
};

// PyArray_DescrFromType for a one-character string: a type code, or a
// type number (NumPy 1.24: 0 bool .. 23 half), which a character below 24 is.
struct Code {
  char code;
  char kind;
  int size;
};
constexpr Code kCodes[] = {
    {'?', 'b', 1}, {'b', 'i', 1}, {'B', 'u', 1}, {'h', 'i', 2}, {'H', 'u', 2}, {'i', 'i', 4}, {'I', 'u', 4},
    {'l', 'i', 8}, {'L', 'u', 8}, {'q', 'i', 8}, {'Q', 'u', 8}, {'p', 'i', 8}, {'P', 'u', 8}, {'e', 'f', 2},
    {'f', 'f', 4}, {'d', 'f', 8}, {'g', 'f', 16}, {'F', 'c', 8}, {'D', 'c', 16}, {'G', 'c', 32}, {'S', 'S', 0},
    {'a', 'S', 0}, {'U', 'U', 0}, {'V', 'V', 0}, {'O', 'O', 8}, {'M', 'M', 8}, {'m', 'm', 8}, {'c', 'S', 1},
    {0, 'b', 1},   {1, 'i', 1},   {2, 'u', 1},   {3, 'i', 2},   {4, 'u', 2},   {5, 'i', 4},   {6, 'u', 4},
    {7, 'i', 8},   {8, 'u', 8},   {9, 'i', 8},   {10, 'u', 8},  {11, 'f', 4},  {12, 'f', 8},  {13, 'f', 16},
    {14, 'c', 8},  {15, 'c', 16}, {16, 'c', 32}, {17, 'O', 8},  {18, 'S', 0},  {19, 'U', 0},  {20, 'V', 0},
    {21, 'M', 8},  {22, 'm', 8},  {23, 'f', 2},
};

// numpy.sctypeDict's names (NumPy 1.24, x86-64), looked up with the whole
// string when nothing above matched it.
constexpr Entry kNames[] = {
    {"bool", 'b', 1},        {"bool8", 'b', 1},         {"bool_", 'b', 1},       {"byte", 'i', 1},
    {"bytes", 'S', 0},       {"bytes0", 'S', 0},        {"bytes_", 'S', 0},      {"cdouble", 'c', 16},
    {"cfloat", 'c', 16},     {"clongdouble", 'c', 32},  {"clongfloat", 'c', 32}, {"complex", 'c', 16},
    {"complex128", 'c', 16}, {"complex256", 'c', 32},   {"complex64", 'c', 8},   {"complex_", 'c', 16},
    {"csingle", 'c', 8},     {"datetime64", 'M', 8},    {"double", 'f', 8},      {"float", 'f', 8},
    {"float128", 'f', 16},   {"float16", 'f', 2},       {"float32", 'f', 4},     {"float64", 'f', 8},
    {"float_", 'f', 8},      {"half", 'f', 2},          {"int", 'i', 8},         {"int0", 'i', 8},
    {"int16", 'i', 2},       {"int32", 'i', 4},         {"int64", 'i', 8},       {"int8", 'i', 1},
    {"int_", 'i', 8},        {"intc", 'i', 4},          {"intp", 'i', 8},        {"long", 'i', 8},
    {"longcomplex", 'c', 32}, {"longdouble", 'f', 16},  {"longfloat", 'f', 16},  {"longlong", 'i', 8},
    {"object", 'O', 8},      {"object0", 'O', 8},       {"object_", 'O', 8},     {"short", 'i', 2},
    {"single", 'f', 4},      {"singlecomplex", 'c', 8}, {"str", 'U', 0},         {"str0", 'U', 0},
    {"str_", 'U', 0},        {"string_", 'S', 0},       {"timedelta64", 'm', 8}, {"ubyte", 'u', 1},
    {"uint", 'u', 8},        {"uint0", 'u', 8},         {"uint16", 'u', 2},      {"uint32", 'u', 4},
    {"uint64", 'u', 8},      {"uint8", 'u', 1},         {"uintc", 'u', 4},       {"uintp", 'u', 8},
    {"ulong", 'u', 8},       {"ulonglong", 'u', 8},     {"unicode", 'U', 0},     {"unicode_", 'U', 0},
    {"ushort", 'u', 2},      {"void", 'V', 0},          {"void0", 'V', 0},
};

// PyArray_TypestrConvert: a kind letter and a size; 0 where none matches.
char typestr_kind(char kind, long size) {
  switch (kind) {
    case 'b': return size == 1 ? 'b' : 0;
    case 'i': case 'u': return size == 1 || size == 2 || size == 4 || size == 8 ? kind : 0;
    case 'f': return size == 2 || size == 4 || size == 8 || size == 16 ? 'f' : 0;
    case 'c': return size == 8 || size == 16 || size == 32 ? 'c' : 0;
    case 'O': return size == 4 || size == 8 ? 'O' : 0;
    default: return 0;
  }
}

// The byte order of a kind and size: '|' where NumPy says it does not apply.
char order_of(char kind, std::int64_t size, char endian) {
  if (kind == 'b' || kind == 'S' || kind == 'V' || kind == 'O' || ((kind == 'i' || kind == 'u') && size == 1)) return '|';
  return endian == '>' ? '>' : kNative;
}

NpyType make(char kind, std::int64_t size, char endian, const std::string& meta = "") {
  NpyType t;
  t.kind = kind;
  t.itemsize = kind == 'O' ? 8 : size;
  const char o = order_of(kind, t.itemsize, endian);
  t.order = o == '|' ? ByteOrder::not_applicable : o == '>' ? ByteOrder::big : ByteOrder::little;
  if (kind == 'O') t.str = "|O";
  else if (kind == 'M' || kind == 'm') t.str = std::string(1, o) + kind + "8" + meta;
  else t.str = std::string(1, o) + kind + std::to_string(kind == 'U' ? size / 4 : size);
  return t;
}

// C's isspace in the C locale, which strtol skips.
bool c_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; }

// "M8", "m8", "datetime64", "timedelta64" and their "[unit]".
bool datetime(const std::string& s, char endian, NpyType* out) {
  char kind;
  std::string meta;
  if (s.size() >= 2 && s[1] == '8' && (s[0] == 'M' || s[0] == 'm')) {
    kind = s[0];
    meta = s.substr(2);
  } else if (s.compare(0, 10, "datetime64") == 0) {
    kind = 'M';
    meta = s.substr(10);
  } else if (s.compare(0, 11, "timedelta64") == 0) {
    kind = 'm';
    meta = s.substr(11);
  } else {
    return false;
  }
  std::string canon;
  if (!meta.empty()) {
    // "[unit]" or "[Nunit]" (N as strtol reads it). NumPy also takes
    // "[unit/N]", which it rewrites; gtranspose refuses that one.
    if (meta.size() < 3 || meta.front() != '[' || meta.back() != ']') return false;
    const std::string body = meta.substr(1, meta.size() - 2);
    std::size_t i = 0;
    while (i < body.size() && c_space(body[i])) ++i;
    if (i < body.size() && (body[i] == '+' || body[i] == '-')) ++i;
    const std::size_t digits = i;
    while (i < body.size() && is_digit(body[i])) ++i;
    long n = 1;
    if (i > digits) n = std::strtol(body.c_str(), nullptr, 10);
    else i = 0;  // strtol read nothing: the unit starts at once
    const std::string unit = body.substr(i);
    static const char* kUnits[] = {"Y", "M", "W", "D", "h", "m", "s", "ms", "us", "\xce\xbcs", "ns", "ps", "fs", "as", "generic"};
    bool known = false;
    for (const char* u : kUnits) known = known || unit == u;
    if (!known || n < 0) return false;
    if (unit != "generic")
      canon = "[" + (n == 1 ? std::string() : std::to_string(n)) + (unit == "\xce\xbcs" ? "us" : unit) + "]";
  }
  *out = make(kind, 8, endian, canon);
  return true;
}

// strtol(s, &end, 10) == value with end at the end of s, with C's rules:
// leading white space, a sign, at least one digit.
bool whole_long(const std::string& s, long* value) {
  std::size_t i = 0;
  while (i < s.size() && c_space(s[i])) ++i;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  if (i >= s.size() || !is_digit(s[i])) return false;
  while (i < s.size() && is_digit(s[i])) ++i;
  if (i != s.size()) return false;
  *value = std::strtol(s.c_str(), nullptr, 10);  // saturates as NumPy's call does
  return true;
}

// _check_for_commastring.
bool is_commastring(const std::string& s) {
  const std::size_t n = s.size();
  if (is_digit(s[0]) || (n > 1 && is_order(s[0]) && is_digit(s[1]))) return true;
  if ((n > 1 && s[0] == '(' && s[1] == ')') || (n > 3 && is_order(s[0]) && s[1] == '(' && s[2] == ')')) return true;
  int sq = 0;
  for (char c : s) {
    if (c == ',' && sq == 0) return true;
    if (c == '[') ++sq;
    if (c == ']') --sq;
  }
  return false;
}

// Python's str.isspace for one code point (the regular expressions' \s).
bool py_space(char32_t c) {
  return (c >= 9 && c <= 13) || (c >= 0x1c && c <= 0x20) || c == 0x85 || c == 0xa0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 || c == 0x202f || c == 0x205f || c == 0x3000;
}

bool resolve(const std::string& s, int depth, NpyType* out);

// numpy.core._internal._commastring, then the one item it gives, as
// _convert_from_commastring takes it; several items are a structured type.
bool commastring(const std::string& s, int depth, NpyType* out) {
  npy::Text t;
  if (!npy::decode_utf8(s, &t)) return false;
  auto asc = [&](std::size_t i) { return i < t.size() && t[i] < 0x80 ? char(t[i]) : '\0'; };
  std::size_t i = 0;
  int items = 0;
  std::string item_type, repeats;
  while (i < t.size()) {
    // format_re: order1, repeats ' *[(]?[ ,0-9]*[)]? *', order2, dtype '[A-Za-z0-9.?]*(\[[a-zA-Z0-9,.]+\])?'
    std::string o1, o2, dt;
    if (is_order(asc(i))) o1 = asc(i++);
    const std::size_t rs = i;
    while (asc(i) == ' ') ++i;
    if (asc(i) == '(') ++i;
    while (asc(i) == ' ' || asc(i) == ',' || is_digit(asc(i))) ++i;
    if (asc(i) == ')') ++i;
    while (asc(i) == ' ') ++i;
    std::string rep;
    for (std::size_t k = rs; k < i; ++k) rep += char(t[k]);  // spaces, digits, commas, parentheses
    if (is_order(asc(i))) o2 = asc(i++);
    auto dchar = [&](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '?'; };
    while (dchar(asc(i))) dt += asc(i++);
    if (asc(i) == '[') {
      std::size_t j = i + 1;
      while (std::isalnum(static_cast<unsigned char>(asc(j))) || asc(j) == ',' || asc(j) == '.') ++j;
      if (j > i + 1 && asc(j) == ']') {
        for (std::size_t k = i; k <= j; ++k) dt += asc(k);
        i = j + 1;
      }
    }
    if (i < t.size()) {
      std::size_t j = i;
      while (j < t.size() && py_space(t[j])) ++j;
      if (j == t.size()) {
        i = j;
      } else {
        if (asc(j) != ',') return false;
        ++j;
        while (j < t.size() && py_space(t[j])) ++j;
        i = j;
      }
    }
    std::string order = o2.empty() ? o1 : o1.empty() ? o2 : std::string();
    if (!o1.empty() && !o2.empty()) {
      const char a = o1[0] == '=' ? kNative : o1[0], b = o2[0] == '=' ? kNative : o2[0];
      if (a != b) return false;
      order = std::string(1, a);
    }
    if (order == "|" || order == "=" || order == std::string(1, kNative)) order.clear();
    item_type = order + dt;
    repeats = rep;
    ++items;
  }
  if (items != 1) {
    if (items < 1) return false;
    out->kind = 0;  // structured: valid or not, nothing gtranspose moves
    return true;
  }
  NpyType base;
  if (!resolve(item_type, depth + 1, &base)) return false;
  if (repeats.empty()) return *out = base, true;
  // (type, literal_eval(repeats)): () leaves the type as it is; any count or
  // shape makes a subarray. A count of 1 is where NumPy's versions differ:
  // 1.x drops it ('1f4' is f4), 2.x makes a subarray of one (V4, not
  // plain). Read as 2.x reads it: refused, never taken as another type.
  npy::PyVal shape;
  std::string why;
  if (!npy::parse_literal(repeats, npy::LiteralDialect{true, false}, &shape, &why)) return false;
  if (shape.kind == npy::PyVal::tuple && shape.items.empty()) return *out = base, true;
  if (shape.kind != npy::PyVal::integer && shape.kind != npy::PyVal::tuple) return false;
  out->kind = 0;
  return true;
}

bool resolve(const std::string& s, int depth, NpyType* out) {
  if (s.empty() || depth > int(s.size()) + 2) return false;
  if (is_commastring(s)) return commastring(s, depth, out);
  char endian = '=';
  std::string rest = s;
  if (s.size() > 1 && is_order(s[0])) {
    endian = s[0] == '|' ? '=' : s[0];
    rest = s.substr(1);
  }
  if (datetime(rest, endian, out)) return true;
  if (rest.size() >= 2 && (rest.compare(0, 2, "M8") == 0 || rest.compare(0, 2, "m8") == 0 ||
                           rest.compare(0, 10, "datetime64") == 0 || rest.compare(0, 11, "timedelta64") == 0))
    return false;  // a datetime whose unit NumPy refuses (or gtranspose does)
  char kind = 0;
  long size = 0;
  if (rest.size() == 1) {
    for (const Code& c : kCodes)
      if (rest[0] == c.code) kind = c.kind, size = c.size;
  } else if (whole_long(rest.substr(1), &size)) {
    // NumPy keeps strtol's long in an int, and counts U in 4-byte characters.
    const auto elsize = static_cast<std::int32_t>(static_cast<std::uint32_t>(size));
    size = elsize;
    switch (rest[0]) {
      case 'S': case 'a': kind = 'S'; break;
      case 'U': kind = 'U', size = static_cast<std::int32_t>(static_cast<std::uint32_t>(elsize) << 2); break;
      case 'V': kind = 'V'; break;
      default: kind = size == 0 ? 0 : typestr_kind(rest[0], size);
    }
  }
  if (!kind) {
    for (const Entry& e : kNames)
      if (s == e.name) return *out = make(e.kind, e.size, '='), true;
    return false;
  }
  *out = make(kind, size, endian);
  return true;
}

}  // namespace

bool resolve_npy_dtype(const std::string& descr, NpyType* out) { return resolve(descr, 0, out); }

}  // namespace gt::fmt
