// The HDF5 output. When the source is an HDF5 dataset, the output copies its
// exact datatype and its attributes, and a chunked input gives a chunked
// output: the transposed chunk shape and the input's filters (gzip, shuffle,
// ...), same parameters, same order. The planner cuts tiles in whole input
// chunks, so each output tile covers whole output chunks: where every
// filter is one of our codecs, each chunk is encoded on the sink's codec
// threads and stored with H5Dwrite_chunk (chunks.cpp); an unfiltered
// output's chunks are allocated at creation and written by pwrite at their
// offsets. Other filters go through HDF5's pipeline with a one-chunk cache.
// Every other output is contiguous and written by pwrite.
//
// OUT names a new file (written under a temporary name, renamed at
// commit), or, as FILE:/dataset where FILE is an HDF5 file already, the
// file the dataset is added to (as h5copy does): the dataset is created
// anonymous (no link names it), its data written and synced, and only then
// linked under its name ({force} first unlinks the dataset of that name,
// nothing else). An interrupted run leaves no dataset of that name; what a
// killed one can leave is the file space the unlinked data took.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <optional>
#include <vector>

#include "formats/hdf5/chunks.hpp"
#include "formats/hdf5/hdf5_internal.hpp"
#include "formats/internal.hpp"
#include "formats/plain_io.hpp"
#include "gtranspose/machine.hpp"
#include "gtranspose/sizes.hpp"
#include "gtranspose/tempfile.hpp"

