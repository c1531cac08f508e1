// The run plan: every decision about a run's memory and parallelism, made in
// one place before any byte moves. The job (and the host-memory API, and the
// benches) call plan_run() once; the engines execute what it returns and
// decide nothing of their own about budgets, tiles, lanes or threads.
//
//   PlanRequest (matrix, formats' traits, the user's options, a resumed block)
//   + EngineCaps (which engine, its kernel, the device memory free)
//   -> RunPlan  (budgets, tile grid and order, slots, lanes, threads, notes)
//
// Budgets and what they cover:
//   host_budget   {host_mem}, else a quarter of RAM (64 MiB..16 GiB). It
//                 covers what the formats hold by themselves (HDF5 chunk
//                 caches and a source's chunk index: `reserved`), their codec threads' buffers
//                 (`codec_bytes`: decoding and encoding HDF5 chunks), and
//                 every tile or staging buffer the engine allocates
//                 (`host_bytes`). Not counted: the program, its libraries
//                 and the CUDA context.
//                 A chunked source is refused a budget that cannot hold one
//                 input and one output tile of a whole chunk, one codec
//                 thread's buffers a side, and the formats' reserve.
//                 In place, a general shape's bands (BandPlan) take the
//                 place of the engine's buffers.
//   device_budget {device_mem}, else half the device memory free, at most
//                 4 GiB. It covers the lanes' tile buffers (`device_bytes`).
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "gtranspose/matrix.hpp"
#include "gtranspose/tiles.hpp"
#include "gtranspose/types.hpp"

