// An open HDF5 dataset, shared by Hdf5Source and Hdf5Inplace.
//
// Three paths, chosen at open:
//  - contiguous, unfiltered, stored in the opened file: one row-major run,
//    moved by pread/pwrite at H5Dget_offset(), outside HDF5's global lock;
//  - chunked, every filter one of our codecs, stored in the opened file:
//    direct chunk I/O (chunks.cpp), the codecs on threads of the source's own;
//  - anything else (a filter we lack, a virtual dataset, external storage,
//    a dataset reached through an external link): H5Dread/H5Dwrite with
//    hyperslabs through a chunk cache of one chunk, one thread at a time.
// Offsets HDF5 reports are offsets in the dataset's own file: positioned I/O
// on the opened file uses them only when that is the opened file, and in
// place is refused for data stored anywhere else.
#include <optional>
#include <vector>

#include "formats/hdf5/chunks.hpp"
#include "formats/hdf5/hdf5_internal.hpp"
#include "formats/internal.hpp"
#include "formats/plain_io.hpp"
#include "gtranspose/machine.hpp"

namespace gt::fmt {
namespace h5 {

void hyperslab_io(hid_t dset, hid_t type, bool write, std::uint64_t r0, std::uint64_t c0, std::uint64_t h,
                  std::uint64_t w, void* buf, std::uint64_t ld, const std::string& what) {
  // Engines read a source and write a sink from different threads.
  auto lock = serial();
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

// Why positioned I/O may not touch a dataset, or "" when it may: its data
// must lie in the opened file itself, in one place HDF5 can name.
std::string not_stored_here(hid_t dset, hid_t dcpl, const Location& loc) {
  if (H5Pget_layout(dcpl) == H5D_VIRTUAL) return "is a virtual dataset (its data lies in other datasets)";
  if (H5Pget_external_count(dcpl) > 0) return "keeps its data in external raw files";
  if (stored_in(dset, loc.path)) return "";
  std::string other = "another file";
  const Hid f(H5Iget_file_id(dset));
  char name[4096] = {};
  if (f && H5Fget_name(f.get(), name, sizeof name) > 0) other = name;
  H5Eclear2(H5E_DEFAULT);
  return "is stored in " + other + " (reached through an external link)";
}

struct Dataset {
  Location loc;
  Hid file, dset, type;
  std::string missing;  // a filter of its pipeline HDF5 lacks (missing_filter), or ""
  MatrixInfo info;
  Shape chunk{0, 0};
  std::uint64_t reserved = 0;  // the library path's chunk cache (+ one compressed chunk), or the direct path's chunk index
  bool filtered = false;       // compressed or otherwise filtered chunks
  std::string elsewhere;       // why the data is not plainly in this file ("" when it is)
  std::string path_note;       // which path reads it, and why, for the report
  Fd fd;  // set when the data can move by positioned I/O
  PlainMatrix plain;
  std::unique_ptr<ChunkIo> chunks;  // set for direct chunk I/O
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
                 loc.path + " has HDF5's signature but cannot be opened as HDF5 (damaged, truncated, or in use for "
                            "writing)");
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
    elsewhere = not_stored_here(dset.get(), dcpl.get(), loc);
    if (layout == H5D_CHUNKED) {
      hsize_t cd[2] = {0, 0};
      if (H5Pget_chunk(dcpl.get(), 2, cd) == 2) chunk = {cd[0], cd[1]};
      std::uint64_t chunk_bytes = 0;
      if (chunk.rows && !__builtin_mul_overflow(chunk.rows * chunk.cols, info.elem_size, &chunk_bytes)) {
        const std::string why = direct_chunks(dcpl.get(), writable);
        if (chunks) {
          path_note = chunks->note(writable ? "moved" : "decoded");
        } else {
          path_note = "through the HDF5 library (" + why + ")";
          use_chunk_cache(chunk_bytes);
        }
      }
    }
    // Read through HDF5's pipeline, a filter it lacks fails on the first
    // chunk as a failed dlopen: said here, by name, before anything runs.
    if (filtered && !chunks) {
      missing = missing_filter(dcpl.get());
      // H5Zfilter_avail can say no where the pipeline itself loads the
      // plugin (the GPU machine's blosc), and an optional filter may have
      // been skipped for some chunks: a read that fails says it (io()).
    }
    // Stored, but not as much as its shape needs: a damaged shape (or
    // storage), which would otherwise ask for an absurd output. (A
    // contiguous dataset never written stores nothing, and reads as fill.)
    const hsize_t stored = H5Dget_storage_size(dset.get());
    if ((layout == H5D_COMPACT || (layout == H5D_CONTIGUOUS && elsewhere.empty() && !filtered && stored != 0)) &&
        stored != info.bytes())
      throw Error(ErrorKind::input, loc.path + " is damaged: " + what() + " claims shape " + to_string(info.shape) +
                                        " (" + std::to_string(info.bytes()) + " bytes) but stores " +
                                        std::to_string(stored) + " bytes");
    if (layout == H5D_CONTIGUOUS && elsewhere.empty() && !filtered) {
      haddr_t off = H5Dget_offset(dset.get());
      if (off != HADDR_UNDEF && stored == info.bytes()) use_plain(off, writable);
    }
    H5Eclear2(H5E_DEFAULT);
  }

