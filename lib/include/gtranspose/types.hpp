// Element types, shapes and matrix descriptions shared by every layer.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gt {

// The element types a user can name with --dtype. A transpose only moves
// bytes, so everything below the CLI works on the element *size*; the type is
// kept to write correct headers (.npy descr, HDF5 datatype).
enum class DType : std::uint8_t { i8, u8, i16, u16, f16, bf16, i32, u32, f32, i64, u64, f64, c64, c128 };

std::size_t dtype_size(DType t);
const char* dtype_name(DType t);
[[nodiscard]] std::optional<DType> parse_dtype(std::string_view name);
// "i8 u8 i16 ..." for help texts and error messages.
std::string dtype_names();

// Element sizes every engine and kernel supports.
inline bool supported_elem_size(std::size_t s) { return s == 1 || s == 2 || s == 4 || s == 8 || s == 16; }

enum class ByteOrder : std::uint8_t { little, big, not_applicable };

struct Shape {
  std::uint64_t rows = 0;
  std::uint64_t cols = 0;
  // Element count; throws gt::Error on overflow of 64 bits.
  std::uint64_t elems() const;
  Shape transposed() const { return {cols, rows}; }
  bool operator==(const Shape& o) const { return rows == o.rows && cols == o.cols; }
  bool operator!=(const Shape& o) const { return !(*this == o); }
};

// "RxC" (also "R,C" and "RXC"); throws gt::Error (usage) on a malformed or zero shape.
[[nodiscard]] Shape parse_shape(std::string_view text);
std::string to_string(const Shape& s);

// What a Source holds, format-neutral. dtype is empty when the file's type
// has no --dtype name (e.g. an HDF5 compound of the right size); the bytes
// still transpose, and formats that need a name say so.
struct MatrixInfo {
  Shape shape;
  std::size_t elem_size = 0;
  std::optional<DType> dtype;
  ByteOrder order = ByteOrder::little;
  std::uint64_t bytes() const;  // rows*cols*elem_size, overflow-checked
};

}  // namespace gt
