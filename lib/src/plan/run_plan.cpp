// The run plan (plan.hpp): every default, cap and fit check of a run.
#include <algorithm>
#include <limits>
#include <numeric>
#include <string>

#include "gtranspose/error.hpp"
#include "gtranspose/machine.hpp"
#include "gtranspose/plan.hpp"
#include "gtranspose/sizes.hpp"

namespace gt {

const char* engine_name(EngineKind k) { return k == EngineKind::cuda ? "cuda" : "cpu"; }
const char* mode_name(RunMode m) { return m == RunMode::in_place ? "in-place" : "out-of-place"; }

namespace {

// "<n>M", rounded up: a value the user can pass as a budget.
std::string mib_text(std::uint64_t bytes) { return std::to_string((bytes + (1u << 20) - 1) >> 20) + "M"; }
// "<n>K" below a MiB, else "<n>M", rounded up.
std::string size_text(std::uint64_t bytes) {
  return bytes < (1u << 20) ? std::to_string((bytes + 1023) >> 10) + "K" : mib_text(bytes);
}

}  // namespace

std::uint64_t default_host_budget() {
  const std::uint64_t ram = usable_ram_bytes();
  const std::uint64_t b = ram ? ram / 4 : (std::uint64_t(1) << 30);
  return std::clamp<std::uint64_t>(b, std::uint64_t(64) << 20, std::uint64_t(16) << 30);
}

std::uint64_t default_device_budget(std::uint64_t device_free) {
  return std::min<std::uint64_t>(device_free / 2, std::uint64_t(4) << 30);
}

std::uint64_t recovery_budget(std::uint64_t host_mem, std::uint64_t reserved) {
  const std::uint64_t host = host_mem ? host_mem : default_host_budget();
  return host > reserved ? host - reserved : host;
}

RankShare plan_rank_share(std::uint64_t out_rows, std::uint64_t align, int rank, int ranks) {
  if (ranks < 1 || rank < 0 || rank >= ranks) throw Error(ErrorKind::internal, "rank out of range in plan_rank_share");
  const std::uint64_t a = std::max<std::uint64_t>(1, align);
  const std::uint64_t units = (out_rows + a - 1) / a, n = std::uint64_t(ranks);
  // Units [k*units/n, (k+1)*units/n): sizes differ by at most one.
  auto first_row = [&](std::uint64_t k) {
    const std::uint64_t u = units / n * k + units % n * k / n;  // k*units/n without overflow
    return std::min(out_rows, u * a);
  };
  const std::uint64_t r0 = first_row(std::uint64_t(rank)), r1 = first_row(std::uint64_t(rank) + 1);
  return {r0, r1 - r0};
}

int plan_rank_device(int local_rank, int gpus) { return gpus > 0 ? std::max(0, local_rank) % gpus : -1; }

std::uint64_t plan_rank_host_budget(std::uint64_t host_mem, int local_ranks) {
  if (host_mem) return host_mem;
  return std::max<std::uint64_t>(default_host_budget() / std::uint64_t(std::max(1, local_ranks)),
                                 std::uint64_t(64) << 20);
}

int plan_rank_threads(int wanted, int local_ranks) {
  if (wanted <= 0) return wanted;
  return std::max(1, wanted / std::max(1, local_ranks));
}

InplaceShape plan_inplace_shape(const Shape& s, const std::string& what) {
  InplaceShape r;
  if (s.rows == 0 || s.cols == 0) throw Error(ErrorKind::usage, "cannot transpose an empty matrix in place (" + what + ")");
  r.side = std::gcd(s.rows, s.cols);
  if (s.rows == s.cols) return r;
  r.a = s.rows / r.side;
  r.b = s.cols / r.side;
  // A grid of small blocks would move segments of a few elements, and one
  // of many blocks runs each as a square of its own: both go the general way.
  if (r.a > 1 && r.b > 1 && (r.side < kInplaceMinSide || r.a * r.b > kInplaceMaxBlocks)) {
    r.kind = InplaceShape::general;
    r.blocks = 0;
    return r;
  }
  r.blocks = r.a * r.b;
  r.kind = r.b == 1 ? InplaceShape::tall : r.a == 1 ? InplaceShape::wide : InplaceShape::grid;
  return r;
}

BandPlan plan_bands(const Shape& s, std::size_t es, std::uint64_t host_mem, std::uint64_t reserved, int threads) {
  const std::uint64_t host = host_mem ? host_mem : default_host_budget();
  const std::uint64_t room = host > reserved ? host - reserved : 0;
  const std::uint64_t R = s.rows, C = s.cols;
  const std::uint64_t row = checked_mul(C, es, "a row"), col = checked_mul(R, es, "a column");
  // Two buffers of one row, or of one column, whichever is longer.
  const std::uint64_t least = 2 * std::max(row, col);
  if (least > room)
    throw Error(ErrorKind::usage, "in place, a " + to_string(s) + " matrix of " + std::to_string(es) +
                                      "-byte elements moves in bands of whole rows and columns, and {host_mem} " +
                                      size_text(host) +
                                      (reserved ? " (less " + size_text(reserved) + " the formats hold)" : "") +
                                      " holds no two of them: give {host_mem} " + size_text(least + reserved) +
                                      " or more");
  BandPlan p;
  p.threads = std::max(1, threads);
  const std::uint64_t half = room / 2;  // >= max(row, col)
  const std::uint64_t band = std::min(half, kBandBytes);
  p.rows = std::clamp<std::uint64_t>(band / row, 1, R);
  p.cols = std::clamp<std::uint64_t>(band / col, 1, C);
  if (p.cols * es < kBandPieceBytes)  // longer pieces where the budget holds them
    p.cols = std::max(p.cols, std::min({C, (kBandPieceBytes + es - 1) / es, std::min(half, kBandMaxBytes) / col}));
  p.group = std::clamp<std::uint64_t>(64 / es, 1, p.cols);
  p.band_bytes = std::max(p.rows * row, p.cols * col);
  p.buffer_bytes = 2 * p.band_bytes;
  const bool rotated = std::gcd(R, C) > 1;
  p.passes = rotated ? 3 : 2;
  p.bands = (rotated ? 2 : 1) * ((C + p.cols - 1) / p.cols) + (R + p.rows - 1) / p.rows;
  return p;
}

std::uint64_t square_slot_bytes(std::uint64_t rows, std::size_t es) {
  const std::uint64_t b = checked_mul(checked_mul(rows, rows, "a band's block"), es, "a band's block");
  return (b + kSquareTrailerBytes + 4095) / 4096 * 4096;
}

std::optional<SquareBandPlan> plan_square_bands(std::uint64_t n, std::size_t es, std::uint64_t host_mem,
                                                std::uint64_t reserved, int threads, std::uint64_t rows) {
  if (n == 0) return std::nullopt;
  const std::uint64_t host = host_mem ? host_mem : default_host_budget();
  const std::uint64_t room = host > reserved ? host - reserved : 0;
  const std::uint64_t row = checked_mul(n, es, "a row");
  // Two sets of two bands of t rows (the band written while the next is
  // built) and two t x t blocks (with their trailers).
  const auto need = [&](std::uint64_t t) { return 4 * t * row + 2 * square_slot_bytes(t, es); };
  std::uint64_t t = rows;
  if (t) {
    if (t > n || need(t) > room)
      throw Error(ErrorKind::usage, "the interrupted in-place run moves bands of " + std::to_string(t) +
                                        " rows (four at once, with two blocks of " + std::to_string(t) + "x" +
                                        std::to_string(t) + "), which need {host_mem} " +
                                        size_text(need(std::min(t, n)) + reserved) + ", more than " + size_text(host) +
                                        (reserved ? " (less " + size_text(reserved) + " the formats hold)" : "") +
                                        ": resume with {host_mem} " + size_text(need(std::min(t, n)) + reserved) +
                                        " or more");
  } else {
    const std::uint64_t want = std::max<std::uint64_t>(1, (n + kSquareBands - 1) / kSquareBands);
    t = std::min(want, std::max<std::uint64_t>(1, kBandMaxBytes / row));
    while (t > 1 && need(t) > room) t = t * 7 / 8;
    if (need(t) > room || t < std::min(want, kSquareBandMinRows)) return std::nullopt;
  }
  SquareBandPlan p;
  p.rows = t;
  p.bands = (n + t - 1) / t;
  p.slot_bytes = square_slot_bytes(t, es);
  for (std::uint64_t k = 0; k < p.bands; ++k) p.slots = std::max(p.slots, (k + 1) * (p.bands - k));
  p.buffer_bytes = need(t);
  p.threads = std::max(1, threads);
  return p;
}

PermuteRegion permute_region(const InplaceShape& s, std::uint64_t index) {
  // Segments of `side` elements. Tall, block i's row j (index i*side + j)
  // becomes the output's row j, segment i; wide, row j's segment i becomes
  // block i's row j; a grid does the wide step in each row of blocks and
  // the tall one over the whole.
  if (index == kPermuteWhole) return {s.a, s.b * s.side, 0};
  return {s.side, s.b, index * s.side * s.b};
}

PermutePlan plan_permute(const InplaceShape& shape, std::size_t elem_size, std::uint64_t host_mem,
                         std::uint64_t reserved) {
  PermutePlan p;
  p.segment_bytes = shape.side * elem_size;
  const std::uint64_t segments = shape.segments();
  const std::uint64_t host = host_mem ? host_mem : default_host_budget();
  const std::uint64_t room = host > reserved ? host - reserved : host;
  p.buffer_bytes = std::max(p.segment_bytes, std::min(kPermuteBufferBytes, room / 2));
  p.chains = std::clamp<std::uint64_t>(kPermuteJournalBytes / std::max<std::uint64_t>(1, p.segment_bytes), 1, segments);
  // Chains of about equal length, so a group's steps are its chains' length.
  p.chain_length = std::max<std::uint64_t>(1, (segments + p.chains - 1) / p.chains);
  return p;
}

// Options only a GPU uses, given to the CPU engine, would be accepted and
// then ignored: refused instead, the same for every program.
void check_applicable(const PlanRequest& req, const EngineCaps& caps) {
  if (caps.kind != EngineKind::cpu) return;
  const std::string why = "the CPU engine runs this (chosen by {engine}, or by auto where no GPU is found), and ";
  if (req.device_mem) throw Error(ErrorKind::usage, why + "it uses no device memory: drop {device_mem}");
  if (req.streams) throw Error(ErrorKind::usage, why + "it uses no CUDA streams: drop {streams}");
  if (!req.kernel.empty() && req.kernel != "auto")
    throw Error(ErrorKind::usage, why + "it runs its own transposer, not the CUDA kernel '" + req.kernel +
                                      "': drop {kernel}, or run on a GPU with {engine} cuda");
}

namespace {

// kMinTileElems and kFreeTiles (plan.hpp): a run of many tiny tiles takes
// forever; refused with what would do.
void check_tile_floor(const RunPlan& p) {
  const PlanRequest& req = p.request;
  const std::uint64_t elems = p.tile.rows * p.tile.cols;
  if (req.resumed_block || p.tiles <= kFreeTiles || elems >= kMinTileElems) return;
  const std::string have = std::to_string(p.tiles) + " " + (p.pairs ? "tile pairs" : "tiles") + " of " +
                           to_string(p.tile) + ": a run of more than " + std::to_string(kFreeTiles) +
                           " tiles needs tiles of at least " + std::to_string(kMinTileElems) +
                           " elements, or its reads and writes are a few bytes each and it takes many times as long";
  if (req.tile_elems && req.tile_elems < kMinTileElems)
    throw Error(ErrorKind::usage, "{tile} " + std::to_string(req.tile_elems) + " makes " + have +
                                      ": give {tile} 4K or more (or leave it out)");
  const std::uint64_t floor = kMinTileElems * req.info.elem_size;
  const bool in = p.mode == RunMode::in_place;
  if (p.engine == EngineKind::cpu)
    throw Error(ErrorKind::usage, "{host_mem} " + size_text(p.host_budget) + " makes " + have + ": give {host_mem} " +
                                      size_text(req.reserved + (in ? kCpuInplaceBuffers : kCpuOutOfPlaceBuffers) * floor) +
                                      " or more");
  const std::uint64_t lanes = std::uint64_t(std::max(1, p.requested_lanes));
  throw Error(ErrorKind::usage, "{host_mem} " + size_text(p.host_budget) + " and {device_mem} " +
                                    size_text(p.device_budget) + " make " + have + ": give {host_mem} " +
                                    size_text(req.reserved + (in ? 8 : 4) * floor) + " and {device_mem} " +
                                    size_text((in ? 3 : 2) * lanes * floor) + " or more");
}

std::string plural(std::uint64_t n, const std::string& word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

// What one tile may hold when `buffers` of them share `budget`: the share,
// capped at kMaxTileBytes unless the user chose the tile size.
std::uint64_t share_of(std::uint64_t budget, unsigned buffers, std::uint64_t tile_elems) {
  const std::uint64_t share = budget / buffers;
  return tile_elems || share < kMaxTileBytes ? share : kMaxTileBytes;
}

struct Budgets {
  std::uint64_t host = 0;    // the whole host budget
  std::uint64_t engine = 0;  // what is left for the engine's buffers
  std::uint64_t device = 0;
  int codec_in = 0, codec_out = 0;  // the formats' codec threads
  std::uint64_t codec = 0;          // their buffers
  std::uint64_t block = 0;          // bytes of one whole source block (HDF5 chunk), 0 if none
};

// Bytes of one source block (HDF5 chunk) as a tile holds it: clipped to the
// matrix. 0 when the source has none.
std::uint64_t block_bytes(const PlanRequest& req) {
  const Shape& b = req.preferred_block;
  if (!b.rows || !b.cols || req.mode != RunMode::out_of_place) return 0;
  return std::min(b.rows, req.info.shape.rows) * std::min(b.cols, req.info.shape.cols) * req.info.elem_size;
}

// Codec threads for one side: a format with buffers per thread gets as many
// as it wants while all of them take at most `room`; one that needs none
// (unfiltered chunks: positioned I/O straight to and from the tiles) gets
// kIoThreads at most, the I/O threads' count.
int codec_threads(const CodecDemand& d, int t) {
  if (d.threads <= 0) return 0;
  return std::max(1, std::min(d.threads, d.bytes_per_thread ? t : kIoThreads));
}

Budgets budgets_of(const PlanRequest& req, const EngineCaps& caps) {
  Budgets b;
  b.host = req.host_mem ? req.host_mem : default_host_budget();
  b.block = block_bytes(req);
  const CodecDemand &in = req.codec_in, &out = req.codec_out;
  const std::uint64_t per_in = in.threads > 0 ? in.bytes_per_thread : 0;
  const std::uint64_t per_out = out.threads > 0 ? out.bytes_per_thread : 0;
  // The least a run can go with: what the formats hold, one codec thread a
  // side, and one input and one output tile of a whole chunk. A chunk cache
  // the library path holds (reserved) may moreover take at most half.
  const std::uint64_t least = req.reserved + per_in + per_out + 2 * b.block;
  const std::uint64_t need = std::max(least, 2 * req.reserved);
  if (need > b.host) {
    std::string what = req.reserved_what.empty() ? req.what : req.reserved_what;
    throw Error(ErrorKind::usage,
                what + ": stored in chunks that take " + format_bytes(need) +
                    " of memory to transpose (" + (b.block ? "a tile of one chunk in and one out" : "its chunk cache") +
                    (per_in + per_out ? ", one codec thread's buffers a side" : "") +
                    (req.reserved && b.block ? ", the chunk cache" : "") + "): give {host_mem} of at least " +
                    format_bytes(need));
  }
  // More codec threads while their buffers take at most half of what is
  // left beyond that least; the rest makes the tiles larger. Both sides
  // compressed: one pool of t threads decodes and encodes (the formats
  // share it when given the same count), each thread holding buffers for
  // both sides, so deflate's higher cost never leaves threads of a fixed
  // split idle and t never exceeds the cores the formats asked for.
  const std::uint64_t room = (b.host - least) / 2;
  const bool one_pool = per_in && per_out;
  const auto side = [&](const CodecDemand& d, int t) { return one_pool ? t : codec_threads(d, t); };
  int t = std::max({1, in.threads, out.threads});
  for (; t > 1; --t) {
    const std::uint64_t extra = std::uint64_t(side(in, t) - (per_in ? 1 : 0)) * per_in +
                                std::uint64_t(side(out, t) - (per_out ? 1 : 0)) * per_out;
    if (extra <= room) break;
  }
  b.codec_in = side(in, t);
  b.codec_out = side(out, t);
  b.codec = std::uint64_t(b.codec_in) * per_in + std::uint64_t(b.codec_out) * per_out;
  b.engine = b.host - req.reserved - b.codec;
  if (caps.kind == EngineKind::cuda) b.device = req.device_mem ? req.device_mem : default_device_budget(caps.device_free);
  return b;
}

// A resumed run keeps the tiles its journal was written with: refuses a
// budget they do not fit, naming the budget that would.
void require_resumed_fit(const PlanRequest& req, std::uint64_t need, std::uint64_t have, const char* param) {
  if (need <= have) return;
  const std::uint64_t b = req.resumed_block;
  const std::uint64_t give = need + (std::string(param) == "host_mem" ? req.reserved : 0);
  throw Error(ErrorKind::usage, "the journal of " + req.what + " was written with " + std::to_string(b) + "x" +
                                    std::to_string(b) + " tiles, which need {" + param + "} " + mib_text(give) +
                                    " or more: rerun with {resume} {" + param + "} " + mib_text(give));
}

void check_kernel(const EngineCaps& caps, std::uint64_t h, std::uint64_t w, std::size_t es) {
  std::string why;
  if (caps.kernel_fits && !caps.kernel_fits(h, w, es, &why))
    throw Error(ErrorKind::usage, "kernel '" + caps.kernel + "' cannot move this run's " + std::to_string(h) + "x" +
                                      std::to_string(w) + " tiles: " + why + "; use {kernel} auto");
}

RunPlan base_plan(const PlanRequest& req, const EngineCaps& caps, const Budgets& b) {
  if (!supported_elem_size(req.info.elem_size))
    throw Error(ErrorKind::usage, "unsupported element size " + std::to_string(req.info.elem_size) + " bytes");
  if (req.mode == RunMode::in_place && req.info.shape.rows != req.info.shape.cols)
    throw Error(ErrorKind::usage, "in-place transpose needs a square matrix, not " + to_string(req.info.shape));
  RunPlan p;
  p.request = req;
  p.caps = caps;
  p.engine = caps.kind;
  p.mode = req.mode;
  p.kernel = caps.kernel;
  p.info = req.info;
  p.host_budget = b.host;
  p.reserved = req.reserved;
  p.codec_threads_in = b.codec_in;
  p.codec_threads_out = b.codec_out;
  p.codec_bytes = b.codec;
  p.device_budget = b.device;
  p.notes = caps.notes;
  if (req.reserved)
    p.notes.push_back("HDF5 chunk cache and chunk index: " + format_bytes(req.reserved) + " of the host budget");
  if (b.codec_in && b.codec_in == b.codec_out && req.codec_in.bytes_per_thread && req.codec_out.bytes_per_thread)
    p.notes.push_back("HDF5 chunk threads: one pool of " + std::to_string(b.codec_in) +
                      " decoding and encoding, " + format_bytes(b.codec) + " of codec buffers");
  else if (b.codec_in || b.codec_out)
    p.notes.push_back("HDF5 chunk threads: " + std::to_string(b.codec_in) + " reading, " + std::to_string(b.codec_out) +
                      " writing" + (b.codec ? ", " + format_bytes(b.codec) + " of codec buffers" : ""));
  return p;
}

PairGrid pair_grid(const PlanRequest& req, std::uint64_t tile_bytes) {
  const std::uint64_t n = req.info.shape.rows;
  return req.resumed_block ? PairGrid::with_block(n, req.resumed_block)
                           : PairGrid(n, req.info.elem_size, tile_bytes, req.tile_elems);
}

void set_pairs(RunPlan& p, const PlanRequest& req, PairGrid g) {
  p.first_pair = std::min(req.first_pair, g.count());
  p.tile = {g.block(), g.block()};
  p.tiles = g.count();
  p.pairs = g;
}

// --- the CPU engine: a reader, the transposer's threads, a writer ---------------

// The CPU engine's tiles on host memory (no buffers): 256 MiB, or the
// caller's tile of elements (bytes saturating: tile_capacity takes the
// smaller of the two).
std::uint64_t direct_tile_bytes(const PlanRequest& req, std::size_t es) {
  if (!req.tile_elems) return kMaxTileBytes;
  return req.tile_elems > std::numeric_limits<std::uint64_t>::max() / es ? std::numeric_limits<std::uint64_t>::max()
                                                                         : req.tile_elems * es;
}

// Host memory where it lies: no slots, no host buffers, direct tiles.
void plan_direct(RunPlan& p, const PlanRequest& req) {
  p.direct_in = p.direct_out = true;
  p.tile_bytes = direct_tile_bytes(req, req.info.elem_size);
  p.slots = 0;
  p.slot_bytes = 0;
  p.host_bytes = 0;
}

RunPlan plan_cpu(const PlanRequest& req, const EngineCaps& caps, const Budgets& b) {
  RunPlan p = base_plan(req, caps, b);
  const std::size_t es = req.info.elem_size;
  p.threads = caps.threads;
  if (req.mode == RunMode::out_of_place && req.in.in_memory && req.out.in_memory) {
    // Host memory to host memory: the transposer reads the input and writes
    // the output where they lie, a tile at a time (the tiles only pace
    // progress and cancelling); staged through tile buffers, each element
    // was copied twice more (docs/PERF.md, session of 2026-12-07, "The CPU
    // engine on host memory": f32 12345x6789 on 2 cores 147-161 ms staged
    // against 45-52 direct).
    plan_direct(p, req);
    p.grid.emplace(GridRequest{req.info.shape, es, p.tile_bytes, req.preferred_block, req.tile_elems});
    p.tile = {p.grid->tile_h(), p.grid->tile_w()};
    p.tiles = p.grid->count();
    return p;
  }
  if (req.mode == RunMode::out_of_place) {
    // Tiles of whole chunks: where four do not fit, one slot of two (an
    // input and an output tile) does (budgets_of made sure).
    const unsigned buffers =
        b.block && !req.tile_elems && b.engine / kCpuOutOfPlaceBuffers < b.block ? 2 : kCpuOutOfPlaceBuffers;
    p.tile_bytes = share_of(b.engine, buffers, req.tile_elems);
    p.grid.emplace(GridRequest{req.info.shape, es, p.tile_bytes, req.preferred_block, req.tile_elems});
    p.tile = {p.grid->tile_h(), p.grid->tile_w()};
    p.tiles = p.grid->count();
    // Two slots of (input tile, output tile) let reading, transposing and
    // writing overlap; a single tile needs only one slot.
    p.slots = p.tiles > 1 && buffers == kCpuOutOfPlaceBuffers ? 2 : 1;
    if (p.tiles > 1 && p.slots == 1)
      p.notes.push_back("one tile slot: {host_mem} holds one input and one output tile of whole chunks; more "
                        "overlaps reading and writing");
    p.slot_bytes = 2 * p.tile_buffer_bytes();
    p.host_bytes = std::uint64_t(p.slots) * p.slot_bytes;
    return p;
  }
  if (req.in.in_memory && !req.ordered_writes && !req.resumed_block) {
    // A square in host memory: each pair of tiles swapped where it lies
    // (cpu_transpose_pair, cpu_transpose_inplace on the diagonal), no tile
    // buffers; the tiles only pace progress and cancelling (docs/PERF.md,
    // session of 2026-12-07: f32 16384^2 337-370 ms staged against 81-86).
    plan_direct(p, req);
    set_pairs(p, req, pair_grid(req, p.tile_bytes));
    return p;
  }
  p.tile_bytes = share_of(b.engine, req.kept_batches ? cpu_journaled_buffers(req.kept_batches) : kCpuInplaceBuffers,
                          req.tile_elems);
  set_pairs(p, req, pair_grid(req, p.tile_bytes));
  const std::uint64_t n = req.info.shape.rows, blk = p.pairs->block();
  // Kept batches hold their slots: one more to store into, one to read into.
  p.slots = req.kept_batches ? int(std::min<std::uint64_t>(p.tiles, std::uint64_t(req.kept_batches) + 2))
                             : p.tiles > 1 ? 2 : 1;
  p.slot_bytes = 2 * p.tile_buffer_bytes();
  p.scratch = n % blk != 0 && p.pairs->tiles_per_side() > 1;
  p.host_bytes = std::uint64_t(p.slots) * p.slot_bytes + (p.scratch ? p.tile_buffer_bytes() : 0);
  if (req.resumed_block) require_resumed_fit(req, p.host_bytes, b.engine, "host_mem");
  return p;
}

// --- the CUDA engine: readers, lanes (streams), writers ----------------------------

// kStagingTeam: `threads` copy threads of a side in host memory become
// threads / team readers (writers), each splitting its tiles with its team.
void in_teams(int& threads, int& team, bool memory) {
  if (!memory || threads < kStagingTeam) return;
  team = kStagingTeam;
  threads /= kStagingTeam;
}

std::string team_text(int threads, int team, const char* what) {
  return plural(std::uint64_t(threads), what) + (team > 1 ? " (" + std::to_string(team) + " copying each tile)" : "");
}

std::string io_note(const RunPlan& p) {
  return plural(p.lanes, "stream") + ", " + plural(p.slots, "staging slot") +
         (p.slot_bytes ? " of " + format_bytes(p.slot_bytes) : " (direct DMA)") + ", " +
         team_text(p.readers, p.read_team, "reader thread") + ", " + team_text(p.writers, p.write_team, "writer thread");
}

// Whether a staged run from host memory takes tiles that stay in the
// last-level cache (plan_cache_staging) with `slots` slots: only where the
// caller named no tile.
bool cache_staged(const PlanRequest& req, const EngineCaps& caps, int slots) {
  return !req.tile_elems && req.in.in_memory && plan_cache_staging(caps.host_cores, caps.host_cache_bytes, slots);
}

// `tile_cap` 0: the first try; otherwise the bound a smaller plan halved to.
// `lanes` 0: the requested lanes.
RunPlan plan_cuda_out(const PlanRequest& req, const EngineCaps& caps, const Budgets& b, std::uint64_t tile_cap,
                      int lanes) {
  RunPlan p = base_plan(req, caps, b);
  const std::size_t es = req.info.elem_size;
  p.direct_in = req.in.in_memory && req.in.pinned;
  p.direct_out = req.out.in_memory && req.out.pinned;
  const bool staged = !(p.direct_in && p.direct_out);
  p.requested_lanes = req.streams > 0 ? req.streams : kDefaultLanes;
  p.lanes = lanes ? lanes : p.requested_lanes;
  p.readers = p.direct_in ? 1 : !req.in.concurrent ? 1 : req.in.in_memory ? kMemoryThreads : kIoThreads;
  p.writers = p.direct_out ? 1 : !req.out.concurrent ? 1 : req.out.in_memory ? kMemoryThreads : kIoThreads;
  // Staged host memory: the same copy threads, in teams that split each tile.
  in_teams(p.readers, p.read_team, !p.direct_in && req.in.concurrent && req.in.in_memory);
  in_teams(p.writers, p.write_team, !p.direct_out && req.out.concurrent && req.out.in_memory);
  p.threads = p.readers * p.read_team + p.writers * p.write_team;
  // Enough slots for every lane and every I/O thread to hold a tile at once.
  const int want_slots = p.requested_lanes + p.readers + p.writers;

  // A lane holds an input and an output tile; a slot one staging tile (the
  // D2H lands back in the buffer the H2D read; the stream orders the two).
  std::uint64_t tb = b.device / (2 * std::uint64_t(p.requested_lanes));
  if (staged) tb = std::min(tb, b.engine / std::uint64_t(std::min(want_slots, 4)));
  if (!req.tile_elems) tb = std::min(tb, staged ? kStagedTileBytes : kMaxTileBytes);
  // Host memory both sides, staged: slots that stay in the last-level cache.
  if (staged && req.out.in_memory && cache_staged(req, caps, want_slots)) tb = std::min(tb, kCacheStagedTileBytes);
  // Tiles of whole chunks where two staging slots of one hold them
  // (budgets_of made sure they do) and the lanes' device buffers too; a
  // device too small for that gets tiles that cut chunks, slower (each
  // chunk decoded for every tile it meets), never over a budget.
  if (b.block && !req.tile_elems && tb < b.block && (!staged || 2 * b.block <= b.engine) &&
      2 * std::uint64_t(p.lanes) * b.block <= b.device)
    tb = b.block;
  p.tile_bytes = tile_cap ? tile_cap : tb;
  p.grid.emplace(GridRequest{req.info.shape, es, p.tile_bytes, req.preferred_block, req.tile_elems});
  p.tile = {p.grid->tile_h(), p.grid->tile_w()};
  p.tiles = p.grid->count();
  check_kernel(caps, p.tile.rows, p.tile.cols, es);

  const std::uint64_t buf = p.tile_buffer_bytes();
  // Never more slots than tiles: pinning a slot that no tile uses is waste.
  p.slots = int(std::min<std::uint64_t>(
      p.tiles, staged ? std::clamp<std::uint64_t>(b.engine / buf, 2, std::uint64_t(want_slots)) : 2 * p.lanes));
  p.slot_bytes = staged ? buf : 0;
  p.device_buffers = 2;
  p.device_buffer_bytes = buf;
  p.host_bytes = std::uint64_t(p.slots) * p.slot_bytes;
  p.device_bytes = std::uint64_t(p.lanes) * 2 * buf;
  p.notes.push_back(io_note(p));
  return p;
}

RunPlan plan_cuda_in(const PlanRequest& req, const EngineCaps& caps, const Budgets& b, std::uint64_t tile_cap,
                     int lanes) {
  RunPlan p = base_plan(req, caps, b);
  const std::size_t es = req.info.elem_size;
  // Straight DMA into the matrix only when no writer needs to see the writes.
  const bool direct = req.in.in_memory && req.in.pinned && !req.ordered_writes;
  const bool journaled = req.ordered_writes;
  p.direct_in = p.direct_out = direct;
  p.requested_lanes = req.streams > 0 ? req.streams : journaled ? kJournaledLanes : kDefaultLanes;
  p.lanes = lanes ? lanes : p.requested_lanes;
  p.readers = direct                ? 1
              : !req.in.concurrent  ? 1
              : journaled           ? kJournaledReaders
              : req.in.in_memory    ? kMemoryThreads
                                    : kIoThreads;
  // A journal orders the writes (one writer, in batches); the plain writer
  // has no order to keep, so several threads write pairs at once.
  p.writers = (!journaled && !direct && req.in.concurrent) ? (req.in.in_memory ? kMemoryThreads : kIoThreads) : 1;
  p.threads = p.readers + p.writers;
  const int want_slots = journaled ? journaled_slots(req.kept_batches) : p.requested_lanes + p.readers + p.writers + 1;

  // A lane holds a pair's two tiles and one more for the kernels' output; a
  // slot a pair's two tiles on the host.
  std::uint64_t tb = b.device / (3 * std::uint64_t(p.requested_lanes));
  // A writer that keeps batches holds their slots and reads into one more.
  if (!direct)
    tb = std::min(tb, b.engine / (2 * std::uint64_t(std::max(std::min(want_slots, 4), req.kept_batches + 1))));
  if (!req.tile_elems) tb = std::min(tb, direct || journaled ? kMaxTileBytes : kStagedTileBytes);
  // Host memory staged (the plain writer): slots of a pair's two tiles that
  // stay in the last-level cache, as out of place.
  if (!direct && !journaled && cache_staged(req, caps, want_slots)) tb = std::min(tb, kCacheStagedTileBytes / 2);
  p.tile_bytes = tile_cap ? tile_cap : tb;
  if (req.resumed_block) {
    const std::uint64_t fixed = req.resumed_block * req.resumed_block * es;
    p.tile_bytes = fixed;
    require_resumed_fit(req, 3 * fixed, b.device, "device_mem");
    // A writer that keeps batches needs a slot more to read the next pair into.
    if (!direct) require_resumed_fit(req, 2 * (std::uint64_t(req.kept_batches) + 1) * fixed, b.engine, "host_mem");
    if (!lanes) p.lanes = int(std::max<std::uint64_t>(1, std::min<std::uint64_t>(p.lanes, b.device / (3 * fixed))));
  }
  set_pairs(p, req, pair_grid(req, p.tile_bytes));
  const std::uint64_t blk = p.pairs->block();
  check_kernel(caps, blk, blk, es);

  const std::uint64_t tile = p.tile_buffer_bytes();
  // One slot when the budget holds only one pair (a resumed run's fixed
  // tiles): slower, never over the host budget.
  const std::uint64_t least = std::uint64_t(req.kept_batches) + 1;
  p.slots = int(std::min<std::uint64_t>(
      std::max<std::uint64_t>(1, p.tiles - p.first_pair),
      direct ? 2 * p.lanes : std::clamp<std::uint64_t>(b.engine / (2 * tile), least, std::uint64_t(std::max<int>(want_slots, int(least))))));
  p.slot_bytes = direct ? 0 : 2 * tile;
  // Batches peek at the next pair back from the GPU: one writer thread only.
  // A journal takes one pair at a time, which measured fastest (PERF.md 35-36).
  p.max_batch = p.writers > 1 || journaled ? 1 : std::size_t(std::max(1, p.slots / 2));
  p.device_buffers = 3;
  p.device_buffer_bytes = tile;
  p.host_bytes = std::uint64_t(p.slots) * p.slot_bytes;
  p.device_bytes = std::uint64_t(p.lanes) * 3 * tile;
  p.notes.push_back(io_note(p));
  return p;
}

RunPlan plan_cuda(const PlanRequest& req, const EngineCaps& caps, std::uint64_t tile_cap, int lanes) {
  const Budgets b = budgets_of(req, caps);
  return req.mode == RunMode::out_of_place ? plan_cuda_out(req, caps, b, tile_cap, lanes)
                                           : plan_cuda_in(req, caps, b, tile_cap, lanes);
}

// The checks and notes every plan ends with.
RunPlan finished(RunPlan p) {
  check_tile_floor(p);
  if (p.first_pair)
    p.notes.push_back("resumed from the journal: " + std::to_string(p.first_pair) + " of " +
                      plural(p.tiles, "tile pair") + " were done before");
  return p;
}

}  // namespace

int plan_prefault_threads(std::uint64_t bytes, int cores) {
  const std::uint64_t per_thread = 16 * kTeamBandBytes;
  return int(std::clamp<std::uint64_t>(bytes / per_thread, 1, std::uint64_t(std::max(1, cores))));
}

bool plan_streaming_copy(std::uint64_t row_bytes, std::uint64_t bytes, int cores, bool into_buffer) {
  if (into_buffer && bytes <= kCacheStagedTileBytes) return false;
  return cores >= kStreamingMinCores && row_bytes >= kStreamingMinRowBytes && bytes >= kStreamingMinBytes;
}

bool plan_cache_staging(int cores, std::uint64_t cache_bytes, int slots) {
  return cores >= kStreamingMinCores && slots > 0 && cache_bytes >= std::uint64_t(slots) * kCacheStagedTileBytes;
}

// Looked up tile by tile, a source's chunks cost two HDF5 calls each under
// the library's lock, the lock the output's stores hold: on the 16-core
// machine the reader queued behind them. One pass before the first store
// costs the same calls once, uncontended.
bool plan_chunk_table(std::uint64_t chunks, std::uint64_t entry_bytes) {
  return chunks > 0 && entry_bytes > 0 && chunks <= kChunkTableBytes / entry_bytes;
}

RunPlan plan_run(const PlanRequest& req, const EngineCaps& caps) {
  check_applicable(req, caps);
  return finished(caps.kind == EngineKind::cpu ? plan_cpu(req, caps, budgets_of(req, caps)) : plan_cuda(req, caps, 0, 0));
}

std::optional<RunPlan> plan_smaller(const RunPlan& failed) {
  const PlanRequest& req = failed.request;
  const EngineCaps& caps = failed.caps;
  if (caps.kind != EngineKind::cuda) return std::nullopt;
  // Never below one chunk: a tile cutting chunks would decode each several times.
  if (!req.resumed_block && failed.tile_bytes / 2 >= std::max(kMinTileBytes, block_bytes(req)))
    return finished(plan_cuda(req, caps, failed.tile_bytes / 2, failed.lanes));
  if (failed.lanes > 1) return finished(plan_cuda(req, caps, failed.tile_bytes, 1));
  return std::nullopt;
}

}  // namespace gt
