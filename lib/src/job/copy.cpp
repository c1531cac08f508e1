// A source that stores its own transpose (a Fortran-order .npy) needs no
// transposing: its bytes, in order, are the output's (job.hpp).
#include <algorithm>
#include <memory>

#include "core/stages.hpp"
#include "formats/internal.hpp"
#include "gtranspose/error.hpp"
#include "gtranspose/job.hpp"
#include "gtranspose/sizes.hpp"

namespace gt {

namespace {

// The most a band of the copy holds: long enough that each read and write
// is a large sequential transfer, as cp's are, and within the host budget.
constexpr std::uint64_t kMaxBand = std::uint64_t(64) << 20;

}  // namespace

RunReport copy_stored_transpose(Engine& engine, Source& src, Sink& dst, const RunOptions& opts) {
  if (!src.stores_transpose()) throw Error(ErrorKind::internal, "copy_stored_transpose() of " + src.describe());
  const MatrixInfo& in = src.info();
  const Shape out = in.shape.transposed();
  if (dst.info().shape != out || dst.info().elem_size != in.elem_size)
    throw Error(ErrorKind::internal, "output " + to_string(dst.info().shape) + " is not the transpose of input " +
                                         to_string(in.shape));
  // The plan checks the options and budgets exactly as for a transpose.
  const RunPlan plan = plan_run(plan_request(src, dst, opts), engine.caps(opts, in.elem_size));
  const std::size_t es = in.elem_size;
  const std::uint64_t room = std::min(plan.host_budget - plan.reserved, kMaxBand);
  const std::uint64_t row_bytes = checked_mul(out.cols, es, "row size");
  // Whole output rows a band at a time, or pieces of one row where a row
  // alone is larger than the room.
  const std::uint64_t band_rows = std::max<std::uint64_t>(1, room / row_bytes);
  const std::uint64_t piece = room >= row_bytes ? out.cols : std::max<std::uint64_t>(1, room / es);
  const std::uint64_t buf_bytes = std::min(band_rows, out.rows) * piece * es;

  StageClock clock;
  RunReport r = start_report(plan);
  r.engine = "none";
  r.kernel.clear();
  r.threads = 1;
  r.tile_shape = {std::min(band_rows, out.rows), piece};
  r.notes.push_back("the input is stored in Fortran order, so its bytes in order are the transpose: copied as they "
                    "are, no engine ran");
  Intervals t_read, t_write;
  const std::uint64_t total = r.bytes;
  std::uint64_t done = 0, bands = 0;
  // Raw and .npy on both sides: the kernel copies, as cp does (no buffer).
  bool copied = false;
  clock.timed(t_write, [&] {
    copied = fmt::copy_stored_bytes(src, dst, [&](std::uint64_t d) { if (opts.progress) opts.progress(d, total); },
                                    opts.cancel);
  });
  if (copied) {
    r.tiles = 1;
    r.tile_shape = out;
    set_stage(r, "copy", t_write, total);
    r.host_buffers = 0;
    r.notes.back() += " (copy_file_range)";
    end_report(r, clock.now());
    r.input = src.describe();
    r.output = dst.describe();
    return r;
  }
  std::unique_ptr<unsigned char[]> buf(new unsigned char[std::size_t(buf_bytes)]);
  for (std::uint64_t r0 = 0; r0 < out.rows; r0 += band_rows) {
    const std::uint64_t h = std::min(band_rows, out.rows - r0);
    for (std::uint64_t c0 = 0; c0 < out.cols; c0 += piece) {
      if (opts.cancel && opts.cancel->load()) throw Error(ErrorKind::cancelled, "interrupted");
      const std::uint64_t w = std::min(piece, out.cols - c0);
      clock.timed(t_read, [&] { src.read_transpose(r0, c0, h, w, buf.get(), w); });
      clock.timed(t_write, [&] { dst.write(r0, c0, h, w, buf.get(), w); });
      ++bands;
      done += h * w * es;
      if (opts.progress) opts.progress(done, total);
    }
    dst.rows_complete(r0, h);
  }
  r.tiles = bands;
  set_stage(r, "read", t_read, total);
  set_stage(r, "write", t_write, total);
  r.host_buffers = buf_bytes;
  r.device_mem_budget = r.device_mem_peak = 0;
  end_report(r, clock.now());
  r.input = src.describe();
  r.output = dst.describe();
  return r;
}

}  // namespace gt
