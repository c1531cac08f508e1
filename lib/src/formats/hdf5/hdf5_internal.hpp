// What the HDF5 format's files share (HDF5 1.10 C library, serial,
// thread-safe build): the owner of an HDF5 identifier, HDF5's error stack
// turned into gt::Error, the property lists files and datasets are opened
// with, element types, finding a dataset, and hyperslab I/O.
//
//   library.cpp  errors, Hid's close, property lists
//   types.cpp    element types: classify_type, type_for
//   find.cpp     finding and opening the dataset, listing candidates
//   dataset.cpp  the open dataset shared by Hdf5Source and Hdf5Inplace
//   chunks.cpp   direct chunk I/O: pread/pwrite, H5Dwrite_chunk, our codecs
//   chunk_store.cpp  the store thread of a compressed output (H5Dwrite_chunk, write-back)
//   filters.cpp  our codecs registered with HDF5 where it has no plugin
//   sink.cpp     the output: layout, a new file or one added to, Hdf5Sink
//   metadata.cpp what follows the axes: attributes, dimension scales, netCDF-4
#pragma once
#include <hdf5.h>

#include <cstdint>
#include <exception>
#include <mutex>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "gtranspose/error.hpp"
#include "gtranspose/matrix.hpp"
#include "gtranspose/types.hpp"

namespace gt::fmt::h5 {

// NativeType::hdf5_dataset carries a dataset's identifier through the
// format-neutral interface.
static_assert(std::is_same_v<hid_t, std::int64_t>, "NativeType::hdf5_dataset holds a hid_t");

// HDF5 keeps its error stack and auto-print setting per thread: silence it
// in every thread that calls in, and turn failures into gt::Error ourselves.
void quiet();
// The innermost (most specific) message on this thread's error stack, which
// for I/O carries the OS reason ("... errno = 28, error message = 'No space
// left on device'"); clears the stack.
std::string h5_reason();
// Held around every HDF5 call made from more than one thread. A
// thread-safe HDF5 (Debian's and Ubuntu's) takes its own global lock and
// this holds nothing; a library built without one gets ours.
std::unique_lock<std::mutex> serial();
// Throws gt::Error(kind) with "what: <h5_reason()>".
[[noreturn]] void fail(ErrorKind kind, const std::string& what);

// One owned HDF5 identifier of any kind (file, dataset, space, type, plist,
// attribute). Every identifier HDF5 hands out goes into one at once.
class Hid {
 public:
  Hid() = default;
  explicit Hid(hid_t id) : id_(id) {}
  ~Hid() { reset(); }
  Hid(Hid&& o) noexcept : id_(std::exchange(o.id_, H5I_INVALID_HID)) {}
  Hid& operator=(Hid&& o) noexcept {
    if (this != &o) {
      reset();
      id_ = std::exchange(o.id_, H5I_INVALID_HID);
    }
    return *this;
  }
  Hid(const Hid&) = delete;
  Hid& operator=(const Hid&) = delete;
  hid_t get() const { return id_; }
  explicit operator bool() const { return id_ >= 0; }
  // Closes now and reports whether HDF5 managed (a file close writes metadata).
  bool close();
  // Closes, ignoring failure. Quiet first: an object may be released by a
  // thread that never called HDF5.
  void reset();
  // Gives the identifier up unclosed (see Hdf5Sink's destructor).
  hid_t release() { return std::exchange(id_, H5I_INVALID_HID); }

