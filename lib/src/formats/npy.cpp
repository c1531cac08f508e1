#include "formats/npy.hpp"

#include <cctype>
#include <cstring>
#include <utility>

#include "gtranspose/error.hpp"

namespace gt::fmt {
namespace {

constexpr unsigned char kMagic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
// NumPy leaves room after the dict so the first axis can grow in place
// (numpy/lib/format.py, GROWTH_AXIS_MAX_DIGITS) and aligns data to 64 bytes.
constexpr std::size_t kGrowthDigits = 21;
constexpr std::size_t kAlign = 64;

// A Python literal as np.save writes them: str, bool, None, int, tuple, list, dict.
struct PyVal {
  enum Kind { str, boolean, none, integer, tuple, list, dict } kind = none;
  std::string s;
  bool b = false;
  std::uint64_t i = 0;
  bool negative = false;
  std::vector<PyVal> items;
  std::vector<std::pair<std::string, PyVal>> entries;
};

class DictParser {
 public:
  DictParser(const std::string& text, const std::string& name) : t_(text), name_(name) {}

  PyVal parse() {
    PyVal v = value();
    skip_ws();
    if (pos_ != t_.size()) fail("unexpected text after the header dict");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    std::string shown = t_.substr(0, 120);
    for (auto& c : shown)
      if (!std::isprint(static_cast<unsigned char>(c))) c = '?';
    throw Error(ErrorKind::input, name_ + " has a malformed .npy header (" + why + " at character " +
                                      std::to_string(pos_) + "): " + shown);
  }

  void skip_ws() {
    while (pos_ < t_.size() && std::isspace(static_cast<unsigned char>(t_[pos_]))) ++pos_;
  }