namespace gt::fmt {
namespace h5 {
namespace {

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

// The layout SinkOptions asks for (a non-HDF5 source: gt-gen's inputs).
OutputLayout requested_layout(const SinkOptions& o, const MatrixInfo& info) {
  OutputLayout out;
  if (!o.hdf5_chunk.rows || !o.hdf5_chunk.cols) return out;
  Hid dcpl(H5Pcreate(H5P_DATASET_CREATE));
  const hsize_t cd[2] = {std::min(o.hdf5_chunk.rows, info.shape.rows), std::min(o.hdf5_chunk.cols, info.shape.cols)};
  if (H5Pset_chunk(dcpl.get(), 2, cd) < 0)
    fail(ErrorKind::usage, "HDF5 refused the chunk shape " + to_string(o.hdf5_chunk));
  for (const Hdf5Filter& f : o.hdf5_filters) {
    if (H5Pset_filter(dcpl.get(), H5Z_filter_t(f.id), f.optional ? H5Z_FLAG_OPTIONAL : H5Z_FLAG_MANDATORY,
                      f.values.size(), f.values.data()) < 0)
      fail(ErrorKind::usage, "HDF5 refused filter " + std::to_string(f.id));
    char name[64] = {};
    unsigned flags = 0, config = 0;
    std::size_t nv = 0;
    H5Pget_filter_by_id2(dcpl.get(), H5Z_filter_t(f.id), &flags, &nv, nullptr, sizeof name, name, &config);
    H5Eclear2(H5E_DEFAULT);
    out.filters += (out.filters.empty() ? "" : "+") + filter_name(H5Z_filter_t(f.id), name);
  }
  out.dcpl = std::move(dcpl);
  out.chunk = {cd[0], cd[1]};
  out.nfilters = int(o.hdf5_filters.size());
  return out;
}

// --- the sink -------------------------------------------------------------------

// A transient copy of dataset `dset`'s datatype (a committed type of the
// source file cannot cross files); invalid when HDF5 fails.
Hid transient_type_of(hid_t dset) {
  const Hid t(H5Dget_type(dset));
  return t ? Hid(H5Tcopy(t.get())) : Hid();
}

class Hdf5Sink final : public Sink {
 public:
  Hdf5Sink(const Location& loc, const Source& src, const SinkOptions& opts) : loc_(loc) {
    quiet();
    info_ = src.info();
    info_.shape = src.info().shape.transposed();
    const NativeType native = src.native_type();
    // An HDF5 source's dataset: its datatype, attributes, chunk layout and
    // dimension scales are carried over.
    const hid_t in = native.hdf5_dataset;
    adding_ = !loc_.dataset.empty() && path_exists(loc_.path);
    if (loc_.dataset.empty()) loc_.dataset = in >= 0 ? src.location().dataset : "/data";
    if (adding_) open_target(opts.force);
    else create_file(opts, in);
    Hid type = in >= 0 ? transient_type_of(in) : type_for(info_, native.npy_descr);
    if (!type) fail(ErrorKind::output, "cannot create the element type of " + loc_.path);
    if (H5Tget_size(type.get()) != info_.elem_size)
      throw Error(ErrorKind::internal, "HDF5 type size differs from the element size for " + loc_.path);
    hsize_t dims[2] = {info_.shape.rows, info_.shape.cols};
    Hid space = check(H5Screate_simple(2, dims, nullptr), ErrorKind::output, "cannot describe " + loc_.path);
    // Our codecs stand in for filters this HDF5 lacks, so the output can
    // keep the input's pipeline (or the one asked for) as it is.
    register_missing_filters();
    layout_ = in >= 0 ? chunked_layout(in) : requested_layout(opts, info_);
    if (layout_.dcpl) create_chunked(type.get(), space.get(), in);
    if (!dset_) {
      Hid dcpl(H5Pcreate(H5P_DATASET_CREATE));
      H5Pset_layout(dcpl.get(), H5D_CONTIGUOUS);
      // Allocate now, never write fill values: every element gets written by us.
      H5Pset_alloc_time(dcpl.get(), H5D_ALLOC_TIME_EARLY);
      H5Pset_fill_time(dcpl.get(), H5D_FILL_TIME_NEVER);
      if (in >= 0) inherit_creation_order(in, dcpl.get(), H5I_INVALID_HID);
      dset_ = check(create_dataset(type.get(), space.get(), dcpl.get(), H5P_DEFAULT), ErrorKind::output,
                    "cannot create " + what());
    }
    type_ = std::move(type);
    if (in >= 0) {
      copy_attributes(in, dset_.get(), what(), true);
      src_file_ = Hid(H5Iget_file_id(in));
      scales_ = plan_scales(in, adding_ ? file_.get() : H5I_INVALID_HID, loc_.dataset);
      if (!adding_) {
        // A new file gets the input file's global attributes (netCDF-4's
        // _NCProperties and the file's own): netCDF reads it as netCDF-4.
        Hid from = check(H5Oopen(src_file_.get(), "/", H5P_DEFAULT), ErrorKind::output, "cannot open the input's root group");
        Hid to = check(H5Oopen(file_.get(), "/", H5P_DEFAULT), ErrorKind::output, "cannot open the root group of " + loc_.path);
        copy_attributes(from.get(), to.get(), "the root group of " + loc_.path, false);
      }
    }
    if (adding_) settle_target();
    const haddr_t off = layout_.dcpl ? HADDR_UNDEF : H5Dget_offset(dset_.get());
    H5Eclear2(H5E_DEFAULT);
    if (off != HADDR_UNDEF) {
      fd_ = open_existing(file_path(), true, loc_.path);
      plain_.fd = fd_.get();
      plain_.data_offset = off;
      plain_.logical = info_.shape;
      plain_.elem_size = info_.elem_size;
      plain_.name = loc_.path;
      reserve_keep_size(fd_.get(), off, info_.bytes(), loc_.path);
    }
  }

  // A new file, under a temporary name; its root tracks creation order as
  // the input's does (netCDF-4's files do).
  void create_file(const SinkOptions& opts, hid_t in) {
    check_output_path(loc_.path, opts.force);  // what checked_output() checks (TempPath does not move)
    tmp_.emplace(loc_.path, opts.force ? Replace::yes : Replace::no);
    // Create the file ourselves first so an unwritable folder reports the OS reason.
    create_output_file(tmp_->path(), loc_.path);
    const Hid fapl = output_fapl();
    Hid fcpl(H5Pcreate(H5P_FILE_CREATE));
    if (in >= 0) inherit_creation_order(in, H5I_INVALID_HID, fcpl.get());
    file_ = check(H5Fcreate(tmp_->path().c_str(), H5F_ACC_TRUNC, fcpl.get(), fapl.get()), ErrorKind::output,
                  "cannot create " + loc_.path + " as HDF5");
  }

