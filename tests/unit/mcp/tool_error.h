#pragma once
// A tool error's body travels in its text block (inside the untrusted-data block,
// src/mcp/data_block.h), never as structuredContent; ErrorOf returns it (the "error"
// member), shared by the registry and endpoint tests.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "src/mcp/data_block.h"

namespace crmd::testing {

inline nlohmann::json ErrorOf(const nlohmann::json& result) {
  EXPECT_FALSE(result.contains("structuredContent")) << result.dump();
  auto body = mcp::ParseDataText(result.at("content").at(0).at("text").get<std::string>());
  EXPECT_TRUE(body) << result.dump();
  return body ? body->at("error") : nlohmann::json::object();
}

}  // namespace crmd::testing
