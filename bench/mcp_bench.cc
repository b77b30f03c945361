// The tools/call hot path without the network: JSON-RPC parse, registry dispatch with
// input validation, and the whole endpoint (session lookup, result, serialisation).
//   ./build/bench/crmd_bench_mcp --benchmark_min_time=1s
#include <benchmark/benchmark.h>
#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include "src/core/clock.h"
#include "src/core/random.h"
#include "src/mcp/endpoint.h"
#include "src/mcp/jsonrpc.h"
#include "src/mcp/registry.h"

namespace crmd::mcp {
namespace {

using nlohmann::json;

// Shaped like a real CRM tool: a handful of typed, constrained properties.
json Descriptor() {
  return json{
      {"name", "create_contact"},
      {"description", "Creates a contact."},
      {"scope", "contacts:write"},
      {"inputSchema",
       {{"type", "object"},
        {"properties",
         {{"email", {{"type", "string"}, {"maxLength", 254}, {"pattern", "^[^@\\s]+@[^@\\s]+$"}}},
          {"first_name", {{"type", "string"}, {"maxLength", 100}}},
          {"last_name", {{"type", "string"}, {"maxLength", 100}}},
          {"status", {{"type", "string"}, {"enum", {"subscribed", "unsubscribed", "pending"}}}},
          {"tags", {{"type", "array"}, {"items", {{"type", "string"}}}, {"maxItems", 50}}},
          {"idempotency_key", {{"type", "string"}, {"maxLength", 200}}}}},
        {"required", {"email"}},
        {"additionalProperties", false}}},
      {"outputSchema",
       {{"type", "object"},
        {"properties",
         {{"id", {{"type", "integer"}}},
          {"email", {{"type", "string"}}},
          {"revision", {{"type", "integer"}}}}},
        {"required", {"id", "email", "revision"}}}},
  };
}

const json kArgs = {{"email", "ada@example.com"},
                    {"first_name", "Ada"},
                    {"last_name", "Lovelace"},
                    {"status", "subscribed"},
                    {"tags", {"vip", "newsletter"}}};

ToolHandler Handler() {
  return [](const ToolContext&, const json& args) {
    return ToolOutcome::Ok(json{{"id", 42}, {"email", args["email"]}, {"revision", 1}});
  };
}

std::string CallBody() {
  return json{{"jsonrpc", "2.0"},
              {"id", 7},
              {"method", "tools/call"},
              {"params", {{"name", "create_contact"}, {"arguments", kArgs}}}}
      .dump();
}

void BM_JsonRpcParse(benchmark::State& state) {
  std::string body = CallBody();
  for (auto _ : state) {
    auto p = jsonrpc::Parse(body);
    benchmark::DoNotOptimize(p);
  }
}
BENCHMARK(BM_JsonRpcParse);

void BM_RegistryCall(benchmark::State& state) {
  static ToolRegistry* registry = [] {
    auto* r = new ToolRegistry();
    if (!r->RegisterDescriptor(Descriptor(), Handler())) std::abort();
    return r;
  }();
  Principal p;
  p.subject = "u";
  p.client_id = "c";
  p.scopes = {"contacts:write"};
  json params{{"name", "create_contact"}, {"arguments", kArgs}};
  for (auto _ : state) {
    auto o = registry->Call(ToolContext{p, "r", "s"}, params);
    benchmark::DoNotOptimize(o);
  }
}
BENCHMARK(BM_RegistryCall)->Threads(1)->Threads(2);

void BM_EndpointToolsCall(benchmark::State& state) {
  spdlog::set_level(spdlog::level::warn);  // the per-call audit line would dominate
  static SystemClock clock;
  static SecureRandom random;
  static ToolRegistry* registry = [] {
    auto* r = new ToolRegistry();
    if (!r->RegisterDescriptor(Descriptor(), Handler())) std::abort();
    return r;
  }();
  // Unlimited: the benchmark measures the call path, not the rate limiter refusing it.
  static McpEndpoint* endpoint = [] {
    McpEndpointOptions options;
    options.rate_limit.per_second = 0;
    return new McpEndpoint(std::move(options), *registry, clock, random);
  }();
  Principal p;
  p.subject = "u" + std::to_string(state.thread_index());
  p.client_id = "c";
  p.scopes = {"contacts:write"};
  http::Request init;
  init.method = "POST";
  init.headers = {{"Content-Type", "application/json"},
                  {"Accept", "application/json, text/event-stream"}};
  init.body =
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}})";
  auto res = endpoint->Handle(init, p);
  std::string sid(*res.Header("Mcp-Session-Id"));
  http::Request call = init;
  call.headers.emplace_back("Mcp-Session-Id", sid);
  call.headers.emplace_back("MCP-Protocol-Version", "2025-11-25");
  call.body = CallBody();
  for (auto _ : state) {
    auto r = endpoint->Handle(call, p);
    if (r.status != 200 || r.body.find("\"isError\":false") == std::string::npos) {
      state.SkipWithError("tools/call did not succeed");
      break;
    }
    benchmark::DoNotOptimize(r);
  }
}
BENCHMARK(BM_EndpointToolsCall)->Threads(1)->Threads(2);

}  // namespace
}  // namespace crmd::mcp
