// HDF5 datasets through the HDF5 C library (1.10 serial, thread-safe build).
//
// Data of a contiguous, unfiltered dataset lies as one row-major run in the
// file: it moves with pread/pwrite at H5Dget_offset(), outside HDF5's global
// lock, so several reader and writer threads overlap. Chunked and compressed
// datasets go through H5Dread/H5Dwrite with hyperslabs, one thread at a time.
//
// The output of a chunked input is chunked too, with the transposed chunk
// shape and the input's filters (gzip, shuffle, ...): the planner cuts tiles
// in whole input chunks, so each output tile covers whole output chunks and
// HDF5 compresses each once, never reading one back. Every other output is
// contiguous and written by pwrite.
#include <hdf5.h>

#include <exception>
#include <utility>
#include <unistd.h>

#include <fcntl.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <vector>

#include "formats/internal.hpp"
#include "formats/npy.hpp"
#include "formats/plain_io.hpp"
#include "gtranspose/error.hpp"
#include "gtranspose/sizes.hpp"
#include "gtranspose/tempfile.hpp"

namespace gt::fmt {
namespace {

// HDF5 keeps its error stack and auto-print setting per thread: silence it
// in every thread that calls in, and turn failures into gt::Error ourselves.
void quiet() {
  thread_local bool done = false;
  if (!done) {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    done = true;
  }
}

herr_t collect_error(unsigned, const H5E_error2_t* e, void* data) {
  auto* out = static_cast<std::string*>(data);
  if (e->desc && *e->desc) *out = e->desc;
  else if (char* msg = H5Eget_minor(e->min_num)) {
    *out = msg;
    H5free_memory(msg);
  }
  return 0;
}

// The innermost (most specific) message on this thread's error stack, which
// for I/O carries the OS reason ("... errno = 28, error message = 'No space left on device'").
std::string h5_reason() {
  std::string r;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, collect_error, &r);
  H5Eclear2(H5E_DEFAULT);
  return r.empty() ? "HDF5 gave no reason" : r;
}

[[noreturn]] void fail(ErrorKind kind, const std::string& what) { throw Error(kind, what + ": " + h5_reason()); }

// One owned HDF5 identifier of any kind (file, dataset, space, type, plist, attribute).
class Hid {
 public:
  Hid() = default;
  explicit Hid(hid_t id) : id_(id) {}
  ~Hid() { reset(); }
  Hid(Hid&& o) noexcept : id_(o.id_) { o.id_ = H5I_INVALID_HID; }
  Hid& operator=(Hid&& o) noexcept {
    if (this != &o) {
      reset();
      id_ = o.id_;
      o.id_ = H5I_INVALID_HID;
    }
    return *this;
  }
  Hid(const Hid&) = delete;
  Hid& operator=(const Hid&) = delete;
  hid_t get() const { return id_; }
  explicit operator bool() const { return id_ >= 0; }
  // Closes now and reports whether HDF5 managed (a file close writes metadata).
  bool close() {
    if (id_ < 0) return true;
    quiet();
    hid_t id = id_;
    id_ = H5I_INVALID_HID;
    return H5Idec_ref(id) >= 0;
  }
  // Quiet first: an object may be released by a thread that never called HDF5.
  void reset() {
    if (id_ >= 0) {
      quiet();
      H5Idec_ref(id_);
    }
    id_ = H5I_INVALID_HID;
  }

