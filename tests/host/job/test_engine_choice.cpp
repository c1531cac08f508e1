// How auto resolves (engine/factory.cpp): engine_hints reads what bounds a
// run from its files and options; decide_engine gives the CPU engine
// compressed chunks and files in place on machines of many cores, the GPU
// the options only it takes, and without a GPU always the CPU with the
// reason none was found.
#include <gtest/gtest.h>

#include <string>

#include "gtranspose/cuda.hpp"
#include "gtranspose/engine.hpp"
#include "gtranspose/matrix.hpp"
#include "gtranspose/plan.hpp"

namespace gt {
namespace {

class CodecSource final : public Source {
 public:
  explicit CodecSource(bool compressed) : compressed_(compressed) { info_.shape = {4, 4}, info_.elem_size = 4; }
  const MatrixInfo& info() const override { return info_; }
  const Location& location() const override { return loc_; }
  void read(std::uint64_t, std::uint64_t, std::uint64_t, std::uint64_t, void*, std::uint64_t) override {}
  CodecDemand codec_demand() const override { return {2, 1024, 1024, compressed_}; }
  std::string describe() const override { return "a test source"; }

 private:
  bool compressed_;
  MatrixInfo info_;
  Location loc_;
};

TEST(EngineHints, ReadWhatBoundsTheRun) {
  RunOptions run;
  const CodecSource zipped(true), shuffled(false);
  EngineHints h = engine_hints(run, nullptr, nullptr, false);
  EXPECT_FALSE(h.codecs || h.in_place_file || h.cuda_options);
  EXPECT_TRUE(engine_hints(run, &zipped, nullptr, false).codecs);
  EXPECT_FALSE(engine_hints(run, &shuffled, nullptr, false).codecs);
  EXPECT_TRUE(engine_hints(run, nullptr, nullptr, true).in_place_file);
  run.kernel = "padded";
  EXPECT_TRUE(engine_hints(run, &zipped, nullptr, false).cuda_options);
  run.kernel = "auto";
  EXPECT_FALSE(engine_hints(run, &zipped, nullptr, false).cuda_options);
  run.device_mem = 64 << 20;
  EXPECT_TRUE(engine_hints(run, &zipped, nullptr, false).cuda_options);
  run.device_mem = 0, run.streams = 2;
  EXPECT_TRUE(engine_hints(run, &zipped, nullptr, false).cuda_options);

  EngineHints codecs;
  codecs.codecs = true;
  EXPECT_EQ(decide_engine(EngineChoice::cpu, codecs).kind, EngineKind::cpu);
  // Decided without asking for a GPU (which would start CUDA), on any machine.
  const EngineDecision d = decide_engine(EngineChoice::automatic, codecs);
  EXPECT_EQ(d.kind, EngineKind::cpu);
  EXPECT_NE(d.note.find("the CPU engine (auto): compressed chunks"), std::string::npos) << d.note;
  EngineHints in_place;
  in_place.in_place_file = true;
  const EngineDecision p = decide_engine(EngineChoice::automatic, in_place);
  // On any number of cores (bands of whole rows: PERF.md, runs 195-196).
  EXPECT_EQ(p.kind, EngineKind::cpu);
  EXPECT_NE(p.note.find("in place, the writes to the file and its journal bound this run"), std::string::npos) << p.note;
  std::string why;
  codecs.cuda_options = true;
  if (cuda_device_count(&why) > 0) {
    EXPECT_EQ(decide_engine(EngineChoice::cuda, codecs).kind, EngineKind::cuda);
    EXPECT_EQ(decide_engine(EngineChoice::automatic, codecs).kind, EngineKind::cuda);
    EXPECT_EQ(decide_engine(EngineChoice::automatic, {}).kind, EngineKind::cuda);
  } else {
    // No GPU: options only the CUDA engine takes leave the CPU engine, which the plan then refuses them for.
    const EngineDecision n = decide_engine(EngineChoice::automatic, codecs);
    EXPECT_EQ(n.kind, EngineKind::cpu);
    EXPECT_NE(n.note.find("using the CPU engine"), std::string::npos) << n.note;
    EXPECT_NE(decide_engine(EngineChoice::automatic, {}).note.find("using the CPU engine"), std::string::npos);
  }
}

}  // namespace
}  // namespace gt
