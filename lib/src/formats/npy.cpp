#include "formats/npy.hpp"

#include <cstdint>
#include <cstring>
#include <utility>

#include "formats/npy_literal.hpp"
#include "gtranspose/error.hpp"

namespace gt::fmt {
namespace {

using npy::PyVal;
using npy::quoted;

constexpr unsigned char kMagic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
// NumPy leaves room after the dict so the first axis can grow in place
// (numpy/lib/format.py, GROWTH_AXIS_MAX_DIGITS) and aligns data to 64 bytes.
constexpr std::size_t kGrowthDigits = 21;
constexpr std::size_t kAlign = 64;

std::uint64_t read_le(const unsigned char* p, int n) {
  std::uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

Error malformed(const std::string& name, const std::string& why) {
  return Error(ErrorKind::input, name + " has a malformed .npy header: " + why);
}

// The header text for a message: its start, escaped.
std::string shown(const std::string& text, bool utf8) {
  std::string head = text.substr(0, 120);
  if (!utf8) {
    // latin-1: each byte is one character; give its UTF-8 so a terminal shows it.
    std::string u;
    for (unsigned char c : head) {
      if (c < 0x80) u += char(c);
      else u += char(0xc0 | (c >> 6)), u += char(0x80 | (c & 0x3f));
    }
    head = std::move(u);
  }
  return quoted(head) + (text.size() > 120 ? "..." : "");
}

}  // namespace

bool is_npy_magic(const unsigned char* head, std::size_t n) {
  return n >= sizeof kMagic && std::memcmp(head, kMagic, sizeof kMagic) == 0;
}

NpyDescr npy_element(const NpyHeader& h, const std::string& name) {
  const NpyType& t = h.type;
  auto refuse = [&](const std::string& what) {
    return Error(ErrorKind::input, name + " has element type " + h.descr_shown + " (" + what +
                                       "): gtranspose moves elements of 1, 2, 4, 8 or 16 bytes: numbers, bool, "
                                       "void, bytes and str, datetime64 and timedelta64");
  };
  if (t.kind == 0)
    throw Error(ErrorKind::input, name + " holds a structured array or a subarray (its 'descr' is " + h.descr_shown +
                                      "): gtranspose needs one plain element type; save one field at a time, or "
                                      "view it as |V<n>");
  if (t.kind == 'O') throw refuse("Python objects, stored pickled");
  const std::string bytes = std::to_string(t.itemsize) + " byte" + (t.itemsize == 1 ? "" : "s") + " per element";
  if (!supported_elem_size(std::size_t(t.itemsize) * (t.itemsize > 0)))
    throw refuse(t.kind == 'U' ? bytes + ", " + std::to_string(t.itemsize / 4) + " characters of 4 bytes" : bytes);
  NpyDescr d;
  d.descr = t.str;
  d.elem_size = std::size_t(t.itemsize);
  d.order = t.order;
  static const struct {
    char kind;
    std::int64_t size;
    DType dtype;
  } kTypes[] = {{'i', 1, DType::i8},  {'u', 1, DType::u8},  {'i', 2, DType::i16}, {'u', 2, DType::u16},
                {'f', 2, DType::f16}, {'i', 4, DType::i32}, {'u', 4, DType::u32}, {'f', 4, DType::f32},
                {'i', 8, DType::i64}, {'u', 8, DType::u64}, {'f', 8, DType::f64}, {'c', 8, DType::c64},
                {'c', 16, DType::c128}};
  for (const auto& k : kTypes)
    if (k.kind == t.kind && k.size == t.itemsize) d.dtype = k.dtype;
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
  // numpy/lib/format.py, _check_version: exactly these three.
  if (p.minor != 0 || p.major < 1 || p.major > 3)
    throw Error(ErrorKind::input, name + " has .npy format version " + std::to_string(p.major) + "." +
                                      std::to_string(p.minor) + ": NumPy reads versions 1.0, 2.0 and 3.0 only");
  const int len_bytes = p.major == 1 ? 2 : 4;
  if (n < std::size_t(8 + len_bytes)) throw truncated();
  p.header_len = read_le(head + 8, len_bytes);
  p.header_start = std::uint64_t(8 + len_bytes);
  if (p.header_start + p.header_len > file_size)
    throw Error(ErrorKind::input, name + " is truncated: its .npy header claims " + std::to_string(p.header_len) +
                                      " bytes after byte " + std::to_string(p.header_start) + " but the file has " +
                                      std::to_string(file_size) + " bytes");
  return p;
}

NpyHeader parse_npy_dict(const std::string& text, int major, const std::string& name) {
  const npy::LiteralDialect dialect{major == 3, major < 3};
  PyVal v;
  std::string why;
  if (!npy::parse_literal(text, dialect, &v, &why))
    throw malformed(name, "it is not a Python literal (" + why + "): " + shown(text, dialect.utf8));
  if (v.kind != PyVal::dict)
    throw malformed(name, "expected a dict such as {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4)}, "
                          "found " + v.repr());
  // A dict literal keeps the last of equal keys, as Python's does.
  const PyVal* descr = nullptr;
  const PyVal* fortran = nullptr;
  const PyVal* shape = nullptr;
  std::string others;
  for (std::size_t i = 0; i + 1 < v.items.size(); i += 2) {
    const PyVal& k = v.items[i];
    const PyVal* val = &v.items[i + 1];
    if (k.kind == PyVal::str && k.s == "descr") descr = val;
    else if (k.kind == PyVal::str && k.s == "fortran_order") fortran = val;
    else if (k.kind == PyVal::str && k.s == "shape") shape = val;
    else others += (others.empty() ? "" : ", ") + k.repr();
  }
  if (!others.empty()) throw malformed(name, "unknown keys " + others + " (NumPy allows 'descr', 'fortran_order' and 'shape')");
  for (auto [ptr, key] : {std::pair{descr, "descr"}, {fortran, "fortran_order"}, {shape, "shape"}})
    if (!ptr) throw malformed(name, std::string("the key '") + key + "' is missing");
  NpyHeader h;
  if (shape->kind != PyVal::tuple) throw malformed(name, "'shape' is " + shape->repr() + ", not a tuple");
  for (const auto& it : shape->items) {
    // bool is an int to Python (and to NumPy's check); one that does not
    // fit a C long fails in NumPy when the array is made.
    if (it.kind == PyVal::boolean) {
      h.shape.push_back(it.b ? 1 : 0);
      continue;
    }
    if (it.kind != PyVal::integer)
      throw malformed(name, "'shape' holds " + it.repr() + ", not only integers");
    if (it.negative || it.big || it.magnitude > std::uint64_t(INT64_MAX))
      throw malformed(name, "'shape' holds " + it.repr() + ", which is not a size NumPy takes");
    h.shape.push_back(it.magnitude);
  }
  if (fortran->kind != PyVal::boolean)
    throw malformed(name, "'fortran_order' is " + fortran->repr() + ", not True or False");
  h.fortran_order = fortran->b;
  if (descr->kind == PyVal::str) {
    h.descr_shown = quoted(descr->s);
    if (!resolve_npy_dtype(descr->s, &h.type))
      throw malformed(name, "'descr' is " + quoted(descr->s) + ", which is not a NumPy data type");
  } else if (descr->kind == PyVal::list || descr->kind == PyVal::tuple || descr->kind == PyVal::dict) {
    h.descr_shown = descr->kind == PyVal::list ? "a list of fields" : descr->kind == PyVal::tuple ? "a tuple" : "a dict";
    h.type.kind = 0;  // structured or a subarray: NumPy may take it, gtranspose moves neither
  } else {
    throw malformed(name, "'descr' is " + descr->repr() + ", not a data type");
  }
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