  // Sets up direct chunk I/O where it applies; otherwise says why not.
  std::string direct_chunks(hid_t dcpl, bool writable) {
    if (!elsewhere.empty()) return "the dataset " + elsewhere;
    std::vector<codecs::FilterSpec> specs;
    std::string why;
    if (!filters_of(dcpl, specs, &why)) return why;
    std::optional<codecs::Pipeline> p = codecs::Pipeline::make(specs, &why);
    if (!p) return why;
    const std::uint64_t total = ((info.shape.rows + chunk.rows - 1) / chunk.rows) * ((info.shape.cols + chunk.cols - 1) / chunk.cols);
    if (writable) {
      // In place, a chunk without storage would need HDF5 to allocate it.
      hsize_t n = 0;
      Hid space(H5Dget_space(dset.get()));
      if (H5Dget_num_chunks(dset.get(), space.get(), &n) < 0 || n != total) return "not every chunk is allocated";
    }
    // No chunk cache: chunks never pass through HDF5's pipeline.
    Hid dapl(H5Pcreate(H5P_DATASET_ACCESS));
    H5Pset_chunk_cache(dapl.get(), 0, 0, 1.0);
    reopen(dapl.get());
    ChunkIo::Setup s;
    s.dset = dset.get();
    s.fd = (fd = open_existing(loc.path, writable, loc.path)).get();
    s.base = chunk_address_base(file.get());
    s.shape = info.shape;
    s.chunk = chunk;
    s.elem_size = info.elem_size;
    s.pipeline = std::move(*p);
    s.fill = fill_value(dcpl);
    // In place the engine's own threads call in at once; a source decodes
    // on codec threads of its own (the run plan sets how many).
    s.threads = writable ? 0 : int(usable_cores());
    s.table = !writable;  // the index read once, where plan_chunk_table allows
    s.what = what();
    chunks = std::make_unique<ChunkIo>(std::move(s));
    reserved += chunks->table_bytes();  // held for the whole run, like a chunk cache
    return "";
  }

  std::vector<unsigned char> fill_value(hid_t dcpl) const {
    std::vector<unsigned char> v(info.elem_size, 0);
    H5D_fill_value_t st = H5D_FILL_VALUE_ERROR;
    if (H5Pfill_value_defined(dcpl, &st) >= 0 && st != H5D_FILL_VALUE_UNDEFINED)
      H5Pget_fill_value(dcpl, type.get(), v.data());
    H5Eclear2(H5E_DEFAULT);
    return v;
  }

  // HDF5 shares one cache among the open handles of a dataset, sized by the
  // first open: the dataset is closed and opened again with `dapl`.
  void reopen(hid_t dapl) {
    dset.reset();
    dset = check(H5Dopen2(file.get(), loc.dataset.c_str(), dapl), ErrorKind::input, "cannot open " + what() + " again");
  }

  // A cache of exactly one chunk for the library path: consecutive tiles
  // inside one chunk then reuse it instead of decompressing it once per tile
  // (HDF5's default cache is 1 MiB, smaller than most chunks). Its memory
  // and the compressed copy read beside it count against host_mem
  // (Source::reserved_bytes).
  void use_chunk_cache(std::uint64_t chunk_bytes) {
    Hid dapl = one_chunk_cache(chunk_bytes);
    reopen(dapl.get());
    reserved = chunk_bytes * (filtered ? 2 : 1);
  }

