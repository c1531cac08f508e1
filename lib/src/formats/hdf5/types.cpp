// HDF5 element types: what a dataset's datatype is to gtranspose
// (classify_type), and the datatype an output gets when its source is not
// HDF5 (type_for, as h5py would write it).
#include <cctype>

#include "formats/hdf5/hdf5_internal.hpp"
#include "gtranspose/sizes.hpp"

namespace gt::fmt::h5 {
namespace {

ByteOrder order_of(hid_t t) {
  switch (H5Tget_order(t)) {
    case H5T_ORDER_LE: return ByteOrder::little;
    case H5T_ORDER_BE: return ByteOrder::big;
    default: return ByteOrder::not_applicable;
  }
}

std::optional<DType> float_dtype(hid_t t, std::size_t size) {
  std::size_t spos, epos, esize, mpos, msize;
  if (H5Tget_fields(t, &spos, &epos, &esize, &mpos, &msize) < 0) return std::nullopt;
  // Half precision is 5+10 bits (IEEE, h5py's float16), bfloat16 is 8+7.
  if (size == 2 && esize == 5 && msize == 10) return DType::f16;
  if (size == 2 && esize == 8 && msize == 7) return DType::bf16;
  if (size == 4 && esize == 8 && msize == 23) return DType::f32;
  if (size == 8 && esize == 11 && msize == 52) return DType::f64;
  return std::nullopt;
}

bool complex_member_name(const char* n, bool real) {
  std::string s(n ? n : "");
  for (auto& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return real ? (s == "r" || s == "re" || s == "real") : (s == "i" || s == "im" || s == "imag");
}

// Two equal IEEE floats named like h5py's {r, i}: a complex number.
std::optional<TypeInfo> complex_info(hid_t t, std::size_t size) {
  if (H5Tget_nmembers(t) != 2) return std::nullopt;
  Hid m0(H5Tget_member_type(t, 0)), m1(H5Tget_member_type(t, 1));
  if (!m0 || !m1 || H5Tget_class(m0.get()) != H5T_FLOAT || H5Tequal(m0.get(), m1.get()) <= 0) return std::nullopt;
  const std::size_t half = H5Tget_size(m0.get());
  if (half * 2 != size || H5Tget_member_offset(t, 0) != 0 || H5Tget_member_offset(t, 1) != half) return std::nullopt;
  char* n0 = H5Tget_member_name(t, 0);
  char* n1 = H5Tget_member_name(t, 1);
  bool names = complex_member_name(n0, true) && complex_member_name(n1, false);
  H5free_memory(n0);
  H5free_memory(n1);
  auto f = float_dtype(m0.get(), half);
  if (!names || !f || (*f != DType::f32 && *f != DType::f64)) return std::nullopt;
  TypeInfo ti;
  ti.size = size;
  ti.dtype = *f == DType::f32 ? DType::c64 : DType::c128;
  ti.order = order_of(m0.get());
  return ti;
}

}  // namespace

std::string class_text(hid_t t) {
  switch (H5Tget_class(t)) {
    case H5T_INTEGER: return "integer";
    case H5T_FLOAT: return "float";
    case H5T_TIME: return "time";
    case H5T_STRING: return H5Tis_variable_str(t) > 0 ? "variable-length string" : "fixed-length string";
    case H5T_BITFIELD: return "bitfield";
    case H5T_OPAQUE: return "opaque";
    case H5T_COMPOUND: return "compound";
    case H5T_REFERENCE: return "reference";
    case H5T_ENUM: return "enum";
    case H5T_VLEN: return "variable-length sequence";
    case H5T_ARRAY: return "array";
    default: return "unknown";
  }
}

TypeInfo classify_type(hid_t t, const std::string& what) {
  const std::size_t size = H5Tget_size(t);
  const H5T_class_t cls = H5Tget_class(t);
  auto unsupported = [&](const std::string& why) {
    return Error(ErrorKind::input, what + " has an unsupported element type (" + why +
                                       "): gtranspose moves fixed-size elements of 1, 2, 4, 8 or 16 bytes");
  };
  if (H5Tis_variable_str(t) > 0 || H5Tdetect_class(t, H5T_VLEN) > 0)
    throw unsupported(class_text(t) + ", or a type holding one");
  if (H5Tdetect_class(t, H5T_REFERENCE) > 0)
    throw unsupported("references point into their own file and cannot be copied as bytes");
  if (!supported_elem_size(size)) throw unsupported(std::to_string(size) + "-byte " + class_text(t));
  TypeInfo ti;
  ti.size = size;
  switch (cls) {
    case H5T_INTEGER: {
      const bool sign = H5Tget_sign(t) == H5T_SGN_2;
      ti.order = size == 1 ? ByteOrder::not_applicable : order_of(t);
      switch (size) {
        case 1: ti.dtype = sign ? DType::i8 : DType::u8; break;
        case 2: ti.dtype = sign ? DType::i16 : DType::u16; break;
        case 4: ti.dtype = sign ? DType::i32 : DType::u32; break;
        case 8: ti.dtype = sign ? DType::i64 : DType::u64; break;
        default: break;
      }
      if (H5Tget_precision(t) != size * 8) ti.dtype.reset();
      return ti;
    }
    case H5T_FLOAT:
      ti.order = order_of(t);
      ti.dtype = float_dtype(t, size);
      return ti;
    case H5T_COMPOUND:
      if (auto c = complex_info(t, size)) return *c;
      return ti;
    default:
      ti.order = size == 1 ? ByteOrder::not_applicable : order_of(t);
      return ti;
  }
}

Hid type_for(const MatrixInfo& info, const std::string& npy_descr) {
  const bool be = info.order == ByteOrder::big;
  auto std_copy = [](hid_t t) { return Hid(H5Tcopy(t)); };
  auto half = [&](std::size_t esize, std::size_t msize, std::size_t ebias) {
    // h5py's float16 recipe: start from IEEE single, shrink the fields, then the size.
    Hid t(H5Tcopy(be ? H5T_IEEE_F32BE : H5T_IEEE_F32LE));
    if (H5Tset_fields(t.get(), 15, msize, esize, 0, msize) < 0 || H5Tset_size(t.get(), 2) < 0 ||
        H5Tset_ebias(t.get(), ebias) < 0)
      fail(ErrorKind::output, "cannot build a 16-bit float HDF5 type");
    return t;
  };
  auto complex = [&](hid_t part, std::size_t n) {
    Hid t(H5Tcreate(H5T_COMPOUND, 2 * n));
    if (H5Tinsert(t.get(), "r", 0, part) < 0 || H5Tinsert(t.get(), "i", n, part) < 0)
      fail(ErrorKind::output, "cannot build a complex HDF5 type");
    return t;
  };
  if (!info.dtype) {
    if (npy_descr.size() >= 2 && npy_descr.compare(npy_descr.size() - 2, 2, "b1") == 0) {
      // NumPy bool as h5py stores it: an int8 enum FALSE=0, TRUE=1.
      Hid t(H5Tenum_create(H5T_NATIVE_INT8));
      signed char f = 0, tr = 1;
      if (H5Tenum_insert(t.get(), "FALSE", &f) < 0 || H5Tenum_insert(t.get(), "TRUE", &tr) < 0)
        fail(ErrorKind::output, "cannot build the boolean HDF5 type");
      return t;
    }
    // Bytes with no numeric meaning (NumPy void): HDF5 opaque, as h5py does.
    return Hid(H5Tcreate(H5T_OPAQUE, info.elem_size));
  }
  switch (*info.dtype) {
    case DType::i8: return std_copy(H5T_STD_I8LE);
    case DType::u8: return std_copy(H5T_STD_U8LE);
    case DType::i16: return std_copy(be ? H5T_STD_I16BE : H5T_STD_I16LE);
    case DType::u16: return std_copy(be ? H5T_STD_U16BE : H5T_STD_U16LE);
    case DType::i32: return std_copy(be ? H5T_STD_I32BE : H5T_STD_I32LE);
    case DType::u32: return std_copy(be ? H5T_STD_U32BE : H5T_STD_U32LE);
    case DType::i64: return std_copy(be ? H5T_STD_I64BE : H5T_STD_I64LE);
    case DType::u64: return std_copy(be ? H5T_STD_U64BE : H5T_STD_U64LE);
    case DType::f32: return std_copy(be ? H5T_IEEE_F32BE : H5T_IEEE_F32LE);
    case DType::f64: return std_copy(be ? H5T_IEEE_F64BE : H5T_IEEE_F64LE);
    case DType::f16: return half(5, 10, 15);
    case DType::bf16: return half(8, 7, 127);
    case DType::c64: return complex(be ? H5T_IEEE_F32BE : H5T_IEEE_F32LE, 4);
    case DType::c128: return complex(be ? H5T_IEEE_F64BE : H5T_IEEE_F64LE, 8);
  }
  throw Error(ErrorKind::internal, "unknown dtype");
}

}  // namespace gt::fmt::h5