  bool eat(char c) {
    skip_ws();
    if (pos_ < t_.size() && t_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  bool word(const char* w) {
    std::size_t n = std::strlen(w);
    if (t_.compare(pos_, n, w) != 0) return false;
    if (pos_ + n < t_.size() && (std::isalnum(static_cast<unsigned char>(t_[pos_ + n])) || t_[pos_ + n] == '_'))
      return false;
    pos_ += n;
    return true;
  }

  PyVal value() {
    skip_ws();
    if (pos_ >= t_.size()) fail("the header ends early");
    char c = t_[pos_];
    PyVal v;
    if (c == '\'' || c == '"') {
      v.kind = PyVal::str;
      v.s = string_lit();
    } else if (c == '{') {
      ++pos_;
      v.kind = PyVal::dict;
      while (!eat('}')) {
        PyVal k = value();
        if (k.kind != PyVal::str) fail("a dict key is not a string");
        if (!eat(':')) fail("expected ':'");
        v.entries.emplace_back(k.s, value());
        if (!eat(',')) {
          if (!eat('}')) fail("expected ',' or '}'");
          break;
        }
      }
    } else if (c == '(' || c == '[') {
      char close = c == '(' ? ')' : ']';
      ++pos_;
      v.kind = c == '(' ? PyVal::tuple : PyVal::list;
      while (!eat(close)) {
        v.items.push_back(value());
        if (!eat(',')) {
          if (!eat(close)) fail(std::string("expected ',' or '") + close + "'");
          break;
        }
      }
    } else if (word("True")) {
      v.kind = PyVal::boolean;
      v.b = true;
    } else if (word("False")) {
      v.kind = PyVal::boolean;
    } else if (word("None")) {
      v.kind = PyVal::none;
    } else if (std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '+') {
      v.kind = PyVal::integer;
      if (c == '-' || c == '+') {
        v.negative = c == '-';
        ++pos_;
      }
      std::size_t start = pos_;
      while (pos_ < t_.size() && std::isdigit(static_cast<unsigned char>(t_[pos_]))) {
        if (__builtin_mul_overflow(v.i, 10u, &v.i) ||
            __builtin_add_overflow(v.i, std::uint64_t(t_[pos_] - '0'), &v.i))
          fail("an integer overflows 64 bits");
        ++pos_;
      }
      if (pos_ == start) fail("expected a digit");
      if (pos_ < t_.size() && (t_[pos_] == 'L' || t_[pos_] == 'l')) ++pos_;  // Python 2 long
    } else {
      fail(std::string("unexpected character '") + c + "'");
    }
    return v;
  }

  std::string string_lit() {
    char q = t_[pos_++];
    std::string s;
    while (pos_ < t_.size() && t_[pos_] != q) {
      if (t_[pos_] == '\\' && pos_ + 1 < t_.size()) ++pos_;
      s += t_[pos_++];
    }
    if (pos_ >= t_.size()) fail("a string is not closed");
    ++pos_;
    return s;
  }

  const std::string& t_;
  const std::string& name_;
  std::size_t pos_ = 0;
};

std::uint64_t read_le(const unsigned char* p, int n) {
  std::uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

ByteOrder native_order() {
  return __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__ ? ByteOrder::big : ByteOrder::little;
}

}  // namespace

NpyDescr parse_npy_descr(const std::string& descr, const std::string& name) {
  auto unsupported = [&](const std::string& why) {
    return Error(ErrorKind::input, name + " has element type '" + descr + "' (" + why +
                                       "): gtranspose reads i1 u1 b1 i2 u2 f2 i4 u4 f4 i8 u8 f8 c8 c16 and V1..V16");
  };
  NpyDescr d;
  d.descr = descr;
  std::size_t p = 0;
  char order = '|';
  if (!descr.empty() && std::strchr("<>|=", descr[0])) order = descr[p++];
  if (p >= descr.size()) throw unsupported("no type code");
  char kind = descr[p++];
  std::string digits = descr.substr(p);
  if (digits.empty() || digits.size() > 3 || digits.find_first_not_of("0123456789") != std::string::npos)
    throw unsupported("not a plain scalar type");
  std::size_t size = std::stoul(digits);
  struct Known {
    char kind;
    std::size_t size;
    std::optional<DType> dtype;
  };
  static const Known known[] = {
      {'i', 1, DType::i8},   {'u', 1, DType::u8},   {'b', 1, std::nullopt}, {'i', 2, DType::i16},
      {'u', 2, DType::u16},  {'f', 2, DType::f16},  {'i', 4, DType::i32},   {'u', 4, DType::u32},
      {'f', 4, DType::f32},  {'i', 8, DType::i64},  {'u', 8, DType::u64},   {'f', 8, DType::f64},
      {'c', 8, DType::c64},  {'c', 16, DType::c128}, {'V', 1, std::nullopt}, {'V', 2, std::nullopt},
      {'V', 4, std::nullopt}, {'V', 8, std::nullopt}, {'V', 16, std::nullopt},
  };
  bool found = false;
  for (const auto& k : known)
    if (k.kind == kind && k.size == size) {
      d.dtype = k.dtype;
      found = true;
    }
  if (!found) {
    if (kind == 'V' || kind == 'S' || kind == 'U')
      throw unsupported("an element of " + std::to_string(size) + " bytes; sizes 1, 2, 4, 8 and 16 transpose");
    throw unsupported("not a type gtranspose moves");
  }
  d.elem_size = size;
  if (size == 1 || kind == 'V' || kind == 'b') {
    d.order = ByteOrder::not_applicable;
  } else {
    switch (order) {
      case '<': d.order = ByteOrder::little; break;
      case '>': d.order = ByteOrder::big; break;
      case '=': d.order = native_order(); break;
      default: throw unsupported("a multi-byte number needs byte order '<' or '>'");
    }
  }
  return d;
}

std::string npy_descr_for(DType t, ByteOrder order, const std::string& out_name) {
  const char* code = nullptr;
  switch (t) {
    case DType::i8: code = "i1"; break;
    case DType::u8: code = "u1"; break;
    case DType::i16: code = "i2"; break;
    case DType::u16: code = "u2"; break;
    case DType::f16: code = "f2"; break;
    case DType::i32: code = "i4"; break;
    case DType::u32: code = "u4"; break;
    case DType::f32: code = "f4"; break;
    case DType::i64: code = "i8"; break;
    case DType::u64: code = "u8"; break;
    case DType::f64: code = "f8"; break;
    case DType::c64: code = "c8"; break;
    case DType::c128: code = "c16"; break;
    case DType::bf16:
      throw Error(ErrorKind::output, "NumPy has no bfloat16 type, so " + out_name +
                                         " cannot hold it: write .raw or .h5 instead");
  }
  if (dtype_size(t) == 1) return std::string("|") + code;
  return std::string(order == ByteOrder::big ? ">" : "<") + code;
}

std::string shape_repr(const std::vector<std::uint64_t>& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  if (shape.size() == 1) s += ",";
  return s + ")";
}

NpyPreamble parse_npy_preamble(const unsigned char* head, std::size_t n, std::uint64_t file_size,
                               const std::string& name) {
  if (file_size == 0) throw Error(ErrorKind::input, name + " is empty (0 bytes): it is not a NumPy .npy file");
  const std::size_t cmp = n < 6 ? n : 6;
  if (std::memcmp(head, kMagic, cmp) != 0)
    throw Error(ErrorKind::input, name + " is not a NumPy .npy file (it does not start with \\x93NUMPY): "
                                         "name raw files without .npy, or check the file");
  auto truncated = [&]() {
    return Error(ErrorKind::input, name + " is truncated: its .npy header is incomplete (" +
                                       std::to_string(file_size) + " bytes in the file)");
  };
  if (n < 8) throw truncated();
  NpyPreamble p;
  p.major = head[6];
  p.minor = head[7];
  if (p.major == 1) {
    if (n < 10) throw truncated();
    p.header_len = read_le(head + 8, 2);
    p.header_start = 10;
  } else if (p.major == 2 || p.major == 3) {
    if (n < 12) throw truncated();
    p.header_len = read_le(head + 8, 4);
    p.header_start = 12;
  } else {
    throw Error(ErrorKind::input, name + " has .npy format version " + std::to_string(p.major) + "." +
                                      std::to_string(p.minor) + ": gtranspose reads versions 1.0, 2.0 and 3.0");
  }
  if (p.header_start + p.header_len > file_size)
    throw Error(ErrorKind::input, name + " is truncated: its .npy header claims " + std::to_string(p.header_len) +
                                      " bytes after byte " + std::to_string(p.header_start) + " but the file has " +
                                      std::to_string(file_size) + " bytes");
  return p;
}

NpyHeader parse_npy_dict(const std::string& dict, const std::string& name) {
  PyVal v = DictParser(dict, name).parse();
  if (v.kind != PyVal::dict)
    throw Error(ErrorKind::input, name + " has a malformed .npy header: expected a dict such as "
                                         "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4)}");
  const PyVal* descr = nullptr;
  const PyVal* fortran = nullptr;
  const PyVal* shape = nullptr;
  for (const auto& [k, val] : v.entries) {
    if (k == "descr") descr = &val;
    else if (k == "fortran_order") fortran = &val;
    else if (k == "shape") shape = &val;
    else throw Error(ErrorKind::input, name + " has a malformed .npy header: unknown key '" + k + "'");
  }
  for (auto [ptr, key] : {std::pair{descr, "descr"}, {fortran, "fortran_order"}, {shape, "shape"}})
    if (!ptr) throw Error(ErrorKind::input, name + " has a malformed .npy header: the key '" + key + "' is missing");
  NpyHeader h;
  if (descr->kind == PyVal::list)
    throw Error(ErrorKind::input, name + " holds a structured array (fields in 'descr'): gtranspose needs a plain "
                                         "numeric matrix; save one field at a time, or view it as |V<n>");
  if (descr->kind != PyVal::str)
    throw Error(ErrorKind::input, name + " has a malformed .npy header: 'descr' is not a string");
  if (fortran->kind != PyVal::boolean)
    throw Error(ErrorKind::input, name + " has a malformed .npy header: 'fortran_order' is not True or False");
  if (shape->kind != PyVal::tuple)
    throw Error(ErrorKind::input, name + " has a malformed .npy header: 'shape' is not a tuple");
  for (const auto& it : shape->items) {
    if (it.kind != PyVal::integer || it.negative)
      throw Error(ErrorKind::input, name + " has a malformed .npy header: 'shape' holds something other than "
                                           "non-negative integers");
    h.shape.push_back(it.i);
  }
  h.fortran_order = fortran->b;
  h.descr = parse_npy_descr(descr->s, name);
  return h;
}

std::string make_npy_header(const std::string& descr, std::uint64_t rows, std::uint64_t cols) {
  const std::string first = std::to_string(rows);
  std::string dict = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (" + first + ", " +
                     std::to_string(cols) + "), }";
  dict.append(first.size() < kGrowthDigits ? kGrowthDigits - first.size() : 0, ' ');
  const std::size_t hlen = dict.size() + 1;  // the final '\n'
  auto wrap = [&](int major, std::size_t len_bytes) {
    const std::size_t prefix = 8 + len_bytes;
    const std::size_t pad = kAlign - (prefix + hlen) % kAlign;
    std::string out(reinterpret_cast<const char*>(kMagic), 6);
    out += char(major);
    out += char(0);
    std::uint64_t total = hlen + pad;
    for (std::size_t i = 0; i < len_bytes; ++i) out += char((total >> (8 * i)) & 0xff);
    out += dict;
    out.append(pad, ' ');
    out += '\n';
    return out;
  };
  std::string v1 = wrap(1, 2);
  if (v1.size() - 10 < 65536) return v1;
  return wrap(2, 4);
}

}  // namespace gt::fmt
