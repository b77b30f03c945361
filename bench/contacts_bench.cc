// get_contact and list_contacts (each single filter) over 100,000 seeded contacts, through
// the real tool handlers and registry in-process, each reported as a ratio to a
// primary-key SELECT measured in the same run (counter "x_pk_select").
//   ./build/bench/crmd_bench_contacts [--benchmark_filter=List]
// CRMD_BENCH_CONTACTS overrides the contact count.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>

#include "auth/scopes.h"
#include "src/core/clock.h"
#include "src/core/random.h"
#include "src/crm/seed.h"
#include "src/crm/services.h"
#include "src/mcp/registry.h"
#include "tests/support/domain.h"
#include "tools/contacts.h"

namespace crmd::crm {
namespace {

using nlohmann::json;
using Steady = std::chrono::steady_clock;

struct World {
  std::string dir;
  SystemClock clock;
  SecureRandom random;
  std::unique_ptr<store::Database> db;
  std::unique_ptr<crmd::testing::Domain> domain;  // governance, crm, marketing
  mcp::ToolRegistry registry;
  Principal principal;
  int64_t contacts = 100000;
  double pk_ns = 0;  // baseline: one primary-key SELECT through Database::Read

  World() {
    if (const char* n = std::getenv("CRMD_BENCH_CONTACTS")) contacts = std::atoll(n);
    dir = (std::filesystem::temp_directory_path() / ("crmd-bench-" + std::to_string(::getpid())))
              .string();
    std::filesystem::create_directories(dir);
    db = std::move(*store::Open("sqlite:" + dir + "/bench.db", 4));
    domain = std::move(*crmd::testing::MakeDomain(*db, clock, random));
    auto seeded = Seed(*db, {.contacts = contacts, .now = clock.NowUnix()});
    if (!seeded) std::abort();
    if (!tools::RegisterContactTools(registry, *domain->marketing)) std::abort();
    principal = {.subject = "bench", .client_id = "bench"};
    for (const auto& s : auth::AllScopes()) principal.scopes.insert(s);
    pk_ns = MeasurePk();
  }
  ~World() { std::filesystem::remove_all(dir); }

  Result<int64_t> PkSelect(int64_t id) {
    return db->Read([&](store::Conn& c) -> Result<int64_t> {
      auto row = c.QueryOne("SELECT id, email, status FROM contacts WHERE id = ?", {id});
      if (!row) return Fail(row.error());
      return *row ? (*row)->Int(0) : 0;
    });
  }
  double MeasurePk() {
    constexpr int kN = 20000;
    auto t0 = Steady::now();
    for (int i = 0; i < kN; ++i) benchmark::DoNotOptimize(PkSelect(1 + i % contacts));
    return std::chrono::duration<double, std::nano>(Steady::now() - t0).count() / kN;
  }
  json Call(const std::string& name, const json& args) {
    mcp::ToolContext ctx{.principal = principal, .request_id = "bench", .session_id = ""};
    auto out = registry.Call(ctx, {{"name", name}, {"arguments", args}});
    if (out.kind != mcp::CallOutcome::Kind::kResult || out.result.value("isError", false)) {
      std::fprintf(stderr, "%s failed: %s\n", name.c_str(), out.result.dump().c_str());
      std::abort();
    }
    return out.result;
  }
};

World& W() {
  static World* w = new World();  // built once on first use, shared by every benchmark
  return *w;
}

// Runs `body` and reports its mean time over the PK-select baseline.
template <typename F>
void Measure(benchmark::State& state, F&& body) {
  World& w = W();
  int64_t i = 0;
  auto t0 = Steady::now();
  for (auto _ : state) body(w, i++);
  double ns = std::chrono::duration<double, std::nano>(Steady::now() - t0).count();
  if (state.iterations() > 0)
    state.counters["x_pk_select"] = ns / static_cast<double>(state.iterations()) / w.pk_ns;
  state.counters["pk_select_ns"] = w.pk_ns;
}

void BM_Baseline_PkSelect(benchmark::State& state) {
  Measure(state, [](World& w, int64_t i) {
    benchmark::DoNotOptimize(w.PkSelect(1 + (i * 7919) % w.contacts));
  });
}
BENCHMARK(BM_Baseline_PkSelect);

void BM_GetContact_ById(benchmark::State& state) {
  Measure(state, [](World& w, int64_t i) {
    benchmark::DoNotOptimize(w.Call("get_contact", {{"id", 1 + (i * 7919) % w.contacts}}));
  });
}
BENCHMARK(BM_GetContact_ById);

void BM_GetContact_ByEmail(benchmark::State& state) {
  World& w = W();
  auto c = w.domain->crm->contacts->Get(w.contacts / 2);
  std::string email = c ? c->email : "nobody@example.com";
  Measure(state, [&](World& w2, int64_t) {
    benchmark::DoNotOptimize(w2.Call("get_contact", {{"email", email}}));
  });
}
BENCHMARK(BM_GetContact_ByEmail);

void ListWith(benchmark::State& state, json filter) {
  // Alternates the first page and a deep page (cursor from the middle of the table).
  Measure(state, [&](World& w, int64_t i) {
    json args = filter;
    if (i % 2) {
      json first = w.Call("list_contacts", json(filter));
      const json& next = first["structuredContent"]["next_cursor"];
      if (next.is_string()) args["cursor"] = next;
    }
    benchmark::DoNotOptimize(w.Call("list_contacts", args));
  });
}

void BM_List_NoFilter(benchmark::State& s) { ListWith(s, json::object()); }
void BM_List_Status(benchmark::State& s) { ListWith(s, {{"status", "bounced"}}); }
void BM_List_Type(benchmark::State& s) { ListWith(s, {{"type", "customer"}}); }
void BM_List_Source(benchmark::State& s) { ListWith(s, {{"source", "webhook"}}); }
void BM_List_Tag(benchmark::State& s) { ListWith(s, {{"tag", "vip"}}); }
void BM_List_List(benchmark::State& s) { ListWith(s, {{"list", "Newsletter"}}); }
void BM_List_Query(benchmark::State& s) { ListWith(s, {{"query", "smi"}}); }
void BM_List_CreatedRange(benchmark::State& s) {
  int64_t now = W().clock.NowUnix();
  ListWith(s, {{"created_after", FormatRfc3339(now - 7 * 86400)},
               {"created_before", FormatRfc3339(now)}});
}
BENCHMARK(BM_List_NoFilter);
BENCHMARK(BM_List_Status);
BENCHMARK(BM_List_Type);
BENCHMARK(BM_List_Source);
BENCHMARK(BM_List_Tag);
BENCHMARK(BM_List_List);
BENCHMARK(BM_List_Query);
BENCHMARK(BM_List_CreatedRange);

}  // namespace
}  // namespace crmd::crm