namespace gt {

enum class EngineKind { cpu, cuda };
const char* engine_name(EngineKind k);  // "cpu", "cuda"

enum class RunMode { out_of_place, in_place };
const char* mode_name(RunMode m);  // "out-of-place", "in-place"

// --- the defaults and caps, each with the measurement behind it ---------------

// A quarter of RAM (usable_ram_bytes: the cgroup's limit where lower), at
// least 64 MiB, at most 16 GiB.
std::uint64_t default_host_budget();
// Half the device memory free, at most 4 GiB: four lanes of 256 MiB tiles
// need 2-3 GiB; more buys nothing.
std::uint64_t default_device_budget(std::uint64_t device_free);

// The largest tile any engine takes unless the user sets {tile}. A 256 MiB
// tile already gives row segments of 32 KiB (f32) or more, so a larger one
// buys no longer I/O; it only leaves fewer tiles to overlap reading,
// transposing and writing, and makes the CUDA engine pin more host memory up
// front. Measured on the H100 host, 2 GiB raw f32, 16 GiB default budget:
// one 2 GiB tile (cpu) and two 1 GiB tiles (cuda) ran in 2.6 s and 6.5 s, of
// which 1.6 s and ~2.8 s were stages or pinning that tiles would have
// overlapped or avoided (PERF.md run 19).
constexpr std::uint64_t kMaxTileBytes = std::uint64_t(256) << 20;
// The largest tile the CUDA engine stages through pinned host memory.
// Pinning costs about as much as writing the memory once: 12 slots of
// 256 MiB pinned during a 2 GiB file run cost ~1.5 s of its 3.1 s (PERF.md
// run 27), while 64 MiB tiles (4096 x 4096 f32) still read and write 16 KiB
// runs.
constexpr std::uint64_t kStagedTileBytes = std::uint64_t(64) << 20;
// The CUDA engine halves its tiles down to this when the device has no room.
constexpr std::uint64_t kMinTileBytes = std::uint64_t(1) << 20;
// The smallest tile a run of many tiles may have, and how many tiles any
// run may have however small. Each tile costs a read call per row and a
// write call per column, and tiny tiles make those calls a few bytes long:
// on the 2-core CI machine a 16 MiB f32 raw file took 0.45 s by default,
// 0.85 s with 4096-element (64x64) tiles, 3.6 s with 256-element and 8.7 s
// with 64-element tiles (a 512 MiB run with 1-element tiles had not ended
// after 60 s). Below 4096 elements a tile costs more than twice the default
// run; 4096 tiles of any size cost at most about half a second of calls. A
// plan of more tiles than that, each smaller than the floor, is refused,
// naming the {tile} or budget that would do: a run that holds the floor's
// tiles always works (and small matrices, whose tile count stays low, take
// tiles of any size). A resumed run keeps its journal's tiles.
constexpr std::uint64_t kMinTileElems = 4096;
constexpr std::uint64_t kFreeTiles = 4096;
// CUDA streams (lanes) by default.
constexpr int kDefaultLanes = 4;
// Reader or writer threads for a file that takes positioned I/O from several
// threads (raw, .npy, contiguous HDF5), and for pageable host memory, where
// each thread is one memcpy stream (~2 GB/s each for 16 KiB rows on the H100
// host: four writers held a 16 GiB pageable run to 14.9 GB/s, PERF.md run 28).
constexpr int kIoThreads = 4;
constexpr int kMemoryThreads = 8;
// Pageable host memory's kMemoryThreads copy threads a side work in teams of
// kStagingTeam: a reader (writer) thread and its team split each tile's copy
// into bands copied at once. The same copy threads as whole-tile copies, but
// a tile is in its slot (and on its way to the GPU) in a quarter of the time.
// Estimated from one thread's ~2.5 GB/s (PERF.md runs 28-29), not measured
// on the GPU yet: whole 64 MiB tiles leave the GPU ~27 ms without a first
// tile and the last write-back ~27 ms after it, about a quarter of run 52's
// 224 ms for 4 GiB pageable; teams of 4 cut both to ~7 ms. A run also holds
// fewer slots (lanes + readers + writers).
// Measured on the H100 (PERF.md run 62, 4 GiB f32 pageable): teams of 4
// gave Python's transpose(a, out=b) 19.4 GB/s against 18.6-19.2 with whole
// tiles, and the CLI's --bench-host pageable stream 13.7 GB/s against 20.1:
// no gain and a loss, so teams are off (1) until a run shows why; the code
// and its tests stay, a team of one copying whole tiles as before.
constexpr int kStagingTeam = 1;
// Staging copies of host memory (formats/memory.cpp's rectangles: the CUDA
// engine's reader and writer threads move pageable arrays' tiles through
// them) use streaming stores (core/stream_copy.hpp) where the memory bus, not
// the cores, bounds them: a machine of at least kStreamingMinCores cores (the
// engine copies with kMemoryThreads a side), rows of at least
// kStreamingMinRowBytes (shorter ones leave partial lines) and a rectangle of
// at least kStreamingMinBytes (more than a core's caches hold). A plain store
// reads each line before writing it: a third of such a copy's traffic.
// Measured on the H100 host (PERF.md run 108: 16 threads copy a 4 GiB f32
// matrix's 64 MiB tiles, rows of 16 KiB, into pinned memory): 54.7 GB/s
// against memcpy's 46.1 alone, 36.1 against 29.5 beside DMA both ways; a
// whole run, NumPy's transpose(a, out=b) of 4 GiB f32, 61.4% of the pinned
// rate against 52.5% (run 119), the CLI's --bench-host 2-6% faster. On
// the 2-core machine one or two threads ran 20% slower than memcpy (PERF.md,
// "Non-temporal stores for the staging copies"). GT_STAGING_STORES=plain in
// the environment keeps plain stores (a measurement switch).
// Copies into an engine's buffer of at most kCacheStagedTileBytes keep plain
// stores (plan_streaming_copy's into_buffer): the next reader of such a
// buffer (the DMA of a staging slot, or the CPU transposer) finds its lines
// in the cache, where streaming stores would have sent them to memory.
constexpr int kStreamingMinCores = 8;
constexpr std::uint64_t kStreamingMinRowBytes = 4096;
constexpr std::uint64_t kStreamingMinBytes = std::uint64_t(4) << 20;
// Host memory to host memory through the GPU, staged (pageable on either
// side; in place, pageable, a slot holds a pair's two tiles of half that):
// tiles of kCacheStagedTileBytes where the machine has at least
// kStreamingMinCores cores and the staging slots (lanes + readers + writers
// of them) fit its last-level cache (plan_cache_staging). The copy into a
// slot then keeps plain stores and the DMA reads the slot from the cache;
// the GPU's writes back land in the cache too (on the H100 host's Xeon,
// whose I/O writes go to the cache), where the copy out of the slot finds
// them. So the memory bus carries the array's own read and write, about 2
// bytes per matrix byte, where 64 MiB slots carry 6. Measured on the H100
// host (PERF.md run 121, NumPy transpose(a, out=b) of 4 GiB f32, 20 slots,
// 300 MiB L3): 8 MiB tiles with plain stores into the slots and streaming
// ones into the array, 31.44 GB/s, 84.2% of the pinned arrays' rate in the
// same process; 4 MiB 76.8%; 2 MiB 51.5% (tile rows under
// kStreamingMinRowBytes); the 64 MiB default with streaming stores both ways
// 57.8%. Run 122, the plan deciding: 8 MiB 80.1% (bench.py 83.8%, the CLI's
// --bench-host 83.2%), 4 MiB 90.9%, 64 MiB 57.6%: 4 and 8 MiB trade places
// between runs, and 8 MiB takes half the tiles.
constexpr std::uint64_t kCacheStagedTileBytes = std::uint64_t(8) << 20;
// A host-memory rectangle of the gcd decomposition's shapes goes through the
// GPU on the CUDA engine (engine/host_rect.hpp: one copy in, inplace-rect,
// one copy back) only from this size on; below it the CPU's decomposition
// (inplace/general.cpp) is faster. Run 251 (PERF.md, H100 host, 16 threads,
// pageable, 13001x20651, GPU route / CPU route in the same process): u8
// (268 MB) 88.5 / 69.1 ms, f32 (1.07 GB) 125.3 / 164.8, f64 (2.15 GB) 192.3 /
// 281.3. The GPU route's time fits about 58 ms + 62 ms a GB (allocations,
// pinned slots, the copies), the CPU's 131-257 ms a GB by element size: even
// at 0.3-0.84 GB. Since then the CPU route lost a pass (step 3's permutation
// in the skew's write-back; steps 1 and 2 together where gcd > 1: 9-20% on
// the 2-core VM) and the GPU route its per-thread allocations (one staging
// for both directions): not yet measured on the GPU host, where
// `gpu-check.sh hostrect` times both at six sizes. GT_TEST_HOST_RECT_MIN_BYTES
// overrides it (tests).
constexpr std::uint64_t kHostRectGpuMinBytes = std::uint64_t(1) << 30;
// A team splits a copy only into bands of at least this many bytes: waking a
// thread costs tens of microseconds, copying 1 MiB about a hundred.
constexpr std::uint64_t kTeamBandBytes = std::uint64_t(1) << 20;
// Through a journal, the one writer thread bounds the run (its copies and the
// protocol's fsyncs): two lanes and two readers keep it fed, four slots, one
// pair a batch, and 256 MiB tiles make its copies cheaper. Measured on 8 GiB
// f32 (PERF.md runs 35-36): 64 MiB tiles, 4 lanes, batches of up to 5 pairs
// took 22.4 s; 256 MiB tiles, 2 lanes, one pair a batch 19.1 s.
constexpr int kJournaledLanes = 2;
constexpr int kJournaledReaders = 2;
// The journal gathers up to this many of the engine's batches (consecutive
// pairs of one row of tile pairs) into one batch of its protocol, so that the
// batch's tiles a lie side by side in the file and the matrix's write-back
// sees rows of several tiles, not one tile's short row pieces (a disk takes
// strided 11-32 KiB pieces at a fifth to a half of its sequential rate:
// PERF.md, in place on the disk, 2026-11-23).
constexpr int kJournalGroup = 3;
// Engine batches the journal keeps (InplaceWriter::batches_kept): the two
// protocol batches the durable header describes and the next being gathered.
constexpr int journal_batches_kept(int group) { return 3 * group - 1; }
// Slots of a journaled run: the batches the journal keeps, and four for pairs
// being read, on the GPU, and being written.
constexpr int journaled_slots(int kept) { return kept + 4; }
// Tile buffers the CPU engine holds: out of place 2 slots of (input tile,
// output tile); in place 2 slots of (tile, mirror tile) plus one scratch tile
// for edge pairs, whose tiles are not square and cannot be transposed in
// their own buffer; through a journal, the slots of the pairs it keeps
// (journal_batches_kept) and two more, so reading still overlaps writing.
// Each tile gets an equal share of the engine's budget.
constexpr unsigned kCpuOutOfPlaceBuffers = 4;
constexpr unsigned kCpuInplaceBuffers = 5;
constexpr unsigned cpu_journaled_buffers(int kept) { return 2 * unsigned(kept + 2) + 1; }

// --- what the planner is told ---------------------------------------------------

// What the planner needs of an engine. Engine::caps() fills it.
struct EngineCaps {
  EngineKind kind = EngineKind::cpu;
  std::string kernel = "cpu-blocked";  // the transposer the engine will run
  int threads = 1;                     // CPU: the transposer's worker threads
  std::uint64_t device_free = 0;       // CUDA: device memory free now, in bytes
  int host_cores = 0;                  // CUDA: the machine's hardware threads (0: unknown)
  std::uint64_t host_cache_bytes = 0;  // CUDA: its last-level cache (0: unknown)
  // CUDA: whether the kernel moves an h x w tile of es-byte elements (and
  // why not); empty when any tile goes.
  std::function<bool(std::uint64_t h, std::uint64_t w, std::size_t es, std::string* why)> kernel_fits;
  std::vector<std::string> notes;      // said in the report (an option this engine does not use)
};

// What the planner needs of one side of a run (a Source, a Sink, or the
// in-place matrix).
struct SideTraits {
  bool concurrent = false;  // takes calls from several threads at once (positioned I/O)
  bool in_memory = false;   // a matrix in host memory (HostView)
  bool pinned = false;      // ... page-locked: the GPU reaches it by DMA
};

struct PlanRequest {
  RunMode mode = RunMode::out_of_place;
  MatrixInfo info;                  // the input (in place: the matrix)
  std::string what;                 // the matrix, for messages
  Shape preferred_block{0, 0};      // the source's natural block (HDF5 chunk)
  std::uint64_t reserved = 0;       // host bytes the formats hold by themselves
  std::string reserved_what;        // what holds them, for messages
  CodecDemand codec_in, codec_out;  // the source's and the sink's codec threads (HDF5 chunks)
  SideTraits in, out;               // in place: `in` is the matrix, `out` unused
  bool ordered_writes = false;      // in place: pairs go to the writer in order from one thread (a journal)
  int kept_batches = 0;             // in place: InplaceWriter::batches_kept()
  std::uint64_t resumed_block = 0;  // in place: the interrupted run's tile side (0: a fresh run)
  std::uint64_t first_pair = 0;     // in place: pairs already done
  // The caller's options (0: the defaults above). Those only a GPU uses
  // ({device_mem}, {streams}, {kernel}) are refused for the CPU engine.
  std::uint64_t host_mem = 0, device_mem = 0, tile_elems = 0;
  int streams = 0;
  std::string kernel = "auto";
};

// --- what it decides --------------------------------------------------------------

struct RunPlan {
  PlanRequest request;  // what the plan was made from (plan_smaller starts there)
  EngineCaps caps;
  EngineKind engine = EngineKind::cpu;
  RunMode mode = RunMode::out_of_place;
  std::string kernel;
  MatrixInfo info;

