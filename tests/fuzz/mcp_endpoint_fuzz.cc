// The JSON-RPC parser and the MCP endpoint's dispatcher (src/mcp): the body is the input;
// the first byte picks the request headers (protocol generation, session, Accept), so
// session-era and 2026-07-28 paths are both reached. The registry holds every real tool
// descriptor (input schemas included) with a handler that echoes nothing. Whatever comes
// in, the answer is an HTTP response with a JSON-RPC body or an empty 202, never a crash.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "src/core/clock.h"
#include "src/core/embedded.h"
#include "src/core/principal.h"
#include "src/core/random.h"
#include "src/mcp/endpoint.h"
#include "src/mcp/jsonrpc.h"
#include "src/mcp/registry.h"

namespace {

using nlohmann::json;

struct World {
  crmd::SystemClock clock;
  crmd::SecureRandom random;
  crmd::mcp::ToolRegistry tools;
  std::unique_ptr<crmd::mcp::McpEndpoint> endpoint;
  crmd::Principal principal;
  std::string session;

  World() {
    for (const auto& f : crmd::embedded::All()) {
      if (f.path.rfind("tools/", 0) != 0 || f.path.size() < 11) continue;
      if (f.path.substr(f.path.size() - 5) != ".json") continue;
      json descriptor = json::parse(f.data, nullptr, false);
      if (!descriptor.is_object() || !descriptor.contains("inputSchema")) continue;
      (void)tools.RegisterDescriptor(descriptor, [](const crmd::mcp::ToolContext&, const json&) {
        return crmd::mcp::ToolOutcome::Ok(json::object());
      });
    }
    endpoint = std::make_unique<crmd::mcp::McpEndpoint>(crmd::mcp::McpEndpointOptions{}, tools,
                                                        clock, random);
    principal.subject = "fuzz";
    principal.client_id = "fuzz-client";
    principal.scopes = {"contacts:read", "contacts:write"};
    crmd::http::Request init;
    init.method = "POST";
    init.path = "/mcp";
    init.body =
        R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{"url":{}}},"clientInfo":{"name":"fuzz","version":"1"}}})";
    init.headers = {{"Content-Type", "application/json"},
                    {"Accept", "application/json, text/event-stream"}};
    auto r = endpoint->Handle(init, principal);
    for (const auto& [name, value] : r.headers)
      if (name == "Mcp-Session-Id") session = value;
    if (session.empty()) std::abort();
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static World world;
  if (size == 0) return 0;
  const uint8_t pick = data[0];
  std::string body(reinterpret_cast<const char*>(data + 1), size - 1);
  (void)crmd::mcp::jsonrpc::Parse(body);  // the parser on its own

  crmd::http::Request req;
  req.method = (pick & 0x80) ? "DELETE" : "POST";
  req.path = "/mcp";
  req.body = std::move(body);
  req.headers.emplace_back("Content-Type", (pick & 0x40) ? "text/plain" : "application/json");
  if (!(pick & 0x20)) req.headers.emplace_back("Accept", "application/json, text/event-stream");
  switch (pick & 0x07) {
    case 0:  // session-era, with the session
      req.headers.emplace_back("Mcp-Session-Id", world.session);
      req.headers.emplace_back("MCP-Protocol-Version", "2025-11-25");
      break;
    case 1:  // 2026-07-28 headers
      req.headers.emplace_back("MCP-Protocol-Version", "2026-07-28");
      req.headers.emplace_back("Mcp-Method", "tools/call");
      req.headers.emplace_back("Mcp-Name", "get_contact");
      break;
    case 2:
      req.headers.emplace_back("MCP-Protocol-Version", "2026-07-28");
      req.headers.emplace_back("Mcp-Method", "tools/list");
      break;
    case 3:  // an unknown session
      req.headers.emplace_back("Mcp-Session-Id", "not-a-session");
      break;
    default:
      break;
  }
  crmd::http::Response res = world.endpoint->Handle(req, world.principal);
  if (res.status < 200 || res.status > 599) std::abort();
  if (!res.body.empty() && res.status != 202) {
    json parsed = json::parse(res.body, nullptr, false);
    if (parsed.is_discarded() || !parsed.is_object() || parsed.value("jsonrpc", "") != "2.0")
      std::abort();
  }
  return 0;
}
