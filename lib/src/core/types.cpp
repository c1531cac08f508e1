#include "gtranspose/types.hpp"

#include <array>
#include <cctype>
#include <charconv>

#include "gtranspose/error.hpp"
#include "gtranspose/sizes.hpp"

namespace gt {
namespace {

struct DTypeEntry {
  DType type;
  const char* name;
  std::size_t size;
};
constexpr std::array<DTypeEntry, 14> kDTypes{{
    {DType::i8, "i8", 1},     {DType::u8, "u8", 1},     {DType::i16, "i16", 2}, {DType::u16, "u16", 2},
    {DType::f16, "f16", 2},   {DType::bf16, "bf16", 2}, {DType::i32, "i32", 4}, {DType::u32, "u32", 4},
    {DType::f32, "f32", 4},   {DType::i64, "i64", 8},   {DType::u64, "u64", 8}, {DType::f64, "f64", 8},
    {DType::c64, "c64", 8},   {DType::c128, "c128", 16},
}};

const DTypeEntry& entry(DType t) {
  for (const auto& e : kDTypes)
    if (e.type == t) return e;
  throw Error(ErrorKind::internal, "unknown dtype enumerator");
}

std::uint64_t parse_extent(std::string_view s, std::string_view whole) {
  std::uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || p != s.data() + s.size())
    throw Error(ErrorKind::usage, "invalid shape '" + std::string(whole) + "': expected ROWSxCOLS, e.g. 1000x2000");
  if (v == 0) throw Error(ErrorKind::usage, "invalid shape '" + std::string(whole) + "': extents must be at least 1");
  return v;
}

}  // namespace

std::size_t dtype_size(DType t) { return entry(t).size; }
const char* dtype_name(DType t) { return entry(t).name; }

std::optional<DType> parse_dtype(std::string_view name) {
  std::string lower(name);
  for (auto& c : lower) c = char(std::tolower(static_cast<unsigned char>(c)));
  for (const auto& e : kDTypes)
    if (lower == e.name) return e.type;
  // NumPy-style aliases users type out of habit.
  static const std::array<std::pair<const char*, DType>, 14> aliases{{
      {"int8", DType::i8},       {"uint8", DType::u8},         {"int16", DType::i16},     {"uint16", DType::u16},
      {"float16", DType::f16},   {"bfloat16", DType::bf16},    {"int32", DType::i32},     {"uint32", DType::u32},
      {"float32", DType::f32},   {"int64", DType::i64},        {"uint64", DType::u64},    {"float64", DType::f64},
      {"complex64", DType::c64}, {"complex128", DType::c128},
  }};
  for (const auto& [n, t] : aliases)
    if (lower == n) return t;
  return std::nullopt;
}

std::string dtype_names() {
  std::string s;
  for (const auto& e : kDTypes) {
    if (!s.empty()) s += ' ';
    s += e.name;
  }
  return s;
}

std::uint64_t Shape::elems() const { return checked_mul(rows, cols, "matrix element count"); }

Shape parse_shape(std::string_view text) {
  auto pos = text.find_first_of("xX,");
  if (pos == std::string_view::npos)
    throw Error(ErrorKind::usage, "invalid shape '" + std::string(text) + "': expected ROWSxCOLS, e.g. 1000x2000");
  Shape s{parse_extent(text.substr(0, pos), text), parse_extent(text.substr(pos + 1), text)};
  (void)s.elems();  // overflow check
  return s;
}

std::string to_string(const Shape& s) { return std::to_string(s.rows) + "x" + std::to_string(s.cols); }

std::uint64_t MatrixInfo::bytes() const { return checked_mul(shape.elems(), elem_size, "matrix size in bytes"); }

}  // namespace gt