 private:
  hid_t id_ = H5I_INVALID_HID;
};

Hid check(hid_t id, ErrorKind kind, const std::string& what) {
  if (id < 0) fail(kind, what);
  return Hid(id);
}

// --- element types -----------------------------------------------------------

struct TypeInfo {
  std::size_t size = 0;
  std::optional<DType> dtype;
  ByteOrder order = ByteOrder::not_applicable;
};

ByteOrder order_of(hid_t t) {
  switch (H5Tget_order(t)) {
    case H5T_ORDER_LE: return ByteOrder::little;
    case H5T_ORDER_BE: return ByteOrder::big;
    default: return ByteOrder::not_applicable;
  }
}

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

// The datatype h5py would create for a non-HDF5 source's element type.
Hid type_for(const MatrixInfo& info, const std::optional<std::string>& npy_descr) {
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
    if (npy_descr && npy_descr->size() >= 2 && npy_descr->compare(npy_descr->size() - 2, 2, "b1") == 0) {
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

// --- finding the dataset -------------------------------------------------------

struct Candidate {
  std::string path;
  int rank = 0;
};

// HDF5 calls its iteration callbacks from C with its global lock held: an
// exception unwinding through H5Lvisit/H5Aiterate2 would leave that lock
// taken (every later HDF5 call in the process then blocks). So a callback
// catches everything, parks it here, stops the iteration, and the caller
// rethrows once HDF5 has returned.
struct CallbackError {
  std::exception_ptr error;
  void rethrow() {
    if (error) std::rethrow_exception(std::exchange(error, nullptr));
  }
};

template <class F>
herr_t guarded(CallbackError& e, F&& body) noexcept {
  try {
    return body();
  } catch (...) {
    e.error = std::current_exception();
    return -1;
  }
}

struct Visit {
  std::vector<Candidate> found;
  CallbackError err;
};

herr_t visit_link(hid_t group, const char* name, const H5L_info_t* info, void* data) {
  auto* v = static_cast<Visit*>(data);
  return guarded(v->err, [&]() -> herr_t {
    if (info->type != H5L_TYPE_HARD) return 0;
    Hid obj(H5Oopen(group, name, H5P_DEFAULT));
    if (!obj || H5Iget_type(obj.get()) != H5I_DATASET) return 0;
    Hid space(H5Dget_space(obj.get()));
    v->found.push_back({std::string("/") + name, space ? H5Sget_simple_extent_ndims(space.get()) : -1});
    return 0;
  });
}

std::vector<Candidate> all_datasets(hid_t file) {
  Visit v;
  H5Lvisit(file, H5_INDEX_NAME, H5_ITER_INC, visit_link, &v);
  H5Eclear2(H5E_DEFAULT);
  v.err.rethrow();
  return std::move(v.found);
}

std::string list_of(const std::vector<std::string>& names) {
  constexpr std::size_t kShown = 8;
  std::string s;
  for (std::size_t i = 0; i < names.size() && i < kShown; ++i) s += (i ? ", " : "") + names[i];
  if (names.size() > kShown) s += ", ... (" + std::to_string(names.size() - kShown) + " more)";
  return s;
}

std::vector<std::string> two_d(const std::vector<Candidate>& all) {
  std::vector<std::string> r;
  for (const auto& c : all)
    if (c.rank == 2) r.push_back(c.path);
  return r;
}

// Opens the named dataset, or the file's only 2-D one; `loc.dataset` gets the resolved path.
Hid open_dataset(hid_t file, Location& loc) {
  if (loc.dataset.empty()) {
    auto all = all_datasets(file);
    auto names = two_d(all);
    if (names.size() == 1) {
      loc.dataset = names[0];
    } else if (names.empty()) {
      std::string others;
      for (const auto& c : all) others += (others.empty() ? "" : ", ") + c.path + " " + std::to_string(c.rank) + "-D";
      throw Error(ErrorKind::input, loc.path + " holds no 2-D dataset" +
                                        (others.empty() ? std::string(" (it holds no dataset at all)")
                                                        : " (found " + others + ")") +
                                        ": gtranspose needs a 2-D matrix");
    } else {
      throw Error(ErrorKind::input, loc.path + " holds " + std::to_string(names.size()) + " 2-D datasets (" +
                                        list_of(names) + "): name one as " + loc.path + ":" + names[0]);
    }
  }
  hid_t obj = H5Oopen(file, loc.dataset.c_str(), H5P_DEFAULT);
  if (obj < 0) {
    H5Eclear2(H5E_DEFAULT);
    auto names = two_d(all_datasets(file));
    throw Error(ErrorKind::input, loc.path + " has no dataset " + loc.dataset +
                                      (names.empty() ? std::string("; it holds no 2-D dataset")
                                                     : "; its 2-D datasets: " + list_of(names) + " (name one as " +
                                                           loc.path + ":" + names[0] + ")"));
  }
  Hid o(obj);
  if (H5Iget_type(obj) != H5I_DATASET) {
    auto names = two_d(all_datasets(file));
    throw Error(ErrorKind::input, loc.dataset + " in " + loc.path + " is a group, not a dataset" +
                                      (names.empty() ? std::string() : "; its 2-D datasets: " + list_of(names)));
  }
  return o;
}

hid_t strong_close_fapl() {
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  // Closing the file closes every object still open in it, so a sink's temp file is really released.
  H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG);
  return fapl;
}

// The output's file access: as above, plus the 1.8 object format (readable by
// every HDF5 since 2008, h5py included), which stores attributes larger than
// 64 KiB densely; the earliest format cannot hold them at all.
hid_t output_fapl() {
  hid_t fapl = strong_close_fapl();
  H5Pset_libver_bounds(fapl, H5F_LIBVER_V18, H5F_LIBVER_LATEST);
  return fapl;
}

// A chunk cache that holds one chunk of `chunk_bytes` and never more.
// The preemption weight must stay below 1: at 1.0, HDF5 (1.10,
// H5D__chunk_cache_prune) preempts only chunks read or written whole and
// lets partly read or written ones pile up past the cache's size, without
// bound (measured: tiles narrower than the chunks kept a whole band of
// chunks resident, 75 where the cache was sized for one). Below 1, the one
// cached chunk gives way to the next, whatever its state.
Hid one_chunk_cache(std::uint64_t chunk_bytes) {
  Hid dapl(H5Pcreate(H5P_DATASET_ACCESS));
  H5Pset_chunk_cache(dapl.get(), 521, std::size_t(chunk_bytes), 0.75);
  return dapl;
}

// --- an open dataset, shared by Source and InplaceMatrix -----------------------

struct Dataset {
  Location loc;
  Hid file, dset, type;
  MatrixInfo info;
  Shape chunk{0, 0};
  std::uint64_t reserved = 0;  // chunk cache (+ one compressed chunk) held by HDF5 while reading
  bool filtered = false;       // compressed or otherwise filtered chunks
  Fd fd;  // set when the data can move by positioned I/O
  PlainMatrix plain;
  std::string type_desc;

  std::string what() const { return "dataset " + loc.dataset + " in " + loc.path; }

  void open(const Location& l, const OpenOptions& opts, bool writable) {
    quiet();
    loc = l;
    // Our own open first: it names the OS reason (missing, permission, folder).
    open_existing(loc.path, writable, loc.path);
    htri_t is = H5Fis_hdf5(loc.path.c_str());
    if (is <= 0) {
      H5Eclear2(H5E_DEFAULT);
      throw Error(ErrorKind::input, loc.path + " is not an HDF5 file: check the file, or name raw data without .h5");
    }
    Hid fapl(strong_close_fapl());
    file = check(H5Fopen(loc.path.c_str(), writable ? H5F_ACC_RDWR : H5F_ACC_RDONLY, fapl.get()), ErrorKind::input,
                 "cannot open " + loc.path + " as HDF5");
    dset = open_dataset(file.get(), loc);
    Hid space = check(H5Dget_space(dset.get()), ErrorKind::input, "cannot read the shape of " + what());
    int rank = H5Sget_simple_extent_ndims(space.get());
    if (rank < 0) fail(ErrorKind::input, "cannot read the shape of " + what());
    std::vector<hsize_t> dims(std::size_t(rank) + 1);
    H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
    dims.resize(std::size_t(rank));
    type = check(H5Dget_type(dset.get()), ErrorKind::input, "cannot read the element type of " + what());
    TypeInfo ti = classify_type(type.get(), what());
    check_matrix_shape(std::vector<std::uint64_t>(dims.begin(), dims.end()), ti.size, what());
    info.shape = {dims[0], dims[1]};
    info.elem_size = ti.size;
    info.dtype = ti.dtype;
    info.order = ti.order;
    type_desc = type_text(info, std::to_string(ti.size) + "-byte " + class_text(type.get()));
    check_against_options(info, opts, what(), type_desc);

    Hid dcpl = check(H5Dget_create_plist(dset.get()), ErrorKind::input, "cannot read the layout of " + what());
    const H5D_layout_t layout = H5Pget_layout(dcpl.get());
    filtered = H5Pget_nfilters(dcpl.get()) > 0;
    if (layout == H5D_CHUNKED) {
      hsize_t cd[2] = {0, 0};
      if (H5Pget_chunk(dcpl.get(), 2, cd) == 2) chunk = {cd[0], cd[1]};
      // A cache of exactly one chunk: consecutive tiles inside one chunk
      // then reuse it instead of decompressing it once per tile (HDF5's
      // default cache is 1 MiB, smaller than most chunks). Its memory and the
      // compressed copy read beside it count against --host-mem.
      std::uint64_t chunk_bytes = 0;
      if (chunk.rows && !__builtin_mul_overflow(chunk.rows * chunk.cols, info.elem_size, &chunk_bytes)) {
        Hid dapl = one_chunk_cache(chunk_bytes);
        // Closed first: HDF5 shares one cache among the open handles of a
        // dataset, sized by the first open, so a reopen beside it would keep
        // the default 1 MiB cache and ignore this one.
        dset.reset();
        dset = check(H5Dopen2(file.get(), loc.dataset.c_str(), dapl.get()), ErrorKind::input,
                     "cannot open " + what() + " with a chunk cache");
        reserved = chunk_bytes * (H5Pget_nfilters(dcpl.get()) > 0 ? 2 : 1);
      }
    }
    if (layout == H5D_CONTIGUOUS && H5Pget_external_count(dcpl.get()) == 0 && H5Pget_nfilters(dcpl.get()) == 0) {
      haddr_t off = H5Dget_offset(dset.get());
      if (off != HADDR_UNDEF && H5Dget_storage_size(dset.get()) == info.bytes()) use_plain(off, writable);
    }
    H5Eclear2(H5E_DEFAULT);
  }

  void use_plain(std::uint64_t off, bool writable) {
    fd = open_existing(loc.path, writable, loc.path);
    plain.fd = fd.get();
    plain.data_offset = off;
    plain.logical = info.shape;
    plain.elem_size = info.elem_size;
    plain.name = loc.path;
  }

  void io(bool write, std::uint64_t r0, std::uint64_t c0, std::uint64_t h, std::uint64_t w, void* buf,
          std::uint64_t ld) {
    if (fd) return write ? plain.write(r0, c0, h, w, buf, ld) : plain.read(r0, c0, h, w, buf, ld);
    check_rect(info.shape, r0, c0, h, w, ld, loc.path);
    if (h == 0 || w == 0) return;
    hyperslab_io(dset.get(), type.get(), write, r0, c0, h, w, buf, ld, what());
  }

  static void hyperslab_io(hid_t dset, hid_t type, bool write, std::uint64_t r0, std::uint64_t c0, std::uint64_t h,
                           std::uint64_t w, void* buf, std::uint64_t ld, const std::string& what) {
#ifndef H5_HAVE_THREADSAFE
    // Engines read a source and write a sink from different threads; a
    // library built without its own global lock gets ours.
    static std::mutex h5_mutex;
    std::lock_guard<std::mutex> lock(h5_mutex);
#endif
    quiet();
    const ErrorKind kind = ErrorKind::io;
    Hid fspace = check(H5Dget_space(dset), kind, "cannot select in " + what);
    hsize_t start[2] = {r0, c0}, count[2] = {h, w}, zero[2] = {0, 0}, mdims[2] = {h, ld};
    if (H5Sselect_hyperslab(fspace.get(), H5S_SELECT_SET, start, nullptr, count, nullptr) < 0)
      fail(kind, "cannot select rows " + std::to_string(r0) + "+" + std::to_string(h) + " of " + what);
    // The memory side is h x ld with an h x w window, so the leading dimension is honoured.
    Hid mspace = check(H5Screate_simple(2, mdims, nullptr), kind, "cannot describe a buffer for " + what);
    if (H5Sselect_hyperslab(mspace.get(), H5S_SELECT_SET, zero, nullptr, count, nullptr) < 0)
      fail(kind, "cannot describe a buffer for " + what);
    // The file's own type as the memory type: the bytes move unconverted.
    herr_t rc = write ? H5Dwrite(dset, type, mspace.get(), fspace.get(), H5P_DEFAULT, buf)
                      : H5Dread(dset, type, mspace.get(), fspace.get(), H5P_DEFAULT, buf);
    if (rc < 0) fail(kind, std::string(write ? "cannot write " : "cannot read ") + what);
  }

  void flush() {
    quiet();
    if (H5Fflush(file.get(), H5F_SCOPE_GLOBAL) < 0) fail(ErrorKind::io, "cannot flush " + loc.path);
    // fsync works on the file, whichever descriptor names it.
    Fd f = fd ? Fd() : open_existing(loc.path, false, loc.path);
    sync_file(fd ? fd.get() : f.get(), loc.path, true);
  }
};

class Hdf5Source final : public Source {
 public:
  Hdf5Source(const Location& loc, const OpenOptions& opts) { d_.open(loc, opts, false); }
  const MatrixInfo& info() const override { return d_.info; }
  const Location& location() const override { return d_.loc; }
  void read(std::uint64_t r0, std::uint64_t c0, std::uint64_t h, std::uint64_t w, void* dst,
            std::uint64_t ld) override {
    d_.io(false, r0, c0, h, w, dst, ld);
  }
  Shape preferred_block() const override { return d_.chunk; }
  std::uint64_t reserved_bytes() const override { return d_.reserved; }
  // Only the pread path never enters HDF5 (whose global lock serialises
  // every call, and whose library is not thread-safe without it).
  bool concurrent_reads() const override { return bool(d_.fd); }
  std::string describe() const override {
    return "HDF5 dataset " + d_.loc.dataset + " (" + d_.type_desc + ", " + to_string(d_.info.shape) + ") in " +
           d_.loc.path;
  }
  hid_t dataset() const { return d_.dset.get(); }
  hid_t type() const { return d_.type.get(); }

 private:
  Dataset d_;
};

class Hdf5Inplace final : public InplaceMatrix {
 public:
  Hdf5Inplace(const Location& loc, const OpenOptions& opts) {
    d_.open(loc, opts, true);
    require_square(d_.info, d_.what());
    // HDF5 stores a rewritten compressed chunk elsewhere and may reuse its
    // old space before the chunk index that points there is on disk, so no
    // journal can make an interrupted in-place run recoverable.
    if (d_.filtered)
      throw Error(ErrorKind::input, d_.what() + " is compressed (filtered): it cannot be transposed in place safely; "
                                                "transpose it out of place (gtranspose IN.h5 OUT.h5)");
  }
  const MatrixInfo& info() const override { return d_.info; }
  const Location& location() const override { return d_.loc; }
  void read(std::uint64_t r0, std::uint64_t c0, std::uint64_t h, std::uint64_t w, void* dst,
            std::uint64_t ld) override {
    d_.io(false, r0, c0, h, w, dst, ld);
  }
  void write(std::uint64_t r0, std::uint64_t c0, std::uint64_t h, std::uint64_t w, const void* src,
             std::uint64_t ld) override {
    d_.io(true, r0, c0, h, w, const_cast<void*>(src), ld);
  }
  void flush() override { d_.flush(); }
  // Contiguous data moves by pwrite: its rows can go to disk early.
  void start_writeback(std::uint64_t r0, std::uint64_t h) override {
    if (d_.fd) d_.plain.start_writeback(r0, h);
  }
  std::uint64_t reserved_bytes() const override { return d_.reserved; }
  bool concurrent_io() const override { return bool(d_.fd); }  // pread/pwrite only, never HDF5
  std::string describe() const override {
    return "HDF5 dataset " + d_.loc.dataset + " (" + d_.type_desc + ", " + to_string(d_.info.shape) + ") in " +
           d_.loc.path + ", in place";
  }

 private:
  Dataset d_;
};

// --- attributes ---------------------------------------------------------------

struct AttrCopy {
  hid_t dst;
  std::string what;
  CallbackError err;
};

herr_t copy_one_attribute(hid_t src, const char* name, AttrCopy* ctx) {
  Hid a = check(H5Aopen(src, name, H5P_DEFAULT), ErrorKind::output, std::string("cannot open attribute ") + name);
  Hid t = check(H5Aget_type(a.get()), ErrorKind::output, std::string("cannot read the type of attribute ") + name);
  // Object references (dimension-scale lists) point into the source file;
  // copied as bytes they would point at garbage in the new one.
  if (H5Tdetect_class(t.get(), H5T_REFERENCE) > 0) return 0;
  Hid tc(H5Tcopy(t.get()));  // a transient copy: a committed type of the source file cannot cross files
  Hid s = check(H5Aget_space(a.get()), ErrorKind::output, std::string("cannot read the shape of attribute ") + name);
  hssize_t n = H5Sget_select_npoints(s.get());
  std::vector<unsigned char> buf(std::max<std::size_t>(1, std::size_t(n < 0 ? 0 : n) * H5Tget_size(tc.get())));
  if (n > 0 && H5Aread(a.get(), tc.get(), buf.data()) < 0)
    fail(ErrorKind::output, std::string("cannot read attribute ") + name + " of the source");
  Hid out = check(H5Acreate2(ctx->dst, name, tc.get(), s.get(), H5P_DEFAULT, H5P_DEFAULT), ErrorKind::output,
                  std::string("cannot create attribute ") + name + " in " + ctx->what);
  herr_t rc = n > 0 ? H5Awrite(out.get(), tc.get(), buf.data()) : 0;
  const bool vlen = H5Tdetect_class(tc.get(), H5T_VLEN) > 0 || H5Tis_variable_str(tc.get()) > 0;
  if (n > 0 && vlen) H5Dvlen_reclaim(tc.get(), s.get(), H5P_DEFAULT, buf.data());
  if (rc < 0) fail(ErrorKind::output, std::string("cannot write attribute ") + name + " in " + ctx->what);
  return 0;
}

herr_t copy_attribute(hid_t src, const char* name, const H5A_info_t*, void* data) {
  auto* ctx = static_cast<AttrCopy*>(data);
  return guarded(ctx->err, [&] { return copy_one_attribute(src, name, ctx); });
}

// --- the output's layout --------------------------------------------------------

// A chunked layout for the output, or (dcpl empty) contiguous with `note`
// saying why a chunked input could not keep its chunks.
struct OutputLayout {
  Hid dcpl;
  Shape chunk{0, 0};
  int nfilters = 0;
  std::string filters;  // "shuffle+deflate"
  std::string note;
};

std::string filter_name(H5Z_filter_t id, const char* name) {
  if (name && *name) return name;
  return "filter " + std::to_string(id);
}

// The layout of the transpose of dataset `src`: chunked when `src` is, with
// the transposed chunk shape (rb x cb in, cb x rb out) and the same filter
// pipeline. A filter this HDF5 cannot encode with (a decode-only szip, a
// plugin that is not installed) leaves the output contiguous, and says so.
OutputLayout chunked_layout(hid_t src) {
  OutputLayout out;
  Hid in(H5Dget_create_plist(src));
  hsize_t cd[2] = {0, 0};
  if (!in || H5Pget_layout(in.get()) != H5D_CHUNKED || H5Pget_chunk(in.get(), 2, cd) != 2) {
    H5Eclear2(H5E_DEFAULT);
    return out;
  }
  auto contiguous = [&](const std::string& why) {
    H5Eclear2(H5E_DEFAULT);
    out.note = "contiguous: " + why;
    return std::move(out);
  };
  const hsize_t tc[2] = {cd[1], cd[0]};
  Hid dcpl(H5Pcreate(H5P_DATASET_CREATE));
  if (!dcpl || H5Pset_chunk(dcpl.get(), 2, tc) < 0)
    return contiguous("HDF5 refused the chunk shape " + std::to_string(tc[0]) + "x" + std::to_string(tc[1]));
  const int n = H5Pget_nfilters(in.get());
  for (int i = 0; i < n; ++i) {
    unsigned flags = 0, config = 0;
    std::vector<unsigned> values(16);
    std::size_t nv = values.size();
    char name[256] = {};
    H5Z_filter_t id = H5Pget_filter2(in.get(), unsigned(i), &flags, &nv, values.data(), sizeof name, name, &config);
    if (id >= 0 && nv > values.size()) {
      values.resize(nv);
      id = H5Pget_filter2(in.get(), unsigned(i), &flags, &nv, values.data(), sizeof name, name, &config);
    }
    if (id < 0) return contiguous("cannot read filter " + std::to_string(i) + " of the input");
    const std::string fname = filter_name(id, name);
    unsigned info = 0;
    if (H5Zfilter_avail(id) <= 0 || H5Zget_filter_info(id, &info) < 0 || !(info & H5Z_FILTER_CONFIG_ENCODE_ENABLED))
      return contiguous("the input's filter '" + fname + "' (" + std::to_string(id) + ") cannot encode here");
    if (H5Pset_filter(dcpl.get(), id, flags & H5Z_FLAG_DEFMASK, nv, values.data()) < 0)
      return contiguous("HDF5 refused the input's filter '" + fname + "' (" + std::to_string(id) + ")");
    out.filters += (out.filters.empty() ? "" : "+") + fname;
  }
  out.dcpl = std::move(dcpl);
  out.chunk = {tc[0], tc[1]};
  out.nfilters = n;
  return out;
}

// --- the sink -------------------------------------------------------------------

const std::string& checked_output(const Location& loc, const SinkOptions& opts) {
  check_output_path(loc.path, opts.force);
  return loc.path;
}

class Hdf5Sink final : public Sink {
 public:
  Hdf5Sink(const Location& loc, const Source& src, const SinkOptions& opts)
      : loc_(loc), tmp_(checked_output(loc, opts)) {
    quiet();
    info_ = src.info();
    info_.shape = src.info().shape.transposed();
    const auto* h5 = dynamic_cast<const Hdf5Source*>(&src);
    if (loc_.dataset.empty()) loc_.dataset = h5 ? h5->location().dataset : "/data";
    // Create the file ourselves first so an unwritable folder reports the OS reason.
    create_output_file(tmp_.path(), loc_.path);
    Hid fapl(output_fapl());
    file_ = check(H5Fcreate(tmp_.path().c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()), ErrorKind::output,
                  "cannot create " + loc_.path + " as HDF5");
    Hid type = h5 ? Hid(H5Tcopy(h5->type())) : type_for(info_, npy_descr_of(src));
    if (!type) fail(ErrorKind::output, "cannot create the element type of " + loc_.path);
    if (H5Tget_size(type.get()) != info_.elem_size)
      throw Error(ErrorKind::internal, "HDF5 type size differs from the element size for " + loc_.path);
    hsize_t dims[2] = {info_.shape.rows, info_.shape.cols};
    Hid space = check(H5Screate_simple(2, dims, nullptr), ErrorKind::output, "cannot describe " + loc_.path);
    Hid lcpl(H5Pcreate(H5P_LINK_CREATE));
    H5Pset_create_intermediate_group(lcpl.get(), 1);
    if (h5) layout_ = chunked_layout(h5->dataset());
    if (layout_.dcpl) {
      // Chunks are allocated as they are written (early allocation would
      // compress and store a chunk of fill values for every chunk first).
      // A cache of one chunk, as the source has: the chunk a tile is writing
      // stays whole in memory until the tile moves on, then is compressed
      // and stored once. Tiles of whole chunks never read one back.
      const std::uint64_t chunk_bytes = layout_.chunk.rows * layout_.chunk.cols * info_.elem_size;
      Hid dapl = one_chunk_cache(chunk_bytes);
      dset_ = Hid(H5Dcreate2(file_.get(), loc_.dataset.c_str(), type.get(), space.get(), lcpl.get(),
                             layout_.dcpl.get(), dapl.get()));
      if (dset_) {
        reserved_ = chunk_bytes * (layout_.nfilters > 0 ? 2 : 1);
      } else {
        layout_.note = "contiguous: HDF5 could not create it chunked " + to_string(layout_.chunk) +
                       (layout_.filters.empty() ? "" : " with " + layout_.filters) + " (" + h5_reason() + ")";
        layout_.dcpl.reset();
        layout_.chunk = {0, 0};
        layout_.filters.clear();
        layout_.nfilters = 0;
      }
    }
    if (!dset_) {
      Hid dcpl(H5Pcreate(H5P_DATASET_CREATE));
      H5Pset_layout(dcpl.get(), H5D_CONTIGUOUS);
      // Allocate now, never write fill values: every element gets written by us.
      H5Pset_alloc_time(dcpl.get(), H5D_ALLOC_TIME_EARLY);
      H5Pset_fill_time(dcpl.get(), H5D_FILL_TIME_NEVER);
      dset_ = check(H5Dcreate2(file_.get(), loc_.dataset.c_str(), type.get(), space.get(), lcpl.get(), dcpl.get(),
                               H5P_DEFAULT),
                    ErrorKind::output, "cannot create dataset " + loc_.dataset + " in " + loc_.path);
    }
    type_ = std::move(type);
    if (h5) {
      AttrCopy ctx{dset_.get(), what(), {}};
      hsize_t idx = 0;
      const herr_t rc = H5Aiterate2(h5->dataset(), H5_INDEX_NAME, H5_ITER_INC, &idx, copy_attribute, &ctx);
      ctx.err.rethrow();
      if (rc < 0) fail(ErrorKind::output, "cannot copy the attributes of " + src.describe());
    }
    const haddr_t off = layout_.dcpl ? HADDR_UNDEF : H5Dget_offset(dset_.get());
    H5Eclear2(H5E_DEFAULT);
    if (off != HADDR_UNDEF) {
      fd_ = open_existing(tmp_.path(), true, loc_.path);
      plain_.fd = fd_.get();
      plain_.data_offset = off;
      plain_.logical = info_.shape;
      plain_.elem_size = info_.elem_size;
      plain_.name = loc_.path;
      reserve_keep_size(fd_.get(), off, info_.bytes(), loc_.path);
    }
  }

  ~Hdf5Sink() override {
    if (file_) {
      // Not committed: the temp file is about to be removed. Unlinking the
      // dataset first frees its space, so the close need not extend the file
      // to the dataset's end: after a full disk that extension fails, and a
      // failed close leaves HDF5 a file it crashes on at process exit.
      quiet();
      dset_.reset();
      H5Ldelete(file_.get(), loc_.dataset.c_str(), H5P_DEFAULT);
      H5Eclear2(H5E_DEFAULT);
    }
    dset_.reset();
    type_.reset();
    file_.reset();
  }

  const MatrixInfo& info() const override { return info_; }
  void write(std::uint64_t r0, std::uint64_t c0, std::uint64_t h, std::uint64_t w, const void* src,
             std::uint64_t ld) override {
    if (!file_) throw Error(ErrorKind::internal, "write to " + loc_.path + " after commit()");
    if (fd_) return plain_.write(r0, c0, h, w, src, ld);
    check_rect(info_.shape, r0, c0, h, w, ld, loc_.path);
    if (h == 0 || w == 0) return;
    Dataset::hyperslab_io(dset_.get(), type_.get(), true, r0, c0, h, w, const_cast<void*>(src), ld, what());
  }

  // The contiguous output is written by pwrite alone, never through HDF5.
  bool concurrent_writes() const override { return bool(fd_); }
  // The contiguous output's rows [r0, r0+h) are one run of the file; HDF5
  // writes a chunked one itself, where nothing is started early.
  void rows_complete(std::uint64_t r0, std::uint64_t h) override {
    if (fd_) return plain_.start_writeback(r0, h);
    // A chunked output: HDF5 places the chunks, so start write-back of all
    // that has reached the file so far (the final fsync then waits for the
    // tail only: on the H100 machine it took 4-8 s of an 8 GiB run without).
    if (!wb_fd_) wb_fd_ = Fd(::open(tmp_.path().c_str(), O_RDONLY | O_CLOEXEC));
    if (wb_fd_) ::sync_file_range(wb_fd_.get(), 0, 0, SYNC_FILE_RANGE_WRITE);  // a hint: errors are the fsync's to report
  }
  // The chunk cache (and the compressed copy of the chunk being stored).
  std::uint64_t reserved_bytes() const override { return reserved_; }

  void commit() override {
    if (!file_) return;
    quiet();
    dset_.close();
    type_.close();
    if (!file_.close()) fail(ErrorKind::io, "cannot finish writing " + loc_.path);
    Fd f = fd_ ? std::move(fd_) : open_existing(tmp_.path(), false, loc_.path);
    sync_file(f.get(), loc_.path, false);
    f.reset();
    tmp_.commit();
  }

  // "HDF5 dataset /x (f32, 20x10, chunked 5x4, shuffle+deflate) in out.h5",
  // or "... in out.h5 (contiguous: the input's filter 'lzf' (32000) cannot encode here)".
  std::string describe() const override {
    std::string layout;
    if (layout_.dcpl)
      layout = ", chunked " + to_string(layout_.chunk) + (layout_.filters.empty() ? "" : ", " + layout_.filters);
    return "HDF5 dataset " + loc_.dataset + " (" + type_text(info_, std::to_string(info_.elem_size) + "-byte elements") +
           ", " + to_string(info_.shape) + layout + ") in " + loc_.path +
           (layout_.note.empty() ? "" : " (" + layout_.note + ")");
  }

 private:
  std::string what() const { return "dataset " + loc_.dataset + " in " + loc_.path; }

  Location loc_;
  MatrixInfo info_;
  OutputLayout layout_;
  std::uint64_t reserved_ = 0;
  TempPath tmp_;  // destroyed after the HDF5 ids and the descriptor below
  Fd fd_;
  Fd wb_fd_;  // a chunked output's file, only to start its write-back
  PlainMatrix plain_;
  Hid file_, dset_, type_;
};

}  // namespace

std::unique_ptr<Source> open_hdf5_source(const Location& loc, const OpenOptions& opts) {
  return std::make_unique<Hdf5Source>(loc, opts);
}

std::unique_ptr<Sink> create_hdf5_sink(const Location& loc, const Source& src, const SinkOptions& opts) {
  return std::make_unique<Hdf5Sink>(loc, src, opts);
}

std::unique_ptr<InplaceMatrix> open_hdf5_inplace(const Location& loc, const OpenOptions& opts) {
  return std::make_unique<Hdf5Inplace>(loc, opts);
}

}  // namespace gt::fmt
