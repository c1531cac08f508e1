// Running an engine the way the job runs it (plan once, then execute), for
// tests that drive an engine directly on sources and sinks of their own.
#pragma once
#include "gtranspose/engine.hpp"
#include "gtranspose/inplace_writer.hpp"
#include "gtranspose/job.hpp"

namespace gt::test {

inline RunReport run_engine(EngineKind kind, Source& src, Sink& dst, const RunOptions& opts) {
  const auto engine = make_engine(kind);
  return execute(*engine, src, dst, opts);
}

// In place through `writer`, or the plain writer when none is given.
inline RunReport run_engine_inplace(EngineKind kind, InplaceMatrix& m, const RunOptions& opts,
                                    InplaceWriter* writer = nullptr) {
  const auto engine = make_engine(kind);
  const auto plain = plain_inplace_writer();
  return execute_inplace(*engine, m, writer ? *writer : *plain, opts);
}

}  // namespace gt::test