  // An existing file the dataset is added to. Refused: a file that is not
  // HDF5, a dataset of that name without {force}, a group or link there.
  void open_target(bool force) {
    check_output_path(loc_.path, true);  // never through a link, never a device
    const htri_t is = H5Fis_hdf5(loc_.path.c_str());
    H5Eclear2(H5E_DEFAULT);
    if (is <= 0)
      throw Error(ErrorKind::output, loc_.path + " exists and is not an HDF5 file: a dataset (" + loc_.dataset +
                                         ") is added only to an HDF5 file; name another output, or remove it");
    const Hid fapl = strong_close_fapl();
    file_ = check(H5Fopen(loc_.path.c_str(), H5F_ACC_RDWR, fapl.get()), ErrorKind::output,
                  "cannot open " + loc_.path + " to add " + loc_.dataset);
    if (link_exists(file_.get(), loc_.dataset)) {
      H5O_info_t oi{};
      if (H5Oget_info_by_name(file_.get(), loc_.dataset.c_str(), &oi, H5P_DEFAULT) < 0 || oi.type != H5O_TYPE_DATASET) {
        H5Eclear2(H5E_DEFAULT);
        throw Error(ErrorKind::output, loc_.dataset + " in " + loc_.path +
                                           " is not a dataset (a group, or a link to nothing): {force} replaces only "
                                           "a dataset; name another");
      }
      if (!force)
        throw Error(ErrorKind::output, "dataset " + loc_.dataset + " exists in " + loc_.path +
                                           ": use {force} to replace that dataset (the rest of the file is kept)");
      replace_ = true;
    }
    // Each group on the way is a group, or is made at commit.
    for (std::size_t pos = loc_.dataset.find('/', 1); pos != std::string::npos; pos = loc_.dataset.find('/', pos + 1)) {
      const std::string group = loc_.dataset.substr(0, pos);
      if (!link_exists(file_.get(), group)) break;
      H5O_info_t oi{};
      if (H5Oget_info_by_name(file_.get(), group.c_str(), &oi, H5P_DEFAULT) < 0 || oi.type != H5O_TYPE_GROUP) {
        H5Eclear2(H5E_DEFAULT);
        throw Error(ErrorKind::output, group + " in " + loc_.path + " is not a group: " + loc_.dataset +
                                           " cannot be added there; name another dataset");
      }
    }
  }

  // A file added to, before any data: its end extended to all HDF5 has
  // allocated (a kill must not leave a file shorter than its superblock
  // says: HDF5 would call it truncated), then its metadata flushed. From
  // here a failed or killed run leaves the file as it is now: the new
  // dataset unreachable, its space in the file.
  void settle_target() {
    haddr_t eoa = 0;
    if (H5Fget_eoa(file_.get(), &eoa) < 0) fail(ErrorKind::output, "cannot read the end of " + loc_.path);
    const Fd f = open_existing(loc_.path, true, loc_.path);
    eoa += chunk_address_base(file_.get());  // past a user block
    if (file_size(f.get(), loc_.path) < eoa && ::ftruncate(f.get(), off_t(eoa)) != 0)
      throw_errno(ErrorKind::output, "cannot extend " + loc_.path + " for " + loc_.dataset);
    if (H5Fflush(file_.get(), H5F_SCOPE_LOCAL) < 0) fail(ErrorKind::output, "cannot add " + loc_.dataset + " to " + loc_.path);
  }

  // The dataset, linked under its name in a new file; anonymous in a file
  // added to (commit links it).
  hid_t create_dataset(hid_t type, hid_t space, hid_t dcpl, hid_t dapl) {
    if (adding_) return H5Dcreate_anon(file_.get(), type, space, dcpl, dapl);
    Hid lcpl(H5Pcreate(H5P_LINK_CREATE));
    H5Pset_create_intermediate_group(lcpl.get(), 1);
    return H5Dcreate2(file_.get(), loc_.dataset.c_str(), type, space, lcpl.get(), dcpl, dapl);
  }

