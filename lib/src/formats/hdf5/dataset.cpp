// An open HDF5 dataset, shared by Hdf5Source and Hdf5Inplace.
//
// Data of a contiguous, unfiltered dataset lies as one row-major run in the
// file: it moves with pread/pwrite at H5Dget_offset(), outside HDF5's global
// lock, so several reader and writer threads overlap. Chunked and compressed
// datasets go through H5Dread/H5Dwrite with hyperslabs, one thread at a time,
// through a chunk cache of one chunk.
#include <mutex>
#include <vector>

#include "formats/hdf5/hdf5_internal.hpp"
#include "formats/internal.hpp"
#include "formats/plain_io.hpp"

namespace gt::fmt {
namespace h5 {

void hyperslab_io(hid_t dset, hid_t type, bool write, std::uint64_t r0, std::uint64_t c0, std::uint64_t h,
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

namespace {

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
  // "HDF5 dataset /x (f32, 1000x2000) in in.h5"
  std::string describe() const {
    return "HDF5 dataset " + loc.dataset + " (" + type_desc + ", " + to_string(info.shape) + ") in " + loc.path;
  }

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
      // compressed copy read beside it count against host_mem
      // (Source::reserved_bytes).
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
  std::string describe() const override { return d_.describe(); }
  // The open dataset itself: the HDF5 sink copies its datatype, attributes
  // and chunk layout (valid while this source lives).
  NativeType native_type() const override {
    NativeType t;
    t.hdf5_dataset = d_.dset.get();
    return t;
  }

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
                                                "transpose it out of place into another file");
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
  std::string describe() const override { return d_.describe() + ", in place"; }

 private:
  Dataset d_;
};

}  // namespace
}  // namespace h5

std::unique_ptr<Source> open_hdf5_source(const Location& loc, const OpenOptions& opts) {
  return std::make_unique<h5::Hdf5Source>(loc, opts);
}

std::unique_ptr<InplaceMatrix> open_hdf5_inplace(const Location& loc, const OpenOptions& opts) {
  return std::make_unique<h5::Hdf5Inplace>(loc, opts);
}

}  // namespace gt::fmt
