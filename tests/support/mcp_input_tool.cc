#include "tests/support/mcp_input_tool.h"

namespace crmd::testing {

using nlohmann::json;

namespace {

json Descriptor() {
  return json{
      {"name", kInputTestTool},
      {"title", "Confirm (test only)"},
      {"description", "Test only: asks the person to confirm an item, then reports the answer."},
      {"scope", "contacts:read"},
      {"annotations", {{"readOnlyHint", true}}},
      {"inputSchema",
       {{"type", "object"},
        {"properties",
         {{"item", {{"type", "string"}, {"minLength", 1}}},
          {"mode", {{"type", "string"}, {"enum", {"form", "url"}}}}}},
        {"required", {"item"}},
        {"additionalProperties", false}}},
      {"outputSchema",
       {{"type", "object"},
        {"properties",
         {{"confirmed", {{"type", "boolean"}}},
          {"item", {{"type", "string"}}},
          {"rounds", {{"type", "integer"}}},
          {"action", {{"type", "string"}}}}},
        {"required", {"confirmed", "item", "rounds"}},
        {"additionalProperties", false}}},
  };
}

mcp::ToolOutcome Ask(const json& args, int round) {
  std::string item = args["item"].get<std::string>();
  json request =
      args.value("mode", "form") == "url"
          ? mcp::ElicitUrl("Approve " + item + " on the approval page.", kInputTestUrl)
          : mcp::ElicitForm(
                "Type \"" + item + "\" to confirm.",
                json{{"type", "object"},
                     {"properties", {{"answer", {{"type", "string"}, {"title", "Item"}}}}},
                     {"required", {"answer"}}});
  return mcp::ToolOutcome::NeedInput(json{{"confirm", std::move(request)}},
                                     json{{"item", item}, {"round", round}});
}

mcp::ToolOutcome Handle(const mcp::ToolContext& ctx, const json& args) {
  if (!ctx.CanRequestInput()) {
    return mcp::ToolOutcome::Fail({Errc::kInvalidTransition, "this tool needs MCP 2026-07-28", {}});
  }
  if (!ctx.input) return Ask(args, 1);
  const json& state = ctx.input->state;
  int round = state.value("round", 0);
  const json& responses = ctx.input->responses;
  if (!responses.contains("confirm")) return Ask(args, round + 1);
  const json& answer = responses["confirm"];
  std::string action = answer.value("action", "");
  json out{{"item", state.value("item", "")}, {"rounds", round}};
  if (action == "accept") {
    if (args.value("mode", "form") == "form") {
      const json content = answer.value("content", json::object());
      if (content.value("answer", "") != state.value("item", "")) return Ask(args, round + 1);
    }
    out["confirmed"] = true;
    return mcp::ToolOutcome::Ok(std::move(out));
  }
  out["confirmed"] = false;
  out["action"] = action;
  return mcp::ToolOutcome::Ok(std::move(out));
}

}  // namespace

Status RegisterInputTestTool(mcp::ToolRegistry& registry) {
  return registry.RegisterDescriptor(Descriptor(), Handle);
}

}  // namespace crmd::testing
