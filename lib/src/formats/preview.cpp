// What the formats say before and after a run without moving a byte
// (format.hpp): the report's input and output objects (describe_matrix),
// and a dry run's output (plan_output): its checks and what its sink would
// ask of the plan, with no file created.
#include <unistd.h>

#include "formats/internal.hpp"
#include "formats/plain_io.hpp"
#include "gtranspose/format.hpp"

namespace gt {

namespace {

// A sink that exists only for the planner: the traits the real one would
// have, predicted (plan_output). Nothing can be written to it.
class PlannedSink final : public Sink {
 public:
  PlannedSink(MatrixInfo info, std::string text, bool concurrent, std::uint64_t reserved, CodecDemand codec)
      : info_(info), text_(std::move(text)), concurrent_(concurrent), reserved_(reserved), codec_(codec) {}
  const MatrixInfo& info() const override { return info_; }
  void write(std::uint64_t, std::uint64_t, std::uint64_t, std::uint64_t, const void*, std::uint64_t) override {
    throw Error(ErrorKind::internal, "a planned output takes no writes");
  }
  void commit() override { throw Error(ErrorKind::internal, "a planned output cannot be committed"); }
  bool concurrent_writes() const override { return concurrent_; }
  std::uint64_t reserved_bytes() const override { return reserved_; }
  CodecDemand codec_demand() const override { return codec_; }
  std::string describe() const override { return text_; }

 private:
  MatrixInfo info_;
  std::string text_;
  bool concurrent_;
  std::uint64_t reserved_;
  CodecDemand codec_;
};

std::string dir_of(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

std::vector<std::string> list_matrices(const std::string& path) {
  if (fmt::sniff_format(path) != Format::hdf5) return {};
  return fmt::hdf5_matrices(path);
}

PlannedOutput plan_output(const std::string& spec, const Source& src, const SinkOptions& opts) {
  PlannedOutput p;
  p.location = output_location(spec, opts.format);
  Location& loc = p.location;
  check_output_file(loc.path, opts.force);
  if (::access(dir_of(loc.path).c_str(), W_OK | X_OK) != 0)
    throw_errno(ErrorKind::output, "cannot create " + loc.path + " in folder " + dir_of(loc.path));
  MatrixInfo info = src.info();
  info.shape = info.shape.transposed();
  const bool hdf5_in = src.location().format == Format::hdf5;
  bool concurrent = true;
  std::uint64_t reserved = 0;
  CodecDemand codec;
  switch (loc.format) {
    case Format::raw: fmt::check_raw_output(loc, src); break;
    case Format::npy: (void)fmt::npy_output_descr(loc, src); break;
    case Format::hdf5:
      // The sink keeps an HDF5 input's dataset name and chunk layout (the
      // chunks transposed, the same filters): it then writes chunks as the
      // source reads them, so its codec threads and caches are predicted
      // as the source's own. Anything else becomes a contiguous /data.
      if (loc.dataset.empty()) loc.dataset = hdf5_in ? src.location().dataset : "/data";
      if (hdf5_in && src.preferred_block().rows) {
        concurrent = false;
        reserved = src.reserved_bytes() - src.index_bytes();  // an output keeps no chunk index
        codec = src.codec_demand();
        codec.bytes_per_thread = codec.writing_bytes_per_thread;
        p.mirrors_input_layout = true;
        p.notes.push_back("the chunked HDF5 output's codec threads and caches are predicted as the input's "
                          "(same chunks and filters)");
      }
      break;
  }
  p.sink = std::make_unique<PlannedSink>(info, format_name(loc.format) + std::string(" ") + loc.path, concurrent,
                                         reserved, codec);
  return p;
}

MatrixDescription describe_matrix(const Location& loc, const MatrixInfo& info, const std::string& text) {
  MatrixDescription d;
  d.path = loc.path;
  d.format = format_name(loc.format);
  d.dataset = loc.dataset;
  d.shape = info.shape;
  d.elem_size = info.elem_size;
  d.dtype = info.dtype ? dtype_name(*info.dtype) : "";
  d.byte_order = info.elem_size == 1 || info.order == ByteOrder::not_applicable ? "n/a"
                 : info.order == ByteOrder::big                                 ? "big"
                                                                                : "little";
  d.text = text;
  if (loc.format == Format::hdf5) {
    Location l = loc;
    fmt::hdf5_storage(l, d.chunks, d.filters);
    d.dataset = l.dataset;
  }
  return d;
}

}  // namespace gt