 private:
  hid_t id_ = H5I_INVALID_HID;
};

// Gives up an open file HDF5 must not close (one whose metadata cannot be
// written, or an existing file a run failed to add to): its descriptor is
// pointed at /dev/null, so nothing more reaches the file, and its
// identifier is dropped unclosed. Closing it would crash HDF5 1.10; its
// shutdown at exit does too, where the program has not turned it off
// (hdf5_no_shutdown_at_exit: the CLI does).
void abandon_file(Hid& file);

// Owns `id`, or throws gt::Error(kind) naming `what` when HDF5 failed (id < 0).
Hid check(hid_t id, ErrorKind kind, const std::string& what);

// --- property lists (library.cpp) ---------------------------------------------

// File access that closes every object still open in the file when the file
// closes (H5F_CLOSE_STRONG), so a sink's temporary file is really released.
Hid strong_close_fapl();
// The output's file access: as above, plus the 1.8 object format.
Hid output_fapl();
// Dataset access with a chunk cache that holds one chunk of `chunk_bytes`
// and never more.
Hid one_chunk_cache(std::uint64_t chunk_bytes);

// --- callbacks ------------------------------------------------------------------

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

// --- element types (types.cpp) ----------------------------------------------------

struct TypeInfo {
  std::size_t size = 0;
  std::optional<DType> dtype;  // empty for types with no DType (opaque, enum, odd floats)
  ByteOrder order = ByteOrder::not_applicable;
};
// What a dataset's datatype is to us; throws gt::Error(input) naming `what`
// for a type gtranspose cannot move (variable-length, references, odd sizes).
TypeInfo classify_type(hid_t t, const std::string& what);
// "integer", "float", "compound", ... for messages.
std::string class_text(hid_t t);
// The datatype h5py would create for a non-HDF5 source's element type;
// `npy_descr` (a .npy source's exact descr, or "") tells a NumPy bool apart.
Hid type_for(const MatrixInfo& info, const std::string& npy_descr);

// --- finding the dataset (find.cpp) ------------------------------------------------

// Opens the named dataset, or the file's only 2-D one; `loc.dataset` gets
// the resolved path. Throws gt::Error(input) listing the candidates.
Hid open_dataset(hid_t file, Location& loc);

// Registers our codecs as HDF5 filters for the ids this HDF5 has no filter
// or plugin for (zstd, lz4, blosc where missing), once per process: a
// dataset with such a filter can then be created, and read or written
// through the library where the direct path does not apply.
void register_missing_filters();
// "HDF5 filter 32008 (bitshuffle), which this HDF5 cannot decode: install
// ..." for the first filter of `dcpl` neither HDF5 nor a plugin nor our
// codecs provide; "" when every one is there.
std::string missing_filter(hid_t dcpl);

// --- what follows the axes (metadata.cpp) -------------------------------------------

// Copies every attribute of object `src` to object `dst` (`what` names it
// in messages) but object references (re-made by attach_scales); with
// `swap_axes`, the per-axis ones (DIMENSION_LABELS, _Netcdf4Coordinates)
// in reverse order.
void copy_attributes(hid_t src, hid_t dst, const std::string& what, bool swap_axes);
// Gives `dcpl` (a dataset's, or `fcpl` a file's) the attribute and link
// creation-order tracking of the source's (netCDF-4 lists in that order).
void inherit_creation_order(hid_t src_dset, hid_t dcpl, hid_t fcpl);

// The dimension scales of a 2-D source dataset, each for the other axis of
// its transpose: copied into the output file, or (an existing output file
// holding a scale of the same length at the same path) attached as they are.
struct AxisScales {
  struct Scale {
    std::string path;
    int out_dim = 0;
    bool copy = true;
  };
  std::vector<Scale> scales;
  std::vector<std::string> notes;  // scales left behind, and why
};
// `dst_file` is the existing file added to, or -1 for a new file.
AxisScales plan_scales(hid_t src_dset, hid_t dst_file, const std::string& dst_dataset);
// Copies (where planned) and attaches the scales to `dst_dset`.
void attach_scales(const AxisScales& plan, hid_t src_file, hid_t dst_file, hid_t dst_dset, const std::string& what);
// Whether link `path` exists in `file`, each of its groups checked first.
bool link_exists(hid_t file, const std::string& path);

// --- I/O (dataset.cpp) --------------------------------------------------------------

// Reads or writes rows [r0, r0+h) x cols [c0, c0+w) of `dset` through a
// hyperslab, the file's own type as the memory type (no conversion); the
// memory side has leading dimension `ld` elements. gt::Error(io) naming `what`.
void hyperslab_io(hid_t dset, hid_t type, bool write, std::uint64_t r0, std::uint64_t c0, std::uint64_t h,
                  std::uint64_t w, void* buf, std::uint64_t ld, const std::string& what);

}  // namespace gt::fmt::h5