  void use_plain(std::uint64_t off, bool writable) {
    fd = open_existing(loc.path, writable, loc.path);
    plain.fd = fd.get();
    plain.data_offset = off;
    plain.logical = info.shape;
    plain.elem_size = info.elem_size;
    plain.name = loc.path;
    path_note = "contiguous: positioned I/O at its offset";
  }

  void io(bool write, std::uint64_t r0, std::uint64_t c0, std::uint64_t h, std::uint64_t w, void* buf,
          std::uint64_t ld) {
    if (chunks) return write ? chunks->write(r0, c0, h, w, buf, ld) : chunks->read(r0, c0, h, w, buf, ld);
    if (fd) return write ? plain.write(r0, c0, h, w, buf, ld) : plain.read(r0, c0, h, w, buf, ld);
    check_rect(info.shape, r0, c0, h, w, ld, loc.path);
    if (h == 0 || w == 0) return;
    if (write || missing.empty()) return hyperslab_io(dset.get(), type.get(), write, r0, c0, h, w, buf, ld, what());
    try {
      hyperslab_io(dset.get(), type.get(), false, r0, c0, h, w, buf, ld, what());
    } catch (const Error&) {
      throw Error(ErrorKind::input, what() + " uses " + missing);
    }
  }

  void flush() {
    quiet();
    if (H5Fflush(file.get(), H5F_SCOPE_GLOBAL) < 0) fail(ErrorKind::io, "cannot flush " + loc.path);
    // fsync works on the file, whichever descriptor names it.
    Fd f = fd ? Fd() : open_existing(loc.path, false, loc.path);
    sync_file(fd ? fd.get() : f.get(), loc.path, true);
  }

  FormatReport report() const {
    FormatReport r;
    if (chunks && chunks->filtered()) {
      r.stages.push_back(chunks->stage("decode"));
      r.notes.push_back("HDF5 read: " + chunks->note("decoded"));
    } else if (!path_note.empty()) {
      r.notes.push_back("HDF5 read: " + path_note);
    }
    return r;
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
  std::uint64_t index_bytes() const override { return d_.chunks ? d_.chunks->table_bytes() : 0; }
  CodecDemand codec_demand() const override {
    if (!d_.chunks) return {};
    return {d_.chunks->threads(), d_.chunks->bytes_per_thread(), d_.chunks->bytes_per_thread(true),
            d_.chunks->compressed()};
  }
  void set_codec_threads(int n) override {
    if (d_.chunks) d_.chunks->set_threads(std::max(1, n));
  }
  FormatReport format_report() const override { return d_.report(); }
  // Only the contiguous pread path takes several callers: HDF5's global
  // lock serialises every call, and direct chunk I/O runs its own threads.
  bool concurrent_reads() const override { return d_.fd && !d_.chunks; }
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
  static void refuse_unsafe(const Dataset& d) {
    require_square(d.info, d.what());
    // Data that is not in this file as one plain dataset: a journal beside
    // this file could neither order nor sync the writes that matter.
    if (!d.elsewhere.empty())
      throw Error(ErrorKind::input, d.what() + " " + d.elsewhere +
                                        ": it cannot be transposed in place safely; transpose it out of place into "
                                        "another file");
    // HDF5 stores a rewritten compressed chunk elsewhere and may reuse its
    // old space before the chunk index that points there is on disk, so no
    // journal can make an interrupted in-place run recoverable.
    if (d.filtered)
      throw Error(ErrorKind::input, d.what() + " is compressed (filtered): it cannot be transposed in place safely; "
                                               "transpose it out of place into another file");
  }

 public:
  Hdf5Inplace(const Location& loc, const OpenOptions& opts) {
    // Checked read-only first: opening for writing already changes the
    // file (HDF5 marks it open), and a refused file is left as it was.
    {
      Dataset probe;
      probe.open(loc, opts, false);
      refuse_unsafe(probe);
    }
    d_.open(loc, opts, true);
    refuse_unsafe(d_);
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
    if (d_.fd && !d_.chunks) d_.plain.start_writeback(r0, h);
  }
  std::uint64_t reserved_bytes() const override { return d_.reserved; }
  // pread/pwrite (chunks looked up under HDF5's lock), never HDF5's I/O.
  bool concurrent_io() const override { return bool(d_.fd); }
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
