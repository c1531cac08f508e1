// Talking to the HDF5 library: its error stack turned into gt::Error, the
// closing of owned identifiers, and the property lists files and datasets
// are opened with.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>

#include "formats/hdf5/hdf5_internal.hpp"
#include "gtranspose/format.hpp"

namespace gt::fmt::h5 {
namespace {

herr_t collect_error(unsigned, const H5E_error2_t* e, void* data) {
  auto* out = static_cast<std::string*>(data);
  if (e->desc && *e->desc) *out = e->desc;
  else if (char* msg = H5Eget_minor(e->min_num)) {
    *out = msg;
    H5free_memory(msg);
  }
  return 0;
}

}  // namespace

void abandon_file(Hid& file) {
  void* handle = nullptr;
  if (file && H5Fget_vfd_handle(file.get(), H5P_DEFAULT, &handle) >= 0 && handle) {
    // Whatever HDF5 still writes (its shutdown, where a program kept it)
    // goes nowhere, never into the file.
    const int null = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (null >= 0) {
      ::dup2(null, *static_cast<int*>(handle));
      ::close(null);
    }
  }
  H5Eclear2(H5E_DEFAULT);
  file.release();
}

void quiet() {
  thread_local bool done = false;
  if (!done) {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    done = true;
  }
}

// One line, however HDF5 put it: its file drivers' messages carry a ctime()
// (newline included) and the errno's text among descriptors and offsets;
// that text is the reason, said first.
static std::string one_line(const std::string& r) {
  const std::string key = "error message = '";
  const std::size_t at = r.find(key);
  if (at != std::string::npos) {
    const std::size_t end = r.find('\'', at + key.size());
    if (end != std::string::npos) {
      std::string what = r.substr(0, std::min(r.find(':'), r.find(',')));
      return r.substr(at + key.size(), end - at - key.size()) + " (HDF5: " + what + ")";
    }
  }
  std::string out;
  for (char c : r) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
    if (!(c == ' ' && (out.empty() || out.back() == ' '))) out += c;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

std::string h5_reason() {
  std::string r;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, collect_error, &r);
  H5Eclear2(H5E_DEFAULT);
  return r.empty() ? "HDF5 gave no reason" : one_line(r);
}

std::unique_lock<std::mutex> serial() {
#ifdef H5_HAVE_THREADSAFE
  return {};
#else
  static std::mutex m;
  return std::unique_lock<std::mutex>(m);
#endif
}

void fail(ErrorKind kind, const std::string& what) { throw Error(kind, what + ": " + h5_reason()); }

bool Hid::close() {
  if (id_ < 0) return true;
  quiet();
  return H5Idec_ref(std::exchange(id_, H5I_INVALID_HID)) >= 0;
}

void Hid::reset() {
  if (id_ >= 0) {
    quiet();
    H5Idec_ref(id_);
  }
  id_ = H5I_INVALID_HID;
}

Hid check(hid_t id, ErrorKind kind, const std::string& what) {
  if (id < 0) fail(kind, what);
  return Hid(id);
}

Hid strong_close_fapl() {
  Hid fapl(H5Pcreate(H5P_FILE_ACCESS));
  H5Pset_fclose_degree(fapl.get(), H5F_CLOSE_STRONG);
  return fapl;
}

// The 1.8 object format is readable by every HDF5 since 2008 (h5py
// included) and stores attributes larger than 64 KiB densely; the earliest
// format cannot hold them at all.
Hid output_fapl() {
  Hid fapl = strong_close_fapl();
  H5Pset_libver_bounds(fapl.get(), H5F_LIBVER_V18, H5F_LIBVER_LATEST);
  return fapl;
}

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

}  // namespace gt::fmt::h5

// HDF5 1.10 crashes closing, in its shutdown at exit, a file whose metadata
// cannot be written; such a file is abandoned (abandon_file) and the CLI
// turns the shutdown off. Effective only before HDF5 starts.
void gt::hdf5_no_shutdown_at_exit() { H5dont_atexit(); }
