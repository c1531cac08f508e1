// A run plan as a user sees it (plan.hpp: summarize_plan): what --dry-run
// prints and what a real run's report begins with. It decides nothing: it
// reads the RunPlan that plan_run() made.
#include <algorithm>
#include <string>

#include "gtranspose/plan.hpp"
#include "gtranspose/sizes.hpp"

namespace gt {

namespace {

std::string staging_of(const RunPlan& p) {
  if (p.engine == EngineKind::cpu && p.direct_in && p.direct_out)
    return "none: the CPU transposes host memory where it lies";
  if (p.engine == EngineKind::cpu)
    return p.info.elem_size && p.host_bytes ? "tiles read into host buffers (" + format_bytes(p.host_bytes) +
                                                  "), transposed there by the CPU, written from them"
                                            : "host buffers";
  std::string s;
  if (p.direct_in && p.direct_out) s = "none: DMA straight from and to pinned host memory";
  else if (p.slot_bytes)
    s = "pinned host slots (" + std::to_string(p.slots) + " of " + format_bytes(p.slot_bytes) + ")" +
        (p.direct_in ? ", the input by DMA straight from pinned memory" : "") +
        (p.direct_out ? ", the output by DMA straight to pinned memory" : "");
  else s = "pinned host memory by DMA";
  return s + "; " + std::to_string(p.device_buffers) + " device tile buffer" + (p.device_buffers == 1 ? "" : "s") +
         " per stream";
}

}  // namespace

PlanSummary summarize_plan(const RunPlan& p) {
  PlanSummary s;
  s.engine = engine_name(p.engine);
  s.kernel = p.kernel;
  s.mode = mode_name(p.mode);
  s.tile = p.tile;
  s.tiles = p.tiles;
  s.threads = p.engine == EngineKind::cpu ? p.threads : 0;
  s.lanes = p.lanes;
  s.readers = p.readers;
  s.writers = p.writers;
  s.read_team = p.read_team;
  s.write_team = p.write_team;
  s.slots = p.slots;
  s.slot_bytes = p.slot_bytes;
  s.staging = staging_of(p);
  s.codec_threads_in = p.codec_threads_in;
  s.codec_threads_out = p.codec_threads_out;
  s.host_budget = p.host_budget;
  s.host_peak = p.host_bytes + p.reserved + p.codec_bytes;
  s.device_budget = p.device_budget;
  s.device_peak = p.device_bytes;
  if (p.mode == RunMode::in_place && p.request.ordered_writes) {
    // The journal saves every pair's tile b before the pair is written
    // (journal_bytes_of in inplace/journal_parts.cpp): the off-diagonal
    // tiles of the lower triangle, and of each diagonal tile the part below
    // its diagonal; together the strictly lower triangle of the matrix.
    const std::uint64_t n = p.info.shape.rows;
    s.journal_bytes = n ? n * (n - 1) / 2 * p.info.elem_size : 0;
    // Its file holds the regions of three of its batches (two the header
    // describes, the one being written; inplace/journal.cpp: place), each of
    // kJournalGroup engine batches: kept_batches + 1 of them in all
    // (journal_batches_kept), and two header slots.
    const std::uint64_t batch = std::uint64_t(p.max_batch) * p.tile_buffer_bytes();
    s.journal_file_bytes = std::uint64_t(p.request.kept_batches + 1) * batch + kJournalHeaderBytes;
  }
  s.notes = p.notes;
  return s;
}

void add_rectangle(PlanSummary& s, const InplaceShape& shape, const PermutePlan& permute) {
  // Each block journals as a square of its side (the summary's figures);
  // a permutation saves one segment per chain of a group, at most one per
  // segment of its region. The permutations are inplace_stages()'s: one per
  // row of blocks where b > 1, the whole's where a > 1.
  const auto saved_by = [&](std::uint64_t index) {
    const PermuteRegion r = permute_region(shape, index);
    return std::min(permute.chains, r.P * r.Q) * permute.segment_bytes;
  };
  const std::uint64_t rows_saved = shape.b > 1 ? saved_by(0) : 0, whole_saved = shape.a > 1 ? saved_by(kPermuteWhole) : 0;
  s.journal_bytes = s.journal_bytes * shape.blocks + shape.a * rows_saved + whole_saved;
  s.journal_file_bytes = std::max(s.journal_file_bytes, std::max(rows_saved, whole_saved) + kJournalHeaderBytes);
  s.notes.push_back("rectangle in place: " + rectangle_stages_text(shape) + "; each block runs with the plan shown");
}

std::string rectangle_stages_text(const InplaceShape& shape) {
  const std::string blocks = std::to_string(shape.blocks) + " square blocks of " + std::to_string(shape.side);
  switch (shape.kind) {
    case InplaceShape::tall: return blocks + ", then a permutation of rows";
    case InplaceShape::wide: return "a permutation of row segments, then " + blocks;
    case InplaceShape::grid:
      return "a permutation of row segments in each of " + std::to_string(shape.a) + " rows of blocks, then " +
             blocks + " (" + std::to_string(shape.a) + " x " + std::to_string(shape.b) +
             "), then a permutation of the whole";
    case InplaceShape::general:
      return std::string("the gcd decomposition (gcd ") + std::to_string(shape.side) + "): " +
             (shape.side > 1 ? "a rotation of every column, " : "") +
             "a shuffle inside every row, a shuffle inside every column";
    default: return blocks;
  }
}

PlanSummary summarize_square_bands(std::uint64_t n, std::size_t es, const SquareBandPlan& bands, std::uint64_t host_mem,
                                   std::uint64_t reserved, std::uint64_t blocks) {
  PlanSummary p;
  p.engine = engine_name(EngineKind::cpu);
  p.kernel = "cpu-blocked";
  p.mode = mode_name(RunMode::in_place);
  p.tile = {bands.rows, n};
  p.tiles = bands.bands * blocks;
  p.threads = bands.threads;
  p.readers = p.writers = 1;
  p.slots = 2;
  p.slot_bytes = bands.rows * n * es;
  p.staging = "bands of " + std::to_string(bands.rows) + " whole rows read into host buffers (" +
              format_bytes(bands.buffer_bytes) + "), each written back as the transpose of its column band: " +
              "its blocks above the diagonal journaled first";
  p.host_budget = host_mem ? host_mem : default_host_budget();
  p.host_peak = bands.buffer_bytes + reserved;
  // The upper triangle, diagonal blocks included.
  std::uint64_t bytes = 0;
  for (std::uint64_t k = 0; k < bands.bands; ++k) {
    const std::uint64_t h = std::min(bands.rows, n - k * bands.rows);
    bytes += h * (n - k * bands.rows) * es;
  }
  p.journal_bytes = bytes * blocks;
  p.journal_file_bytes = bands.slots * bands.slot_bytes + kJournalHeaderBytes;
  return p;
}

PlanSummary summarize_bands(const Shape& s, std::size_t es, const InplaceShape& shape, const BandPlan& bands,
                            std::uint64_t host_mem, std::uint64_t reserved) {
  PlanSummary p;
  p.engine = engine_name(EngineKind::cpu);
  p.mode = mode_name(RunMode::in_place);
  p.tile = {bands.rows, s.cols};
  p.tiles = bands.bands;
  p.threads = bands.threads;
  p.readers = p.writers = 1;
  p.slots = 2;
  p.slot_bytes = bands.band_bytes;
  p.staging = "bands of " + std::to_string(bands.rows) + " whole rows and of " + std::to_string(bands.cols) +
              " whole columns read into host buffers (" + format_bytes(bands.buffer_bytes) +
              "), permuted there by the CPU, journaled, written back";
  p.host_budget = host_mem ? host_mem : default_host_budget();
  p.host_peak = bands.buffer_bytes + reserved;
  // Every pass journals every band's new content: the matrix once a pass.
  // The file holds two bands' data (inplace/journal_bands.cpp) and its header slots.
  p.journal_bytes = bands.passes * s.rows * s.cols * es;
  p.journal_file_bytes = 2 * bands.band_bytes + kJournalHeaderBytes;
  p.notes.push_back("rectangle in place: " + rectangle_stages_text(shape) + "; " + std::to_string(bands.passes) +
                    " passes over the file in " + std::to_string(bands.bands) + " bands, each journaled, then written back");
  return p;
}

}  // namespace gt
