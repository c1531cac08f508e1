// The MPI job (gtranspose/mpi.hpp): set-up, each rank's share, the one
// commit. Every step ends in settle() (agree.hpp), so a failure on any rank
// becomes the same error on all of them and nothing is left half done.
#include <sys/stat.h>

#include <cstdlib>
#include <cstring>
#include <sstream>
#include <thread>

#include "core/stages.hpp"
#include "gtranspose/cuda.hpp"
#include "gtranspose/journal.hpp"
#include "gtranspose/machine.hpp"
#include "gtranspose/mpi.hpp"
#include "gtranspose/sizes.hpp"
#include "mpi/agree.hpp"
#include "mpi/bands.hpp"
#include "mpi/comm.hpp"
#include "mpi/report.hpp"

namespace gt::mpi {

namespace {

std::string encode_layout(const SharedLayout& l) {
  std::ostringstream o;
  o << int(l.kind) << ' ' << l.data_offset << ' ' << l.chunk.rows << ' ' << l.chunk.cols << ' ' << l.filters.size();
  for (const StoredFilter& f : l.filters) {
    o << ' ' << f.id << ' ' << f.flags << ' ' << f.values.size();
    for (unsigned v : f.values) o << ' ' << v;
  }
  o << '\n' << l.path;
  return o.str();
}

SharedLayout decode_layout(const std::string& s) {
  SharedLayout l;
  const std::size_t nl = s.find('\n');
  std::istringstream in(s.substr(0, nl));
  int kind = 0;
  std::size_t nf = 0;
  in >> kind >> l.data_offset >> l.chunk.rows >> l.chunk.cols >> nf;
  l.kind = SharedLayout::Kind(kind);
  for (std::size_t k = 0; k < nf; ++k) {
    StoredFilter f;
    std::size_t nv = 0;
    in >> f.id >> f.flags >> nv;
    f.values.resize(nv);
    for (unsigned& v : f.values) in >> v;
    l.filters.push_back(f);
  }
  l.path = s.substr(nl + 1);
  return l;
}

// What the main thread of a rank does while its engine runs: it listens
// for other ranks' failures (and stops its engine at the next tile), tells
// them of its own at once, and on rank 0 stores the chunks the others send.
struct RunLoop {
  explicit RunLoop(Comm& comm) : c(comm) {}
  Comm& c;
  Sink* stores = nullptr;   // rank 0 of a chunked output: where other ranks' chunks go
  const std::atomic<bool>* user_cancel = nullptr;
  std::atomic<bool> stop{false};
  bool notified = false;
  int fails_received = 0;
  std::vector<MPI_Request> sent;

  void notify_all() {
    static const char byte = 1;
    for (int k = 0; k < c.size(); ++k)
      if (k != c.rank()) sent.push_back(c.isend(k, kTagFail, &byte, 1));
    notified = true;
  }