  std::uint64_t host_budget = 0;    // the whole host budget
  std::uint64_t reserved = 0;       // of it, held by the formats
  int codec_threads_in = 0;         // the source's codec threads (0: none)
  int codec_threads_out = 0;        // the sink's
  std::uint64_t codec_bytes = 0;    // of the host budget, their buffers
  std::uint64_t device_budget = 0;  // CUDA only
  std::uint64_t tile_bytes = 0;     // the bound the tiles were cut to

  // The tiles: a grid out of place, pairs in place (exactly one is set).
  // Out of place, tiles go in output order (TileGrid::tile_output_order).
  std::optional<TileGrid> grid;
  std::optional<PairGrid> pairs;
  std::uint64_t first_pair = 0;     // in place: where a resumed run goes on
  Shape tile;                       // the full tile's shape
  std::uint64_t tiles = 0;          // tiles, or tile pairs

  // How the engine runs it.
  int threads = 1;                  // CPU: transposer threads
  int lanes = 0;                    // CUDA: streams, each with its own device buffers
  int readers = 1, writers = 1;     // I/O threads (the CPU engine: one each)
  int read_team = 1, write_team = 1;  // CUDA: threads splitting each reader's (writer's) tile copy, it included
  int slots = 1;                    // tiles (in place: pairs) in flight on the host
  std::uint64_t slot_bytes = 0;     // host memory per slot (0: none, direct DMA)
  int device_buffers = 0;           // CUDA: tile buffers per lane
  std::uint64_t device_buffer_bytes = 0;
  // CUDA: DMA straight from / to pinned user memory. CPU: host memory both
  // sides (in place: the matrix), transposed where it lies, no tile buffers.
  bool direct_in = false, direct_out = false;
  bool scratch = false;             // CPU in place: a scratch tile for edge pairs
  std::size_t max_batch = 1;        // in place: pairs per InplaceWriter::write_batch
  int requested_lanes = 0;          // CUDA: the lanes before any shrinking

