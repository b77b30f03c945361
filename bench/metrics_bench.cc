// The cost of recording a metric on the request path, against doing nothing in the same
// run (the ratio is the figure to compare; docs/performance.md "Metrics recording"):
//   BM_Baseline              a loop that only keeps an atomic-free counter alive
//   BM_CounterHeld           Counter::Inc on a series the caller holds (router, DB)
//   BM_CounterLookup         Registry::Counter(name, labels).Inc: the per-request lookup the
//                            MCP and REST faces do (shared lock, hash, no allocation)
//   BM_HistogramHeld         Histogram::ObserveMicros on a held series
//   BM_RequestRecording      what one tool call records: 2 lookups + inc + observe
// Each also runs with 2 threads to show contention on the shared atomics.
#include <benchmark/benchmark.h>

#include "src/core/metrics.h"

namespace {

crmd::metrics::Registry& Shared() {
  static crmd::metrics::Registry r;  // benchmark scaffolding only
  return r;
}

void BM_Baseline(benchmark::State& state) {
  uint64_t n = 0;
  for (auto _ : state) {
    ++n;
    benchmark::DoNotOptimize(n);
  }
}
BENCHMARK(BM_Baseline)->Threads(1)->Threads(2);

void BM_CounterHeld(benchmark::State& state) {
  auto& c = Shared().Counter("bench_held_total", "Held.", {{"face", "mcp"}});
  for (auto _ : state) c.Inc();
}
BENCHMARK(BM_CounterHeld)->Threads(1)->Threads(2);

void BM_CounterLookup(benchmark::State& state) {
  Shared().Counter("bench_tool_calls_total", "Lookup.",
                   {{"tool", "get_contact"}, {"outcome", "ok"}});
  for (auto _ : state)
    Shared()
        .Counter("bench_tool_calls_total", "Lookup.", {{"tool", "get_contact"}, {"outcome", "ok"}})
        .Inc();
}
BENCHMARK(BM_CounterLookup)->Threads(1)->Threads(2);

void BM_HistogramHeld(benchmark::State& state) {
  auto& h = Shared().Histogram("bench_held_seconds", "Held.", {{"face", "mcp"}});
  int64_t us = 0;
  for (auto _ : state) h.ObserveMicros(us++ & 0xffff);
}
BENCHMARK(BM_HistogramHeld)->Threads(1)->Threads(2);

void BM_RequestRecording(benchmark::State& state) {
  auto& r = Shared();
  int64_t us = 0;
  for (auto _ : state) {
    r.Counter("bench_req_total", "Req.", {{"face", "mcp"}, {"route", "/mcp"}, {"status", "2xx"}})
        .Inc();
    r.Histogram("bench_req_seconds", "Req.", {{"face", "mcp"}, {"route", "/mcp"}})
        .ObserveMicros(us++ & 0xfff);
  }
}
BENCHMARK(BM_RequestRecording)->Threads(1)->Threads(2);

}  // namespace