  // The file written: the temporary one, or the one added to.
  const std::string& file_path() const { return tmp_ ? tmp_->path() : loc_.path; }

  // The chunked output: direct chunk I/O where every filter is ours, else
  // HDF5's pipeline; contiguous (layout_.note says why) when HDF5 refuses it.
  void create_chunked(hid_t type, hid_t space, hid_t in) {
    const std::uint64_t chunk_bytes = layout_.chunk.rows * layout_.chunk.cols * info_.elem_size;
    if (layout_.nfilters == 0) {
      // Unfiltered: every chunk allocated now, so its offset is known and
      // pwrite fills it; never a fill value written first.
      H5Pset_alloc_time(layout_.dcpl.get(), H5D_ALLOC_TIME_EARLY);
      H5Pset_fill_time(layout_.dcpl.get(), H5D_FILL_TIME_NEVER);
    }
    // Chunks are otherwise allocated as they are written (early allocation
    // would compress and store a chunk of fill values for every chunk
    // first). A cache of one chunk, as a library-path source has: the chunk
    // a tile is writing stays whole in memory until the tile moves on, then
    // is compressed and stored once. The direct path passes it by; only a
    // write of part of a chunk (never a planned tile) goes through it.
    Hid dapl = one_chunk_cache(chunk_bytes);
    if (in >= 0) inherit_creation_order(in, layout_.dcpl.get(), H5I_INVALID_HID);
    dset_ = Hid(create_dataset(type, space, layout_.dcpl.get(), dapl.get()));
    if (!dset_) {
      layout_.note = "contiguous: HDF5 could not create it chunked " + to_string(layout_.chunk) +
                     (layout_.filters.empty() ? "" : " with " + layout_.filters) + " (" + h5_reason() + ")";
      layout_.dcpl.reset();
      layout_.chunk = {0, 0};
      layout_.filters.clear();
      layout_.nfilters = 0;
      return;
    }
    // The pipeline as the created dataset holds it: HDF5's set_local
    // callbacks fill in what depends on the output (shuffle's element
    // size, szip's pixel size and scanline, blosc's chunk bytes).
    std::vector<codecs::FilterSpec> specs;
    std::string why;
    std::optional<codecs::Pipeline> pipeline;
    Hid dcpl(H5Dget_create_plist(dset_.get()));
    if (!dcpl || !filters_of(dcpl.get(), specs, &why) || !(pipeline = codecs::Pipeline::make(specs, &why))) {
      H5Eclear2(H5E_DEFAULT);
      reserved_ = chunk_bytes * (layout_.nfilters > 0 ? 2 : 1);
      path_note_ = "through the HDF5 library (" + why + ")";
      return;
    }
    for (const codecs::FilterSpec& f : specs) stored_filters_.push_back({f.id, f.flags, f.values});
    chunk_fd_ = open_existing(file_path(), true, loc_.path);
    ChunkIo::Setup cs;
    cs.dset = dset_.get();
    cs.fd = chunk_fd_.get();
    cs.base = chunk_address_base(file_.get());
    cs.shape = info_.shape;
    cs.chunk = layout_.chunk;
    cs.elem_size = info_.elem_size;
    cs.pipeline = std::move(*pipeline);
    cs.threads = int(usable_cores());
    cs.store_thread = true;  // codec threads hand their chunks to one thread that stores them
    cs.what = what();
    chunks_ = std::make_unique<ChunkIo>(std::move(cs));
  }

  ~Hdf5Sink() override {
    quiet();
    chunks_.reset();
    if (!file_) return;
    // Not committed. A file added to is left as its last flush made it
    // (before any data): nothing of the failed run is written into it.
    // A new file is about to be removed: the dataset is unlinked first, its
    // space freed, so the close need not extend the file; a file that
    // cannot take its metadata (a full disk, a file-size limit) is emptied
    // and abandoned, never closed (see abandon_file).
    if (!adding_ && H5Fflush(file_.get(), H5F_SCOPE_LOCAL) >= 0) {
      dset_.reset();
      H5Ldelete(file_.get(), loc_.dataset.c_str(), H5P_DEFAULT);
      type_.reset();
      if (H5Fflush(file_.get(), H5F_SCOPE_LOCAL) >= 0) {
        file_.reset();
        return;
      }
    }
    if (tmp_) (void)::truncate(tmp_->path().c_str(), 0);
    dset_.release();
    type_.release();
    abandon_file(file_);
  }