  std::uint64_t host_bytes = 0;     // tile and staging buffers the engine allocates
  std::uint64_t device_bytes = 0;   // device buffers (CUDA)
  std::vector<std::string> notes;   // for the report

  std::uint64_t tile_buffer_bytes() const { return tile.rows * tile.cols * info.elem_size; }
};

// --- in place: which shapes, and the stages of a rectangle ------------------------

// How an R x C matrix is transposed in place. Square: tile pairs swapped
// (PairGrid). A rectangle: an a x b grid of square blocks of side c =
// gcd(R, C) (R = a c, C = b c), each transposed in place as a square, and
// permutations of segments of c elements, each a P x Q transpose whose
// elements are segments. Tall (R = kC: b = 1) runs the blocks, then one
// permutation of the whole (P = a, Q = c); wide (C = kR: a = 1) one
// permutation (P = c, Q = b), then the blocks; a grid (a, b > 1) first a
// permutation inside each row of blocks (c x b, which makes every block
// contiguous), then the blocks, then one of the whole (a x bc). The
// derivation is at the top of inplace/permute.cpp.
// General, every other rectangle (a grid's blocks too small or too many, c
// = 1 included): no blocks, the gcd decomposition of Catanzaro, Keller and
// Garland (gtranspose/rect_maps.hpp) in bands of whole rows and whole
// columns (plan_bands; inplace/bands.hpp has the stages' maths).
struct InplaceShape {
  enum Kind { square, tall, wide, grid, general };
  Kind kind = square;
  std::uint64_t side = 0;    // the square blocks' side, c (general: gcd(R, C), maybe 1)
  std::uint64_t blocks = 1;  // a * b (general: 0, no blocks)
  std::uint64_t a = 1, b = 1;  // rows and columns of blocks
  std::uint64_t segments() const { return a * b * side; }  // of c elements, in the whole matrix
};
// One permutation of a rectangle's stages: a P x Q transpose of the segments
// offset .. offset + P*Q - 1. Index I < a: inside row of blocks I (c x b, as
// wide; before the blocks, where b > 1); kPermuteWhole: the whole (a x bc, as
// tall; after the blocks, where a > 1).
constexpr std::uint64_t kPermuteWhole = ~std::uint64_t(0);
struct PermuteRegion {
  std::uint64_t P = 1, Q = 1, offset = 0;
};
[[nodiscard]] PermuteRegion permute_region(const InplaceShape& shape, std::uint64_t index);
// A grid's blocks: sides of at least kInplaceMinSide elements (its
// permutations move segments of that many), at most kInplaceMaxBlocks blocks
// (each runs as a square of its own); a grid outside these limits is
// general. R = kC and C = kR take any side.
constexpr std::uint64_t kInplaceMinSide = 16;
constexpr std::uint64_t kInplaceMaxBlocks = 256;
// Every non-empty shape has a route; throws gt::Error(usage) for an empty
// matrix only (`what` names it).
[[nodiscard]] InplaceShape plan_inplace_shape(const Shape& s, const std::string& what);

// A general shape's bands (InplaceShape::general). Its stages, each one pass
// over the file: (c > 1) a rotation of every column, a shuffle inside every
// row, a shuffle inside every column (rect_maps.hpp's steps 1-3). A row
// stage reads `rows` whole rows at a time (one sequential piece), a column
// stage `cols` whole columns (R pieces of cols * es bytes); each band is
// permuted in host memory, its new content made durable in the journal,
// then written back (inplace/journal_bands.cpp).
//   host memory ({host_mem} less what the formats hold): two band buffers
//   of the larger band, the band as read and the band as it becomes (the
//   journal and the matrix are written from it), nothing else; recovery
//   reads in pieces of its own budget (recovery_budget). The journal file
//   holds two bands' data and its header slots.
struct BandPlan {
  std::uint64_t rows = 1;          // rows a row stage's band holds
  std::uint64_t cols = 1;          // columns a column stage's band holds
  // Columns a thread gathers at once in a column stage: a cache line of
  // every row it reads (general.cpp's band), so a line is read once.
  std::uint64_t group = 1;
  int threads = 1;                 // threads permuting a band
  std::uint64_t band_bytes = 0;    // the larger of the two bands
  std::uint64_t buffer_bytes = 0;  // host memory in all: 2 * band_bytes
  std::uint64_t passes = 0;        // stages over the file: 3 where gcd > 1, else 2
  std::uint64_t bands = 0;         // bands over every stage
};
// A band buffer's size where the budget is larger: 2 syncs a band, so an 8
// GiB matrix takes 32 bands a pass; larger bands buy little and double the
// journal file (it holds two).
constexpr std::uint64_t kBandBytes = std::uint64_t(256) << 20;
// A column band's pieces (one per row) are at least this long where the
// budget holds it, past kBandBytes up to kBandMaxBytes: a disk takes strided
// pieces of 11-32 KiB at a fifth to a half of its sequential rate (PERF.md,
// in place on the disk, 2026-11-23).
constexpr std::uint64_t kBandPieceBytes = std::uint64_t(64) << 10;
// The most a band buffer takes (the journal file holds two bands): a tall
// matrix's 64 KiB pieces would otherwise make bands of gigabytes.
constexpr std::uint64_t kBandMaxBytes = std::uint64_t(1) << 30;
// Throws gt::Error(usage) naming the {host_mem} that would do when the
// budget (less `reserved`) cannot hold one row and one column band.
// `threads` resolved (at least 1).
[[nodiscard]] BandPlan plan_bands(const Shape& s, std::size_t elem_size, std::uint64_t host_mem,
                                  std::uint64_t reserved, int threads);

// Throws gt::Error(usage) for an option the engine of `caps` cannot use
// (the CPU engine: {device_mem}, {streams}, {kernel}); plan_run() asks it,
// and so does a run no engine plans (a square in bands).
void check_applicable(const PlanRequest& req, const EngineCaps& caps);

// A square in place on a file, in bands of whole rows (the journal's
// square_bands(), inplace/journal_square.cpp), instead of tile pairs through
// an engine. Band k of the output is column band k of the input: its blocks
// (j, k) come from the journal (j < k: saved when band j was rewritten), from
// band k itself (the diagonal) and from the matrix (j > k: still original).
// Before band k is rewritten, its blocks (k, i), i >= k, go to the journal,
// one t x t slot each; a slot is free again once band i is durable. So the
// matrix is read and written in whole rows, and the journal in whole blocks,
// where tile pairs write one side as pieces of a tile's width (a disk takes
// 32 KiB pieces at a quarter of its sequential rate: PERF.md, run 187).
//   host memory ({host_mem} less what the formats hold): two sets of the
//   band as read and as it becomes (the next band is built while this one
//   is written), two blocks (t x t slots); recovery uses the same.
//   The journal writes the upper triangle, diagonal blocks included (about
//   half the matrix); its file holds at most (k + 1)(n - k) slots, about a
//   quarter of the matrix.
struct SquareBandPlan {
  std::uint64_t rows = 0;          // t: rows of a band (the last may hold fewer)
  std::uint64_t bands = 0;         // n = ceil(N / t)
  std::uint64_t slot_bytes = 0;    // a t x t block and its trailer, in the journal
  std::uint64_t slots = 0;         // the journal's slots at its fullest
  std::uint64_t buffer_bytes = 0;  // host memory in all
  int threads = 1;                 // threads transposing and checksumming a band
};
// At least this many bands where the side allows: the journal's file then
// holds about a quarter of the matrix ((n/2 + 1) n/2 slots of n^2).
constexpr std::uint64_t kSquareBands = 16;
// Bands of fewer rows than this (or than the side / kSquareBands) are too
// many syscalls and syncs: such a budget keeps tile pairs.
constexpr std::uint64_t kSquareBandMinRows = 256;
// The band for an N x N square of es-byte elements (a resumed run: `rows`,
// its journal's; else 0). nullopt where the budget (less `reserved`) holds
// no band worth taking: the run takes tile pairs; a resumed run's band that
// does not fit throws gt::Error(usage) naming the {host_mem} it needs.
[[nodiscard]] std::optional<SquareBandPlan> plan_square_bands(std::uint64_t n, std::size_t elem_size,
                                                              std::uint64_t host_mem, std::uint64_t reserved,
                                                              int threads, std::uint64_t rows = 0);
// The journal's slot for a t x t block: its bytes and a trailer, rounded to 4 KiB.
constexpr std::uint64_t kSquareTrailerBytes = 64;
[[nodiscard]] std::uint64_t square_slot_bytes(std::uint64_t rows, std::size_t elem_size);

// The segment permutation of a rectangle's run: cycles of the P x Q
// transpose cut into chains of at most chain_length moves, run `chains` at a
// time (a group): the journal holds one segment per chain of the group
// (what the chain's last move needs), and each step moves one segment of
// every chain, with a flush and a journal sync between steps.
struct PermutePlan {
  std::uint64_t segment_bytes = 0;
  std::uint64_t chains = 1;        // chains per group
  std::uint64_t chain_length = 1;  // moves per chain at most
  std::uint64_t buffer_bytes = 0;  // host memory for the moves of a step, in pieces
  int threads = 1;                 // host memory without a journal: threads following the cycles, each on a stripe
};
// The journal's share of a permutation: its saved segments, at most this
// many bytes a group (fewer, larger groups take fewer steps: 2 syncs each).
constexpr std::uint64_t kPermuteJournalBytes = std::uint64_t(256) << 20;
// Host memory a step's moves go through, at most.
constexpr std::uint64_t kPermuteBufferBytes = std::uint64_t(64) << 20;
[[nodiscard]] PermutePlan plan_permute(const InplaceShape& shape, std::size_t elem_size, std::uint64_t host_mem,
                                       std::uint64_t reserved);

// The host memory a journal's recovery may use (recovery runs before the
// run is planned): the host budget less what the formats hold.
[[nodiscard]] std::uint64_t recovery_budget(std::uint64_t host_mem, std::uint64_t reserved);

// --- several processes (MPI ranks) on one run -------------------------------------

// One rank's share of an out-of-place run: output rows [row0, row0 + rows)
// (input columns, the output's tiles in output order), written back in
// order by that rank alone.
struct RankShare {
  std::uint64_t row0 = 0, rows = 0;
};
// The shares are contiguous and in rank order, and balanced: counted in
// units of `align` output rows (a chunked output's chunk rows, or a chunked
// source's chunk columns, so no chunk is encoded or decoded by two ranks;
// 1 otherwise), every rank gets floor or ceil of units / ranks (the last
// unit may be short). More ranks than units leave the last ranks empty.
[[nodiscard]] RankShare plan_rank_share(std::uint64_t out_rows, std::uint64_t align, int rank, int ranks);
// The GPU of a rank among `gpus` visible on its node: its node-local rank,
// modulo the GPUs (ranks share them when there are more ranks than GPUs);
// -1 with no GPU.
[[nodiscard]] int plan_rank_device(int local_rank, int gpus);
// A rank's host budget: {host_mem} as given (it applies per rank), else the
// default budget divided among the ranks of the node (at least 64 MiB), so
// that N ranks on one machine together take what one process would.
[[nodiscard]] std::uint64_t plan_rank_host_budget(std::uint64_t host_mem, int local_ranks);
// A rank's share of threads a format or the CPU engine wants for itself
// alone (`wanted`, the machine's cores by default): the node's cores are
// divided among its ranks, so two ranks of 16 threads do not fight over 16
// cores (at least 1; 0 stays 0: none wanted).
[[nodiscard]] int plan_rank_threads(int wanted, int local_ranks);

// Threads that fault in a new host array of `bytes` before a run writes it
// (gt::prefault_host): the machine's `cores`, fewer for a small array (each
// thread at least kTeamBandBytes x 16), at least 1.
[[nodiscard]] int plan_prefault_threads(std::uint64_t bytes, int cores);

// Whether a host-memory rectangle copy of `bytes`, in rows of `row_bytes`
// (the whole copy's bytes when both sides are contiguous), uses streaming
// stores on a machine of `cores` cores (kStreamingMinCores and the two
// sizes above); `into_buffer`: the copy goes into an engine's buffer, not a
// program's array (plain stores up to kCacheStagedTileBytes).
[[nodiscard]] bool plan_streaming_copy(std::uint64_t row_bytes, std::uint64_t bytes, int cores, bool into_buffer);

// Whether staged host-memory runs take kCacheStagedTileBytes tiles: `slots`
// of them fit a last-level cache of `cache_bytes` on `cores` cores.
[[nodiscard]] bool plan_cache_staging(int cores, std::uint64_t cache_bytes, int slots);

// A compressed HDF5 output's store thread starts write-back of the file
// (sync_file_range, a hint) after every kChunkWritebackBytes it stores, so
// the disk writes while the run goes on and the closing fsync waits for the
// tail only (the run's chunk offsets are HDF5's: the hint covers the file).
constexpr std::uint64_t kChunkWritebackBytes = std::uint64_t(64) << 20;
// Whether a compressed HDF5 source reads its whole chunk index once, at its
// first read (one HDF5 lookup per chunk, before any output chunk is stored),
// and then finds every chunk in that table without HDF5's lock: `chunks`
// entries of `entry_bytes`. Yes while the table takes at most
// kChunkTableBytes (4 MiB: 170,000 chunks, 170 GiB of 1 MiB chunks), which
// the source's reserve counts inside {host_mem} (ChunkIo::table_bytes); a
// larger index is looked up tile by tile, as before.
constexpr std::uint64_t kChunkTableBytes = std::uint64_t(4) << 20;
[[nodiscard]] bool plan_chunk_table(std::uint64_t chunks, std::uint64_t entry_bytes);

// Plans a run. Throws gt::Error(usage) when the budgets cannot hold it (a
// budget smaller than the formats' reserve, a resumed run's fixed tiles that
// do not fit, a kernel that cannot move the tiles, tiles below the floor),
// or an option cannot apply to the engine (the CPU engine and {device_mem},
// {streams} or {kernel}), naming the parameter to change.
[[nodiscard]] RunPlan plan_run(const PlanRequest& req, const EngineCaps& caps);

// The plan as a user sees it (report.hpp: PlanSummary): engine, tiles,
// threads, staging, peak memory, and in place the journal's size. No
// estimate: a dry run adds one (job.hpp: preview_job).
[[nodiscard]] PlanSummary summarize_plan(const RunPlan& plan);
// A rectangle in place: `s` summarizes one block's plan; the journal's
// figures become the whole run's (every block and the permutation).
void add_rectangle(PlanSummary& s, const InplaceShape& shape, const PermutePlan& permute);
// "6 square blocks of 500 (2 x 3), ...": a rectangle's stages in words, for notes.
std::string rectangle_stages_text(const InplaceShape& shape);
// A general shape's plan as a user sees it (no engine runs it: the CPU's
// threads permute its bands): bands, buffers, the journal's figures.
[[nodiscard]] PlanSummary summarize_bands(const Shape& s, std::size_t elem_size, const InplaceShape& shape,
                                          const BandPlan& bands, std::uint64_t host_mem, std::uint64_t reserved);
// A square in bands (SquareBandPlan), or `blocks` square blocks of side n:
// the plan as a user sees it.
[[nodiscard]] PlanSummary summarize_square_bands(std::uint64_t n, std::size_t elem_size, const SquareBandPlan& bands,
                                                 std::uint64_t host_mem, std::uint64_t reserved,
                                                 std::uint64_t blocks = 1);
// The journal's two header slots before its data (inplace/journal_internal.hpp).
constexpr std::uint64_t kJournalHeaderBytes = 8192;

// The next smaller plan after the device could not allocate `failed`'s
// buffers: tiles halved (down to kMinTileBytes, not for a resumed run), then
// one lane; nullopt when nothing smaller is left.
[[nodiscard]] std::optional<RunPlan> plan_smaller(const RunPlan& failed);

}  // namespace gt
