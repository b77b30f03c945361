#pragma once
// MCP Apps (SEP-1865, the extension io.modelcontextprotocol/ui): HTML views a server
// hands the host, which renders them in a sandboxed frame beside the conversation.
//
// UiResources holds the views (ui:// documents of MIME type text/html;profile=mcp-app,
// each with its _meta.ui: CSP and permissions) and which tool points at which view. The
// endpoint offers them only to a client that declared the extension (2025-era: in
// initialize's capabilities.extensions, kept with the session; 2026-07-28: in the
// request's clientCapabilities.extensions): such a client sees the extension in the
// server's capabilities, resources/list and resources/read, and _meta.ui.resourceUri on
// the tools that have a view. Any other client sees exactly what it saw before: the
// views add nothing to tool results, which keep their structuredContent and text.
//
// Thread-safety: Add() and Link() happen before the server starts; afterwards every const
// method is safe to call concurrently.
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "src/core/result.h"

namespace crmd::mcp {

inline constexpr std::string_view kUiExtension = "io.modelcontextprotocol/ui";
inline constexpr std::string_view kAppMimeType = "text/html;profile=mcp-app";

struct UiResource {
  std::string uri;  // ui://...
  std::string name;
  std::string title;
  std::string description;
  std::string html;
  nlohmann::json ui_meta;  // the resource's _meta.ui (csp, permissions, prefersBorder)
};

class UiResources {
 public:
  UiResources() = default;
  UiResources(const UiResources&) = delete;
  UiResources& operator=(const UiResources&) = delete;

  // Fails (kInvalidArgument) when the uri is not ui://, is taken, or the html is empty.
  Status Add(UiResource resource);
  // `tool`'s view is `uri`. Fails when the uri was not added or the tool already has one.
  Status Link(std::string tool, std::string uri);

  bool empty() const { return resources_.empty(); }
  // A ListResourcesResult (every view, in uri order, without its text).
  nlohmann::json List() const;
  // A ReadResourceResult, or nullptr when no view has that uri.
  nlohmann::json Read(std::string_view uri) const;
  // Adds _meta.ui.resourceUri to each linked tool of a ListToolsResult.
  void AnnotateTools(nlohmann::json& list_result) const;
  // The view of `tool`, or empty.
  std::string_view ViewOf(std::string_view tool) const;

 private:
  nlohmann::json Entry(const UiResource& r) const;

  std::map<std::string, UiResource, std::less<>> resources_;
  std::map<std::string, std::string, std::less<>> links_;
};

// Whether `capabilities` (a ClientCapabilities object) declares MCP Apps:
// extensions["io.modelcontextprotocol/ui"] is an object whose mimeTypes, when present,
// list text/html;profile=mcp-app.
bool DeclaresUiExtension(const nlohmann::json& capabilities);

// The server's capabilities.extensions entry for MCP Apps.
nlohmann::json UiExtensionCapability();

}  // namespace crmd::mcp
