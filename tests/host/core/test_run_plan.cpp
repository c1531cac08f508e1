// The run plan: every default, cap and fit check of a run (plan.hpp), and the
// promise the budgets make: what the engines allocate for tiles and staging
// (host_bytes) plus what the formats hold (reserved) stays within the host
// budget, and the device buffers within the device budget.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>

#include "gtranspose/error.hpp"
#include "gtranspose/plan.hpp"

namespace gt {
namespace {

constexpr std::uint64_t MiB = std::uint64_t(1) << 20, GiB = std::uint64_t(1) << 30;

PlanRequest request(RunMode mode, Shape shape, std::size_t es, std::uint64_t host_mem, std::uint64_t device_mem = 0) {
  PlanRequest r;
  r.mode = mode;
  r.info.shape = shape;
  r.info.elem_size = es;
  r.what = "the test matrix";
  r.host_mem = host_mem;
  r.device_mem = device_mem;
  return r;
}

EngineCaps cpu_caps(int threads = 4) {
  EngineCaps c;
  c.kind = EngineKind::cpu;
  c.threads = threads;
  return c;
}

EngineCaps cuda_caps(std::uint64_t device_free = 64 * GiB) {
  EngineCaps c;
  c.kind = EngineKind::cuda;
  c.kernel = "padded";
  c.device_free = device_free;
  return c;
}

SideTraits side(bool concurrent, bool in_memory = false, bool pinned = false) { return {concurrent, in_memory, pinned}; }

Error error_of(const PlanRequest& r, const EngineCaps& c) {
  try {
    (void)plan_run(r, c);
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "plan_run did not throw";
  return Error(ErrorKind::internal, "none");
}

bool has_note(const RunPlan& p, const std::string& text) {
  return std::any_of(p.notes.begin(), p.notes.end(), [&](const std::string& n) { return n.find(text) != std::string::npos; });
}

// The promise every plan keeps.
void expect_within_budgets(const RunPlan& p, const std::string& what) {
  EXPECT_LE(p.host_bytes + p.reserved + p.codec_bytes, p.host_budget) << what;
  EXPECT_EQ(p.codec_bytes, std::uint64_t(p.codec_threads_in) * p.request.codec_in.bytes_per_thread +
                               std::uint64_t(p.codec_threads_out) * p.request.codec_out.bytes_per_thread)
      << what;
  if (p.engine == EngineKind::cuda) {
    EXPECT_LE(p.device_bytes, p.device_budget) << what;
    EXPECT_EQ(p.device_bytes, std::uint64_t(p.lanes) * p.device_buffers * p.device_buffer_bytes) << what;
  }
  EXPECT_GE(p.tile_bytes, p.tile_buffer_bytes()) << what;
  EXPECT_EQ(p.host_bytes, std::uint64_t(p.slots) * p.slot_bytes + (p.scratch ? p.tile_buffer_bytes() : 0)) << what;
}

TEST(RunPlan, Defaults) {
  EXPECT_GE(default_host_budget(), 64 * MiB);
  EXPECT_LE(default_host_budget(), 16 * GiB);
  EXPECT_EQ(default_device_budget(10 * GiB), 4 * GiB);
  EXPECT_EQ(default_device_budget(2 * GiB), 1 * GiB);
  const RunPlan p = plan_run(request(RunMode::out_of_place, {1000, 1000}, 4, 0), cpu_caps());
  EXPECT_EQ(p.host_budget, default_host_budget());
  const RunPlan q = plan_run(request(RunMode::out_of_place, {1000, 1000}, 4, 0), cuda_caps(6 * GiB));
  EXPECT_EQ(q.device_budget, 3 * GiB);
  EXPECT_EQ(q.lanes, kDefaultLanes);
}

TEST(RunPlan, CpuOutOfPlaceSharesAndCaps) {
  // Four equal tile buffers under the budget; one tile: one slot.
  RunPlan p = plan_run(request(RunMode::out_of_place, {4096, 4096}, 4, 4 * MiB), cpu_caps(3));
  EXPECT_EQ(p.tile_bytes, 1 * MiB);
  EXPECT_EQ(p.slots, 2);
  EXPECT_EQ(p.threads, 3);
  EXPECT_EQ(p.tiles, p.grid->count());
  expect_within_budgets(p, "4 MiB");
  p = plan_run(request(RunMode::out_of_place, {10, 10}, 4, 4 * MiB), cpu_caps());
  EXPECT_EQ(p.tiles, 1u);
  EXPECT_EQ(p.slots, 1);
  // A large budget: tiles capped at 256 MiB, unless the user set the tile.
  p = plan_run(request(RunMode::out_of_place, {65536, 65536}, 4, 16 * GiB), cpu_caps());
  EXPECT_EQ(p.tile_bytes, kMaxTileBytes);
  PlanRequest r = request(RunMode::out_of_place, {65536, 65536}, 4, 16 * GiB);
  r.tile_elems = std::uint64_t(1) << 28;
  p = plan_run(r, cpu_caps());
  EXPECT_EQ(p.tile_bytes, 4 * GiB);
  EXPECT_EQ(p.tile.rows * p.tile.cols, std::uint64_t(1) << 28);
}

TEST(RunPlan, ReservedBytesComeOutOfTheHostBudget) {
  PlanRequest r = request(RunMode::out_of_place, {4096, 4096}, 4, 8 * MiB);
  r.reserved = 2 * MiB;
  r.reserved_what = "HDF5 dataset /x in c.h5";
  RunPlan p = plan_run(r, cpu_caps());
  EXPECT_EQ(p.host_budget, 8 * MiB);
  EXPECT_EQ(p.reserved, 2 * MiB);
  EXPECT_EQ(p.tile_bytes, 6 * MiB / 4);
  EXPECT_TRUE(has_note(p, "HDF5 chunk cache and chunk index: 2.00 MiB"));
  expect_within_budgets(p, "reserved");
  // More than half the budget reserved: refused, naming the budget it needs.
  r.reserved = 5 * MiB;
  const Error e = error_of(r, cpu_caps());
  EXPECT_EQ(e.kind(), ErrorKind::usage);
  EXPECT_NE(e.message().find("{host_mem} of at least 10.00 MiB"), std::string::npos) << e.message();
  EXPECT_NE(std::string(e.what()).find("HDF5 dataset /x in c.h5"), std::string::npos) << e.what();
}

// A compressed chunked HDF5 input and output: 512x512 f32 chunks (1 MiB),
// each codec thread holding two buffers of a chunk and a bit (deflate's bound).
// A device budget only for the CUDA engine: the CPU engine refuses one.
PlanRequest chunked(std::uint64_t host_mem, int threads = 16, std::uint64_t device_mem = 0) {
  PlanRequest r = request(RunMode::out_of_place, {40000, 30000}, 4, host_mem, device_mem);
  r.preferred_block = {512, 512};
  r.codec_in = r.codec_out = {threads, 2 * MiB + 2048};
  r.what = "HDF5 dataset /x in c.h5";
  return r;
}

TEST(RunPlan, ChunkedInputNeedsATileOfAChunkEachWayAndOneCodecThreadASide) {
  // The least: one chunk in, one out, one codec thread's buffers a side.
  const std::uint64_t least = 2 * MiB + 2 * (2 * MiB + 2048);
  for (const EngineCaps& caps : {cpu_caps(), cuda_caps()}) {
    SCOPED_TRACE(engine_name(caps.kind));
    const std::uint64_t device = caps.kind == EngineKind::cpu ? 0 : 4 * GiB;
    RunPlan p = plan_run(chunked(least, 16, device), caps);
    expect_within_budgets(p, "least");
    EXPECT_EQ(p.codec_threads_in, 1);
    EXPECT_EQ(p.codec_threads_out, 1);
    EXPECT_EQ(p.tile, (Shape{512, 512}));  // whole chunks
    if (caps.kind == EngineKind::cpu) {
      EXPECT_EQ(p.slots, 1);
      EXPECT_TRUE(has_note(p, "one tile slot"));
    }
    const Error e = error_of(chunked(least - 1, 16, device), caps);
    EXPECT_EQ(e.kind(), ErrorKind::usage);
    EXPECT_NE(e.message().find("{host_mem} of at least 6.00 MiB"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("HDF5 dataset /x in c.h5"), std::string::npos) << e.message();
  }
  // A large budget: every codec thread the formats want, tiles of whole chunks.
  RunPlan p = plan_run(chunked(GiB), cpu_caps());
  EXPECT_EQ(p.codec_threads_in, 16);
  EXPECT_EQ(p.codec_threads_out, 16);
  EXPECT_EQ(p.codec_bytes, 32 * (2 * MiB + 2048));
  EXPECT_EQ(p.slots, 2);
  EXPECT_EQ(p.tile.rows % 512, 0u);
  EXPECT_EQ(p.tile.cols % 512, 0u);
  EXPECT_TRUE(has_note(p, "HDF5 chunk threads: one pool of 16 decoding and encoding"));
  expect_within_budgets(p, "large");
  // In between, fewer codec threads: their buffers take at most half of
  // what is left beyond the least.
  p = plan_run(chunked(least + 16 * MiB), cpu_caps());
  EXPECT_EQ(p.codec_threads_in, 2);
  EXPECT_EQ(p.codec_threads_out, 2);
  EXPECT_LE(p.codec_bytes - 2 * (2 * MiB + 2048), 8 * MiB);
  expect_within_budgets(p, "between");
  // Unfiltered chunks need no codec buffers: positioned I/O threads, as many as files get.
  PlanRequest u = chunked(least);
  u.codec_in = u.codec_out = {16, 0};
  p = plan_run(u, cpu_caps());
  EXPECT_EQ(p.codec_threads_in, kIoThreads);
  EXPECT_EQ(p.codec_bytes, 0u);
}

// A compressed source's chunk index is read once while the table of it
// takes at most kChunkTableBytes; past that (or empty) tile by tile.
TEST(RunPlan, ChunkTableUpToItsCap) {
  EXPECT_TRUE(plan_chunk_table(1, 24));
  EXPECT_TRUE(plan_chunk_table(1024, 24));
  EXPECT_TRUE(plan_chunk_table(kChunkTableBytes / 24, 24));
  EXPECT_FALSE(plan_chunk_table(kChunkTableBytes / 24 + 1, 24));
  EXPECT_FALSE(plan_chunk_table(std::uint64_t(1) << 40, 24));  // no overflow on a vast index
  EXPECT_FALSE(plan_chunk_table(0, 24));
  EXPECT_FALSE(plan_chunk_table(5, 0));
}

TEST(RunPlan, CpuInPlaceScratchAndResume) {
  // 1000 = 7 tiles of 144 + 1 edge: edge pairs are not square, so a scratch tile.
  RunPlan p = plan_run(request(RunMode::in_place, {1000, 1000}, 4, 5 * 144 * 144 * 4 + 100), cpu_caps());
  EXPECT_TRUE(p.scratch);
  EXPECT_EQ(p.slots, 2);
  expect_within_budgets(p, "in place 1000");
  p = plan_run(request(RunMode::in_place, {1024, 1024}, 4, 5 * 128 * 128 * 4), cpu_caps());
  EXPECT_FALSE(p.scratch);
  // A resumed run keeps its block; a budget it does not fit is refused with
  // the budget it needs (host buffers plus the formats' reserve).
  PlanRequest r = request(RunMode::in_place, {1000, 1000}, 4, 64 * MiB);
  r.resumed_block = 500;
  r.first_pair = 1;
  p = plan_run(r, cpu_caps());
  EXPECT_EQ(p.tile, (Shape{500, 500}));
  EXPECT_EQ(p.first_pair, 1u);
  EXPECT_TRUE(has_note(p, "resumed from the journal: 1 of 3 tile pairs were done before"));
  r.host_mem = 1 * MiB;
  r.reserved = 0;
  const Error e = error_of(r, cpu_caps());
  EXPECT_EQ(e.kind(), ErrorKind::usage);
  EXPECT_NE(e.message().find("written with 500x500 tiles, which need {host_mem} 4M or more"), std::string::npos)
      << e.message();
  EXPECT_NE(e.message().find("rerun with {resume} {host_mem} 4M"), std::string::npos) << e.message();
}

TEST(RunPlan, CudaOutOfPlaceThreadsSlotsAndStaging) {
  // A file that takes positioned I/O both ways: four readers, four writers,
  // 64 MiB staged tiles, enough slots for every lane and thread.
  PlanRequest r = request(RunMode::out_of_place, {32768, 65536}, 4, 16 * GiB);
  r.in = side(true);
  r.out = side(true);
  RunPlan p = plan_run(r, cuda_caps());
  EXPECT_EQ(p.readers, kIoThreads);
  EXPECT_EQ(p.writers, kIoThreads);
  EXPECT_EQ(p.threads, 2 * kIoThreads);
  EXPECT_EQ(p.tile_bytes, kStagedTileBytes);
  EXPECT_EQ(p.slots, kDefaultLanes + 2 * kIoThreads);
  EXPECT_EQ(p.slot_bytes, p.tile_buffer_bytes());
  EXPECT_FALSE(p.direct_in || p.direct_out);
  expect_within_budgets(p, "files");
  // HDF5 through its library: one reader, one writer.
  r.in = side(false);
  r.out = side(false);
  p = plan_run(r, cuda_caps());
  EXPECT_EQ(p.readers + p.writers, 2);
  EXPECT_EQ(p.read_team, 1);
  EXPECT_EQ(p.write_team, 1);
  // Pageable memory: eight copy threads a side, in teams that split each
  // tile's copy; the slots follow the reader and writer threads.
  r.in = side(true, true);
  r.out = side(true, true);
  p = plan_run(r, cuda_caps());
  EXPECT_EQ(p.readers * p.read_team, kMemoryThreads);
  EXPECT_EQ(p.writers * p.write_team, kMemoryThreads);
  EXPECT_EQ(p.read_team, kStagingTeam);
  EXPECT_EQ(p.write_team, kStagingTeam);
  EXPECT_EQ(p.threads, 2 * kMemoryThreads);
  EXPECT_EQ(p.slots, kDefaultLanes + 2 * kMemoryThreads / kStagingTeam);
  if (kStagingTeam > 1) {
    const std::string n = std::to_string(kMemoryThreads / kStagingTeam), t = std::to_string(kStagingTeam);
    EXPECT_TRUE(has_note(p, n + " reader threads (" + t + " copying each tile), " + n + " writer threads (" + t +
                                " copying each tile)"));
  }
  expect_within_budgets(p, "pageable");
  // Pageable to a file: only the memory side works in teams.
  r.out = side(true);
  p = plan_run(r, cuda_caps());
  EXPECT_EQ(p.read_team, kStagingTeam);
  EXPECT_EQ(p.write_team, 1);
  EXPECT_EQ(p.writers, kIoThreads);
  // Pinned in, pageable out: the input by DMA, one reader, no team.
  r.in = side(true, true, true);
  r.out = side(true, true);
  p = plan_run(r, cuda_caps());
  EXPECT_TRUE(p.direct_in);
  EXPECT_EQ(p.readers, 1);
  EXPECT_EQ(p.read_team, 1);
  EXPECT_EQ(p.write_team, kStagingTeam);
  // Pinned both sides: direct DMA, no staging, 256 MiB tiles, --streams honoured.
  r.in = side(true, true, true);
  r.out = side(true, true, true);
  r.streams = 2;
  p = plan_run(r, cuda_caps());
  EXPECT_TRUE(p.direct_in && p.direct_out);
  EXPECT_EQ(p.slot_bytes, 0u);
  EXPECT_EQ(p.host_bytes, 0u);
  EXPECT_EQ(p.lanes, 2);
  EXPECT_EQ(p.tile_bytes, kMaxTileBytes);
  EXPECT_TRUE(has_note(p, "2 streams, 4 staging slots (direct DMA)"));
  expect_within_budgets(p, "pinned");
}

TEST(RunPlan, CpuEngineHasNoCopyTeams) {
  PlanRequest r = request(RunMode::out_of_place, {4096, 4096}, 4, 1 * GiB);
  r.in = side(true, true);
  r.out = side(true, true);
  const RunPlan p = plan_run(r, cpu_caps());
  EXPECT_EQ(p.read_team, 1);
  EXPECT_EQ(p.write_team, 1);
}

// Host memory both sides (and a square in place in it, unjournaled): the
// CPU engine transposes where the data lies, so no buffers and no budget
// bounds its tiles; one side in a file keeps the staged plan.
TEST(RunPlan, CpuOnHostMemoryIsDirect) {
  PlanRequest r = request(RunMode::out_of_place, {65536, 65536}, 4, 64 << 10);
  r.in = side(true, true);
  r.out = side(true, true);
  RunPlan p = plan_run(r, cpu_caps());
  EXPECT_TRUE(p.direct_in && p.direct_out);
  EXPECT_EQ(p.host_bytes, 0u);
  EXPECT_EQ(p.slots, 0);
  EXPECT_EQ(p.tile_bytes, kMaxTileBytes);
  EXPECT_EQ(p.tile.rows * p.tile.cols * 4, kMaxTileBytes);
  expect_within_budgets(p, "direct, 64 KiB budget");
  EXPECT_EQ(summarize_plan(p).staging, "none: the CPU transposes host memory where it lies");
  // The caller's tile, however large, without overflow.
  r.tile_elems = ~std::uint64_t(0) / 2;
  p = plan_run(r, cpu_caps());
  EXPECT_EQ(p.tile.rows * p.tile.cols, std::uint64_t(65536) * 65536);
  r.tile_elems = 4096;
  p = plan_run(r, cpu_caps());
  EXPECT_EQ(p.tile.rows * p.tile.cols, 4096u);
  // One side not in memory: staged as before.
  r.tile_elems = 0;
  r.out = side(true);
  r.host_mem = 64 * MiB;
  p = plan_run(r, cpu_caps());
  EXPECT_FALSE(p.direct_in || p.direct_out);
  EXPECT_GT(p.host_bytes, 0u);
  // In place in memory: direct; journaled (a file): staged.
  PlanRequest q = request(RunMode::in_place, {20000, 20000}, 4, 64 << 10);
  q.in = side(true, true);
  p = plan_run(q, cpu_caps());
  EXPECT_TRUE(p.direct_in);
  EXPECT_EQ(p.host_bytes, 0u);
  EXPECT_EQ(p.tile.rows * p.tile.rows * 4, kMaxTileBytes);
  q.in = side(true);
  q.host_mem = 64 * MiB;
  q.ordered_writes = true;
  q.kept_batches = 1;
  p = plan_run(q, cpu_caps());
  EXPECT_FALSE(p.direct_in);
  EXPECT_GT(p.host_bytes, 0u);
}

TEST(RunPlan, PrefaultThreads) {
  // One thread per 16 MiB at most, never more than the cores, at least one.
  EXPECT_EQ(plan_prefault_threads(0, 16), 1);
  EXPECT_EQ(plan_prefault_threads(4 * MiB, 16), 1);
  EXPECT_EQ(plan_prefault_threads(16 * kTeamBandBytes * 3, 16), 3);
  EXPECT_EQ(plan_prefault_threads(4 * GiB, 16), 16);
  EXPECT_EQ(plan_prefault_threads(4 * GiB, 2), 2);
  EXPECT_EQ(plan_prefault_threads(4 * GiB, 0), 1);
}

TEST(RunPlan, StreamingCopies) {
  // Streaming stores where many cores share the bus, for long rows and large copies only.
  for (const bool into_buffer : {false, true}) {
    EXPECT_TRUE(plan_streaming_copy(16384, 64 * MiB, 16, into_buffer));
    EXPECT_FALSE(plan_streaming_copy(16384, 64 * MiB, 2, into_buffer));
    EXPECT_FALSE(plan_streaming_copy(kStreamingMinRowBytes - 1, 64 * MiB, 16, into_buffer));
    EXPECT_FALSE(plan_streaming_copy(16384, kStreamingMinBytes - 1, 16, into_buffer));
  }
  EXPECT_TRUE(plan_streaming_copy(kStreamingMinRowBytes, kStreamingMinBytes, kStreamingMinCores, false));
  // Into an engine's buffer the cache may hold: plain stores, so its next
  // reader (the DMA, the transposer) finds it there.
  EXPECT_FALSE(plan_streaming_copy(16384, kCacheStagedTileBytes, 16, true));
  EXPECT_TRUE(plan_streaming_copy(16384, kCacheStagedTileBytes, 16, false));
  EXPECT_TRUE(plan_streaming_copy(16384, kCacheStagedTileBytes + 1, 16, true));
}

TEST(RunPlan, CacheStagedTiles) {
  // Host memory both sides through the GPU, staged: tiles whose slots fit
  // the last-level cache, where the machine has the cores and the cache.
  PlanRequest r = request(RunMode::out_of_place, {32768, 32768}, 4, 64 * GiB);
  r.in = side(true, true);
  r.out = side(true, true);
  EngineCaps c = cuda_caps();
  c.host_cores = 16;
  c.host_cache_bytes = 300 * MiB;
  RunPlan p = plan_run(r, c);
  const int slots = kDefaultLanes + 2 * kMemoryThreads / kStagingTeam;
  EXPECT_TRUE(plan_cache_staging(16, 300 * MiB, slots));
  EXPECT_LE(p.tile_bytes, kCacheStagedTileBytes);
  EXPECT_GE(p.tile_bytes, kCacheStagedTileBytes / 2);
  EXPECT_EQ(p.slots, slots);
  EXPECT_LE(std::uint64_t(p.slots) * p.slot_bytes, c.host_cache_bytes);
  expect_within_budgets(p, "cache staged");
  // Pinned in, pageable out: still staged on one side, still in the cache.
  r.in = side(true, true, true);
  p = plan_run(r, c);
  EXPECT_LE(p.tile_bytes, kCacheStagedTileBytes);
  // The default tiles where the slots would not fit the cache, where the
  // machine has few cores or says nothing of its cache, for a file on either
  // side, and with no staging at all.
  r.in = side(true, true);
  for (const auto& [cores, cache] : {std::pair<int, std::uint64_t>{16, 100 * MiB}, {2, 300 * MiB}, {16, 0}}) {
    c.host_cores = cores;
    c.host_cache_bytes = cache;
    p = plan_run(r, c);
    EXPECT_EQ(p.tile_bytes, kStagedTileBytes) << cores << " cores, " << cache << " bytes of cache";
  }
  c.host_cores = 16;
  c.host_cache_bytes = 300 * MiB;
  r.out = side(true);
  EXPECT_EQ(plan_run(r, c).tile_bytes, kStagedTileBytes);
  r.in = side(true, true, true);
  r.out = side(true, true, true);
  EXPECT_EQ(plan_run(r, c).tile_bytes, kMaxTileBytes);
  // A tile the caller names is kept.
  r.in = side(true, true);
  r.out = side(true, true);
  r.tile_elems = 4u << 20;
  p = plan_run(r, c);
  EXPECT_GT(p.tile.rows * p.tile.cols * 4, kCacheStagedTileBytes);
  // In place in pageable memory (the plain writer): slots of a pair's two
  // tiles, each half the out-of-place tile; not through a journal, not for
  // pinned memory, not where the cache is too small.
  PlanRequest q = request(RunMode::in_place, {32768, 32768}, 4, 64 * GiB);
  q.in = side(true, true);
  p = plan_run(q, c);
  EXPECT_LE(p.tile_bytes, kCacheStagedTileBytes / 2);
  EXPECT_GE(p.tile_bytes, kCacheStagedTileBytes / 4);
  EXPECT_LE(std::uint64_t(p.slots) * p.slot_bytes, c.host_cache_bytes);
  expect_within_budgets(p, "cache staged in place");
  q.in = side(true, true, true);
  EXPECT_EQ(plan_run(q, c).tile_bytes, kMaxTileBytes);
  q.in = side(true, true);
  c.host_cache_bytes = 100 * MiB;
  EXPECT_EQ(plan_run(q, c).tile_bytes, kStagedTileBytes);
}

TEST(RunPlan, CudaInPlaceJournaledAndPlain) {
  PlanRequest r = request(RunMode::in_place, {46336, 46336}, 4, 16 * GiB);
  r.in = side(true);
  r.ordered_writes = true;  // a journal
  r.kept_batches = journal_batches_kept(kJournalGroup);
  RunPlan p = plan_run(r, cuda_caps());
  EXPECT_EQ(p.lanes, kJournaledLanes);
  EXPECT_EQ(p.readers, kJournaledReaders);
  EXPECT_EQ(p.writers, 1);
  EXPECT_EQ(p.max_batch, 1u);
  // The journal's kept batches hold their slots; four more keep pairs moving.
  EXPECT_EQ(p.slots, journaled_slots(r.kept_batches));
  EXPECT_EQ(p.tile_bytes, kMaxTileBytes);
  expect_within_budgets(p, "journaled");
  // The plain writer on a file: several writer threads, one pair each.
  r.ordered_writes = false;
  p = plan_run(r, cuda_caps());
  EXPECT_EQ(p.writers, kIoThreads);
  EXPECT_EQ(p.max_batch, 1u);
  EXPECT_EQ(p.tile_bytes, kStagedTileBytes);
  // Pinned memory with the plain writer: straight DMA.
  r.in = side(true, true, true);
  p = plan_run(r, cuda_caps());
  EXPECT_TRUE(p.direct_in);
  EXPECT_EQ(p.host_bytes, 0u);
  EXPECT_EQ(p.readers + p.writers, 2);
  // One writer thread batches the pairs already back.
  r.in = side(false);
  p = plan_run(r, cuda_caps());
  EXPECT_EQ(p.writers, 1);
  EXPECT_EQ(p.max_batch, std::size_t(std::max(1, p.slots / 2)));
}

TEST(RunPlan, CudaResumedBlockMustFitBothBudgets) {
  PlanRequest r = request(RunMode::in_place, {8192, 8192}, 4, 1 * GiB, 256 * MiB);
  r.ordered_writes = true;
  r.resumed_block = 4096;  // 64 MiB tiles: three on the device, two on the host
  RunPlan p = plan_run(r, cuda_caps());
  EXPECT_EQ(p.tile, (Shape{4096, 4096}));
  EXPECT_EQ(p.lanes, 1);  // 256 MiB holds one lane of three 64 MiB tiles
  expect_within_budgets(p, "resumed");
  r.device_mem = 128 * MiB;
  Error e = error_of(r, cuda_caps());
  EXPECT_NE(e.message().find("{device_mem} 192M or more"), std::string::npos) << e.message();
  r.device_mem = 1 * GiB;
  r.host_mem = 100 * MiB;
  e = error_of(r, cuda_caps());
  EXPECT_NE(e.message().find("{host_mem} 128M or more"), std::string::npos) << e.message();
}

TEST(RunPlan, SmallerPlansHalveTilesThenLanes) {
  PlanRequest r = request(RunMode::out_of_place, {8192, 8192}, 4, 4 * GiB, 4 * GiB);
  RunPlan p = plan_run(r, cuda_caps());
  std::uint64_t prev = p.tile_bytes;
  int steps = 0;
  while (auto q = plan_smaller(p)) {
    ++steps;
    if (q->lanes == p.lanes) {
      EXPECT_EQ(q->tile_bytes, prev / 2);
      EXPECT_GE(q->tile_bytes, kMinTileBytes);
    } else {
      EXPECT_EQ(q->lanes, 1);
      EXPECT_EQ(q->tile_bytes, prev);
    }
    expect_within_budgets(*q, "smaller");
    prev = q->tile_bytes;
    p = *q;
  }
  EXPECT_EQ(p.lanes, 1);
  EXPECT_LT(p.tile_bytes / 2, kMinTileBytes);
  EXPECT_EQ(steps, 7);  // 64 MiB down to 1 MiB, then one lane
  // A resumed run cannot shrink its tiles: only the lanes.
  PlanRequest ri = request(RunMode::in_place, {8192, 8192}, 4, 4 * GiB, 4 * GiB);
  ri.resumed_block = 2048;
  RunPlan pi = plan_run(ri, cuda_caps());
  ASSERT_GT(pi.lanes, 1);
  auto qi = plan_smaller(pi);
  ASSERT_TRUE(qi);
  EXPECT_EQ(qi->lanes, 1);
  EXPECT_EQ(qi->tile, pi.tile);
  EXPECT_FALSE(plan_smaller(*qi));
  // The CPU engine allocates no device memory: nothing to shrink.
  r.device_mem = 0;
  EXPECT_FALSE(plan_smaller(plan_run(r, cpu_caps())));
}

// Options only a GPU uses cannot apply to the CPU engine: refused, never
// accepted and ignored (the CLI's --engine cpu --kernel padded, say).
TEST(RunPlan, GpuOptionsAreRefusedForTheCpuEngine) {
  PlanRequest r = request(RunMode::out_of_place, {100, 100}, 4, 8 * MiB);
  EXPECT_NO_THROW((void)plan_run(r, cpu_caps()));
  PlanRequest d = r;
  d.device_mem = MiB;
  EXPECT_NE(error_of(d, cpu_caps()).message().find("it uses no device memory: drop {device_mem}"), std::string::npos);
  PlanRequest s = r;
  s.streams = 2;
  EXPECT_NE(error_of(s, cpu_caps()).message().find("it uses no CUDA streams: drop {streams}"), std::string::npos);
  PlanRequest k = r;
  k.kernel = "padded";
  EXPECT_NE(error_of(k, cpu_caps()).message().find("not the CUDA kernel 'padded': drop {kernel}"), std::string::npos);
  for (const PlanRequest& q : {d, s, k}) {
    EXPECT_EQ(error_of(q, cpu_caps()).kind(), ErrorKind::usage);
    EXPECT_NO_THROW((void)plan_run(q, cuda_caps()));  // where they do apply
  }
}

// A run of many tiles below the floor is refused, naming what would do;
// the floor's own tiles, and small matrices with tiles of any size, run.
TEST(RunPlan, TinyTilesAreRefusedWhenThereAreMany) {
  // 512 MiB of f32 with 1-element tiles: 134M tiles, a run that never ends.
  PlanRequest r = request(RunMode::out_of_place, {16384, 8192}, 4, 64 * MiB);
  r.tile_elems = 1;
  Error e = error_of(r, cpu_caps());
  EXPECT_EQ(e.kind(), ErrorKind::usage);
  EXPECT_NE(e.message().find("{tile} 1 makes 134217728 tiles of 1x1"), std::string::npos) << e.message();
  EXPECT_NE(e.message().find("give {tile} 4K or more"), std::string::npos) << e.message();
  r.tile_elems = kMinTileElems;
  const RunPlan p = plan_run(r, cpu_caps());
  EXPECT_GE(p.tile.rows * p.tile.cols, kMinTileElems);
  // A budget too small for the floor's tiles says which budget would do, and that one works.
  PlanRequest b = request(RunMode::out_of_place, {16384, 8192}, 16, 64 << 10);
  e = error_of(b, cpu_caps());
  EXPECT_NE(e.message().find("{host_mem} 64K makes"), std::string::npos) << e.message();
  EXPECT_NE(e.message().find("give {host_mem} 256K or more"), std::string::npos) << e.message();
  b.host_mem = 256 << 10;
  EXPECT_NO_THROW((void)plan_run(b, cpu_caps()));
  PlanRequest g = request(RunMode::in_place, {16384, 16384}, 8, 64 << 10, 64 << 10);
  e = error_of(g, cuda_caps());
  EXPECT_NE(e.message().find("give {host_mem} 256K and {device_mem} 384K or more"), std::string::npos) << e.message();
  g.host_mem = 256 << 10;
  g.device_mem = 384 << 10;
  EXPECT_NO_THROW((void)plan_run(g, cuda_caps()));
  // 4096 tiles of one element: a small matrix, any tile.
  PlanRequest s = request(RunMode::out_of_place, {64, 64}, 2, 8);
  EXPECT_EQ(plan_run(s, cpu_caps()).tiles, 4096u);
  s.info.shape = {64, 65};
  EXPECT_EQ(error_of(s, cpu_caps()).kind(), ErrorKind::usage);
  // A resumed run keeps the tiles its journal was written with, small or not.
  PlanRequest j = request(RunMode::in_place, {4096, 4096}, 4, 64 * MiB);
  j.resumed_block = 16;
  EXPECT_EQ(plan_run(j, cpu_caps()).pairs->block(), 16u);
}

// The example: any budget that holds the tiles a run needs works,
// below the old 1 MiB floor too.
TEST(RunPlan, SmallBudgetsThatHoldTheTilesWork) {
  const RunPlan p = plan_run(request(RunMode::in_place, {1001, 1001}, 2, 256 << 10), cpu_caps());
  EXPECT_LE(p.host_bytes + p.reserved, std::uint64_t(256) << 10);
  EXPECT_GE(p.tile.rows * p.tile.cols, kMinTileElems);
}

TEST(RunPlan, KernelThatCannotMoveTheTilesIsRefused) {
  EngineCaps c = cuda_caps();
  c.kernel = "single-thread";
  c.kernel_fits = [](std::uint64_t h, std::uint64_t w, std::size_t, std::string* why) {
    *why = "limited to 1M elements";
    return h * w <= (1u << 20);
  };
  const Error e = error_of(request(RunMode::out_of_place, {65536, 65536}, 4, 16 * GiB), c);
  EXPECT_EQ(e.kind(), ErrorKind::usage);
  EXPECT_NE(e.message().find("kernel 'single-thread' cannot move this run's"), std::string::npos) << e.message();
  EXPECT_NE(e.message().find("{kernel} auto"), std::string::npos) << e.message();
}

TEST(RunPlan, ErrorsForImpossibleRequests) {
  EXPECT_EQ(error_of(request(RunMode::out_of_place, {10, 10}, 3, MiB), cpu_caps()).kind(), ErrorKind::usage);
  EXPECT_EQ(error_of(request(RunMode::in_place, {10, 11}, 4, MiB), cpu_caps()).kind(), ErrorKind::usage);
  // A budget below one element per tile.
  EXPECT_EQ(error_of(request(RunMode::out_of_place, {10, 10}, 16, 32), cpu_caps()).kind(), ErrorKind::usage);
}

// Random requests: the budgets hold for every plan and every smaller plan.
TEST(RunPlan, BudgetsHoldForRandomRequests) {
  std::mt19937_64 rng(2026);
  for (int i = 0; i < 4000; ++i) {
    const bool inplace = rng() % 2;
    const std::uint64_t rows = 1 + rng() % 200000, cols = inplace ? rows : 1 + rng() % 200000;
    const std::size_t es = std::size_t(1) << (rng() % 5);
    const std::uint64_t host = (64 << 10) + rng() % (std::uint64_t(32) << 30);
    const std::uint64_t dev = (64 << 10) + rng() % (std::uint64_t(8) << 30);
    PlanRequest r = request(inplace ? RunMode::in_place : RunMode::out_of_place, {rows, cols}, es, host, dev);
    r.in = side(rng() % 2, rng() % 2, rng() % 2);
    r.out = side(rng() % 2, rng() % 2, rng() % 2);
    r.ordered_writes = inplace && rng() % 2;
    r.streams = int(rng() % 9);
    if (rng() % 4 == 0) r.reserved = rng() % (host / 2 + 1);
    if (!inplace && rng() % 3 == 0) {  // a chunked HDF5 source with codec threads
      r.preferred_block = {1 + rng() % 4096, 1 + rng() % 4096};
      r.codec_in = {int(rng() % 33), rng() % (std::uint64_t(64) << 20)};
      r.codec_out = {int(rng() % 33), rng() % (std::uint64_t(64) << 20)};
    }
    if (rng() % 5 == 0) r.tile_elems = 1 + rng() % (std::uint64_t(1) << 26);
    const EngineCaps c = rng() % 2 ? cpu_caps() : cuda_caps();
    const std::string what = "case " + std::to_string(i);
    RunPlan p;
    try {
      p = plan_run(r, c);
    } catch (const Error& e) {
      // Only a budget that cannot hold one element, or a chunk each way and
      // one codec thread a side, is refused.
      EXPECT_EQ(e.kind(), ErrorKind::usage) << what << ": " << e.what();
      continue;
    }
    expect_within_budgets(p, what);
    for (auto q = plan_smaller(p); q; q = plan_smaller(*q)) expect_within_budgets(*q, what + " (smaller)");
    if (HasFailure()) return;
  }
}

}  // namespace
}  // namespace gt
