#include "src/mcp/apps.h"

namespace crmd::mcp {

using nlohmann::json;

Status UiResources::Add(UiResource resource) {
  if (resource.uri.rfind("ui://", 0) != 0)
    return Fail(Errc::kInvalidArgument, "a view's uri must start with ui://: " + resource.uri);
  if (resource.html.empty())
    return Fail(Errc::kInvalidArgument, "the view " + resource.uri + " has no html");
  if (resources_.contains(resource.uri))
    return Fail(Errc::kInvalidArgument, "the view " + resource.uri + " is already added");
  std::string uri = resource.uri;
  resources_.emplace(std::move(uri), std::move(resource));
  return Ok();
}

Status UiResources::Link(std::string tool, std::string uri) {
  if (!resources_.contains(uri))
    return Fail(Errc::kInvalidArgument, "no view " + uri + " for the tool " + tool);
  if (links_.contains(tool))
    return Fail(Errc::kInvalidArgument, "the tool " + tool + " already has a view");
  links_.emplace(std::move(tool), std::move(uri));
  return Ok();
}

json UiResources::Entry(const UiResource& r) const {
  return json{{"uri", r.uri},
              {"name", r.name},
              {"title", r.title},
              {"description", r.description},
              {"mimeType", kAppMimeType},
              {"_meta", {{"ui", r.ui_meta}}}};
}

json UiResources::List() const {
  json resources = json::array();
  for (const auto& [uri, r] : resources_) resources.push_back(Entry(r));
  return json{{"resources", std::move(resources)}};
}

json UiResources::Read(std::string_view uri) const {
  auto it = resources_.find(uri);
  if (it == resources_.end()) return nullptr;
  const UiResource& r = it->second;
  // The host reads the CSP from the content item first (the list entry is its fallback).
  json content{
      {"uri", r.uri}, {"mimeType", kAppMimeType}, {"text", r.html}, {"_meta", {{"ui", r.ui_meta}}}};
  return json{{"contents", json::array({std::move(content)})}};
}

void UiResources::AnnotateTools(json& list_result) const {
  auto tools = list_result.find("tools");
  if (tools == list_result.end() || !tools->is_array()) return;
  for (auto& tool : *tools) {
    auto name = tool.find("name");
    if (name == tool.end() || !name->is_string()) continue;
    auto link = links_.find(name->get_ref<const std::string&>());
    if (link == links_.end()) continue;
    tool["_meta"]["ui"]["resourceUri"] = link->second;
  }
}

std::string_view UiResources::ViewOf(std::string_view tool) const {
  auto link = links_.find(tool);
  return link == links_.end() ? std::string_view() : std::string_view(link->second);
}

bool DeclaresUiExtension(const json& capabilities) {
  if (!capabilities.is_object()) return false;
  auto ext = capabilities.find("extensions");
  if (ext == capabilities.end() || !ext->is_object()) return false;
  auto ui = ext->find(std::string(kUiExtension));
  if (ui == ext->end() || !ui->is_object()) return false;
  auto mimes = ui->find("mimeTypes");
  if (mimes == ui->end()) return true;
  if (!mimes->is_array()) return false;
  for (const auto& m : *mimes)
    if (m.is_string() && m.get_ref<const std::string&>() == kAppMimeType) return true;
  return false;
}

json UiExtensionCapability() {
  return json{{"mimeTypes", json::array({std::string(kAppMimeType)})}};
}

}  // namespace crmd::mcp