  Outcome run(const std::function<void()>& work) {
    std::atomic<bool> done{false};
    Outcome mine, store;
    bool peer_failed = false;
    std::thread worker([&] {
      mine = attempt(work);
      done = true;
    });
    const int senders = stores ? c.size() - 1 : 0;
    int ended = 0;
    std::vector<unsigned char> buf;
    int idle_us = 50;
    for (;;) {
      bool busy = false;
      int from = 0;
      std::size_t n = 0;
      while (c.probe(MPI_ANY_SOURCE, kTagFail, &from, &n)) {
        char b = 0;
        c.recv(from, kTagFail, &b, 1);
        ++fails_received;
        peer_failed = true;
        stop = true;
        busy = true;
      }
      while (stores && c.probe(MPI_ANY_SOURCE, kTagData, &from, &n)) {
        buf.resize(n);
        c.recv(from, kTagData, buf.data(), n);
        busy = true;
        ChunkHeader h;
        std::memcpy(&h, buf.data(), sizeof h);
        if (h.kind == 1) {
          ++ended;
          continue;
        }
        if (store.code != Outcome::ok) continue;  // drained, not stored: the run has failed
        store = attempt([&] {
          stores->write_stored_chunk(h.i, h.j, buf.data() + sizeof h, n - sizeof h, unsigned(h.mask));
        });
        if (store.code != Outcome::ok) stop = true;
      }
      if (user_cancel && user_cancel->load()) stop = true;
      const bool finished = done.load();
      const bool failed_here = store.code != Outcome::ok || (finished && mine.code != Outcome::ok && !peer_failed);
      if (failed_here && !notified) notify_all();
      if (finished && ended == senders) break;
      // Idle: back off (polling every 50 us would take a core's share from
      // the engine), up to 1 ms where other ranks' chunks wait in their
      // MPI_Send for this loop, 5 ms where only a failure could come.
      idle_us = busy ? 50 : std::min(idle_us * 2, stores ? 1000 : 5000);
      if (!busy) std::this_thread::sleep_for(std::chrono::microseconds(idle_us));
    }
    worker.join();
    if (mine.code == Outcome::ok && store.code != Outcome::ok) mine = store;
    // Cancelled only because another rank failed: that rank reports it.
    if (mine.code == Outcome::cancelled && peer_failed && !(user_cancel && user_cancel->load()))
      mine.code = Outcome::stopped;
    return mine;
  }
};

}  // namespace

RunReport run_job(const JobOptions& opts, MPI_Comm comm) {
  Comm c(comm);
  const int me = c.rank();
  std::string device_note;
  EngineDecision decision;
  std::unique_ptr<Engine> engine;
  std::unique_ptr<Source> src;
  FileLock lock;
  agreed(c, [&] {
    if (opts.in_place)
      throw Error(ErrorKind::usage, "{in_place} does not run under MPI yet: run it as one process (without mpirun)");
    check_job(opts);
    // Before CUDA starts in this process: this rank's GPU.
    const std::string pinned = pin_rank_device(c.local_rank());
    src = open_source(opts.input, opts.open);
    // auto reads the input (its output mirrors the input's filters unless
    // told otherwise; an output compressed from a plain input keeps the GPU).
    decision = decide_engine(opts.engine, engine_hints(opts.run, src.get(), nullptr, false));
    if (decision.kind == EngineKind::cuda) {
      const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
      device_note = pinned.empty() ? cuda_device_name(0) + (visible ? std::string(" (CUDA_VISIBLE_DEVICES=") + visible + ")" : "")
                                   : cuda_device_name(0) + ", " + pinned;
    }
    engine = make_engine(decision.kind);
    const std::string in_file = src->location().path;
    if (!in_file.empty()) {
      lock = lock_file(in_file, false);
      refuse_if_pending(in_file, "read");
    }
  });

  // Rank 0 creates the output, allocated in full, under its temporary name.
  std::unique_ptr<Sink> sink;
  std::string shared;
  agreed(c, [&] {
    if (me != 0) return;
    const std::string out_file = parse_location(opts.output).path;
    struct stat st {};
    if (::stat(out_file.c_str(), &st) == 0) refuse_if_pending(out_file, "replace");
    sink = create_sink(opts.output, *src, opts.sink);
    const SharedLayout l = sink->shared_layout();
    if (l.kind == SharedLayout::none)
      throw Error(ErrorKind::usage, sink->describe() + " can be written by one process only (a chunked HDF5 output "
                                                       "whose filters only the HDF5 library encodes): run without mpirun");
    shared = encode_layout(l) ;
  });
  c.bcast(shared, 0);
  const SharedLayout layout = decode_layout(shared);

  // This rank's band: output rows, aligned so that no chunk is two ranks'.
  const MatrixInfo in = src->info();
  MatrixInfo out = in;
  out.shape = in.shape.transposed();
  const std::uint64_t align = layout.kind == SharedLayout::chunks ? layout.chunk.rows : src->preferred_block().cols;
  const RankShare share = plan_rank_share(out.shape.rows, align, me, c.size());
  std::unique_ptr<Sink> band;
  agreed(c, [&] {
    if (me == 0)
      band = std::make_unique<BandSink>(*sink, share.row0, share.rows, me, c.local_size());
    else if (layout.kind == SharedLayout::plain)
      band = std::make_unique<SharedFileSink>(layout, out, share.row0, share.rows, me, opts.output);
    else
      band = std::make_unique<ChunkSender>(c, layout, out, share.row0, share.rows, opts.output);
  });
  BandSource band_src(*src, share.row0, share.rows, c.local_size());

  RunLoop loop(c);
  loop.user_cancel = opts.run.cancel;
  if (me == 0 && layout.kind == SharedLayout::chunks) loop.stores = sink.get();
  RunOptions ro = opts.run;
  ro.cancel = &loop.stop;
  ro.host_mem = plan_rank_host_budget(opts.run.host_mem, c.local_size());
  // The CPU engine's threads: the node's cores shared among its ranks.
  if (!ro.threads && decision.kind == EngineKind::cpu)
    ro.threads = plan_rank_threads(int(usable_cores()), c.local_size());
  if (me != 0) ro.progress = nullptr, ro.stage = nullptr;  // one progress bar: rank 0's share
  if (ro.stage) ro.stage("transpose");

  RunReport mine;
  double busy_s = 0;
  const auto t0 = Clock::now();
  const Outcome run = loop.run([&] {
    const auto t = Clock::now();
    if (share.rows) mine = execute(*engine, band_src, *band, ro);
    band->commit();  // other ranks: their writes durable, or their chunks all sent
    if (me != 0 && layout.kind == SharedLayout::chunks) {
      const ChunkHeader end{1, 0, 0, 0};
      c.send(0, kTagData, &end, sizeof end);
    }
    busy_s = seconds_between(t, Clock::now());
  });
  if (me != 0 && layout.kind == SharedLayout::chunks && run.code != Outcome::ok) {
    // The end message went unsent: rank 0 still waits for it.
    const ChunkHeader end{1, 0, 0, 0};
    c.send(0, kTagData, &end, sizeof end);
  }
  settle(c, run, loop.notified, loop.fails_received, &loop.sent);

  double commit_s = 0;
  agreed(c, [&] {
    if (me != 0) return;
    const auto t = Clock::now();
    if (ro.stage) ro.stage("sync");
    sink->commit();
    commit_s = seconds_between(t, Clock::now());
  });
  const double wall_s = seconds_between(t0, Clock::now());

  RankShareReport rs{me, share, busy_s, device_note, mine};
  const std::vector<std::string> all = c.gather(encode_rank(rs), 0);
  if (me != 0) return mine;
  return combine(mine, all, c.size(), c.nodes(), align, decision.note, *src, *sink, wall_s, commit_s);
}

}  // namespace gt::mpi
