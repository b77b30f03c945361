#pragma once
// A test-only tool for MCP 2026-07-28 multi round-trip requests (basic/patterns/mrtr),
// registered only by tests: "test_elicit_confirm" asks the person (an elicitation in the mode
// given by the `mode` argument, "form" by default) to confirm `item`, and completes when
// the client retries with the answer. Form mode wants the item's name typed back; URL
// mode only an "accept". Its state ({"item", "round"}) travels sealed in requestState.
//
//   first call                  -> input_required {confirm: elicitation/create}, round 1
//   retry, no "confirm" answer  -> input_required again, round + 1
//   retry, form answer != item  -> input_required again, round + 1
//   retry, accept (and match)   -> {"confirmed": true,  "item", "rounds"}
//   retry, decline / cancel     -> {"confirmed": false, "item", "rounds", "action"}
//   a 2025-era session          -> tool error invalid_transition (needs 2026-07-28)
#include "src/core/result.h"
#include "src/mcp/registry.h"

namespace crmd::testing {

inline constexpr const char* kInputTestTool = "test_elicit_confirm";
inline constexpr const char* kInputTestUrl = "https://crm.test/approve";

Status RegisterInputTestTool(mcp::ToolRegistry& registry);

}  // namespace crmd::testing