  const MatrixInfo& info() const override { return info_; }
  void write(std::uint64_t r0, std::uint64_t c0, std::uint64_t h, std::uint64_t w, const void* src,
             std::uint64_t ld) override {
    if (!file_) throw Error(ErrorKind::internal, "write to " + loc_.path + " after commit()");
    if (fd_) return plain_.write(r0, c0, h, w, src, ld);
    if (chunks_ && chunks_->aligned(r0, c0, h, w)) return chunks_->write(r0, c0, h, w, src, ld);
    check_rect(info_.shape, r0, c0, h, w, ld, loc_.path);
    library_bytes_ += h * w * info_.elem_size;
    if (h == 0 || w == 0) return;
    hyperslab_io(dset_.get(), type_.get(), true, r0, c0, h, w, const_cast<void*>(src), ld, what());
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
    if (!wb_fd_) wb_fd_ = Fd(::open(file_path().c_str(), O_RDONLY | O_CLOEXEC));
    if (wb_fd_) ::sync_file_range(wb_fd_.get(), 0, 0, SYNC_FILE_RANGE_WRITE);  // a hint: errors are the fsync's to report
  }
  // The library path's chunk cache (and the compressed copy of the chunk
  // being stored); the direct path's buffers are its codec threads'.
  std::uint64_t reserved_bytes() const override { return reserved_; }
  CodecDemand codec_demand() const override {
    if (!chunks_) return {};
    return {chunks_->threads(), chunks_->bytes_per_thread(), 0, chunks_->compressed()};
  }
  void set_codec_threads(int n) override {
    if (chunks_) chunks_->set_threads(std::max(1, n));
  }
  FormatReport format_report() const override {
    FormatReport r;
    if (chunks_ && chunks_->filtered()) r.stages.push_back(chunks_->stage("encode"));
    // Writes of part of a chunk (tiles smaller than a chunk) went through
    // HDF5's pipeline instead: say how much.
    const std::string partial =
        chunks_ && library_bytes_ ? "; " + format_bytes(library_bytes_) + " through the HDF5 library (writes of part of a chunk)" : "";
    if (chunks_) r.notes.push_back("HDF5 write: " + chunks_->note("encoded") + partial);
    else if (!path_note_.empty()) r.notes.push_back("HDF5 write: " + path_note_);
    for (const std::string& n : scales_.notes) r.notes.push_back("HDF5 metadata: " + n);
    if (!scales_.scales.empty()) {
      std::string names;
      for (const auto& sc : scales_.scales) names += (names.empty() ? "" : ", ") + sc.path + " -> axis " + std::to_string(sc.out_dim);
      r.notes.push_back("HDF5 metadata: dimension scales swapped with the axes (" + names + ")");
    }
    return r;
  }

  // Contiguous: allocated at creation, written by pwrite alone. Chunked on
  // the direct path: chunks other processes encoded, stored here.
  SharedLayout shared_layout() const override {
    SharedLayout l;
    if (fd_) {
      l.kind = SharedLayout::plain;
      l.path = file_path();  // the new file under its temporary name, or the file the dataset is added to
      l.data_offset = plain_.data_offset;
    } else if (chunks_) {
      l.kind = SharedLayout::chunks;
      l.chunk = layout_.chunk;
      l.filters = stored_filters_;
    }
    return l;
  }
  void write_stored_chunk(std::uint64_t i, std::uint64_t j, const void* data, std::size_t n, unsigned mask) override {
    if (!chunks_) throw Error(ErrorKind::internal, "write_stored_chunk() of " + what() + " off the direct chunk path");
    chunks_->store_encoded(i, j, data, n, mask);
  }

  void commit() override {
    if (!file_) return;
    quiet();
    if (chunks_) chunks_->drain();  // chunks still encoding (MPI's rank 0 writes only its band): stored, or their error
    chunks_.reset();
    chunk_fd_.reset();
    if (adding_) link_dataset();
    attach_scales(scales_, src_file_.get(), file_.get(), dset_.get(), what());
    // Flushed first: a close that fails cannot be undone (see ~Hdf5Sink).
    if (H5Fflush(file_.get(), H5F_SCOPE_LOCAL) < 0) fail(ErrorKind::io, "cannot finish writing " + loc_.path);
    dset_.close();
    type_.close();
    if (!file_.close()) fail(ErrorKind::io, "cannot finish writing " + loc_.path);
    Fd f = fd_ ? std::move(fd_) : open_existing(file_path(), false, loc_.path);
    sync_file(f.get(), loc_.path, false);
    f.reset();
    if (tmp_) tmp_->commit();
  }

  // A file added to: the data and the metadata that finds it on disk
  // first, then the name (the old dataset's unlinked just before).
  void link_dataset() {
    if (H5Fflush(file_.get(), H5F_SCOPE_LOCAL) < 0) fail(ErrorKind::io, "cannot finish writing " + what());
    {
      Fd f = open_existing(loc_.path, false, loc_.path);
      sync_file(f.get(), loc_.path, false);
    }
    if (replace_ && H5Ldelete(file_.get(), loc_.dataset.c_str(), H5P_DEFAULT) < 0)
      fail(ErrorKind::output, "cannot replace " + what());
    Hid lcpl(H5Pcreate(H5P_LINK_CREATE));
    H5Pset_create_intermediate_group(lcpl.get(), 1);
    if (H5Olink(dset_.get(), file_.get(), loc_.dataset.c_str(), lcpl.get(), H5P_DEFAULT) < 0)
      fail(ErrorKind::output, "cannot name " + what());
  }

  // "HDF5 dataset /x (f32, 20x10, chunked 5x4, shuffle+deflate) in out.h5",
  // or "... in out.h5 (contiguous: the input's filter 'lzf' (32000) cannot encode here)".
  std::string describe() const override {
    std::string layout;
    if (layout_.dcpl)
      layout = ", chunked " + to_string(layout_.chunk) + (layout_.filters.empty() ? "" : ", " + layout_.filters);
    return "HDF5 dataset " + loc_.dataset + " (" + type_text(info_, std::to_string(info_.elem_size) + "-byte elements") +
           ", " + to_string(info_.shape) + layout + ") in " + loc_.path +
           (layout_.note.empty() ? "" : " (" + layout_.note + ")") +
           (adding_ ? (replace_ ? " (replacing the dataset of that name)" : " (added to the file)") : "");
  }

 private:
  std::string what() const { return "dataset " + loc_.dataset + " in " + loc_.path; }

  Location loc_;
  MatrixInfo info_;
  OutputLayout layout_;
  std::uint64_t reserved_ = 0;
  bool adding_ = false;   // the dataset is added to an existing file
  bool replace_ = false;  // ... replacing a dataset of its name ({force})
  AxisScales scales_;
  std::optional<TempPath> tmp_;  // a new file's; destroyed after the HDF5 ids and the descriptors below
  Fd fd_;
  Fd wb_fd_;  // a chunked output's file, only to start its write-back
  Fd chunk_fd_;  // a direct chunked output's file, for pwrite
  PlainMatrix plain_;
  Hid src_file_;  // the input's file, whose scales are copied at commit
  Hid file_, dset_, type_;
  std::unique_ptr<ChunkIo> chunks_;  // direct chunk I/O, over dset_ and chunk_fd_
  std::vector<StoredFilter> stored_filters_;  // chunks_'s pipeline, for shared_layout()
  std::string path_note_;
  std::uint64_t library_bytes_ = 0;  // written through HDF5 beside chunks_ (parts of chunks)
};

}  // namespace
}  // namespace h5

std::unique_ptr<Sink> create_hdf5_sink(const Location& loc, const Source& src, const SinkOptions& opts) {
  return std::make_unique<h5::Hdf5Sink>(loc, src, opts);
}

}  // namespace gt::fmt
