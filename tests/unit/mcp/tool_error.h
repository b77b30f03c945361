#pragma once
// A tool error's body travels in its text block, never as structuredContent; ErrorOf
// returns it (the "error" member), shared by the registry and endpoint tests.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

namespace crmd::testing {

inline nlohmann::json ErrorOf(const nlohmann::json& result) {
  EXPECT_FALSE(result.contains("structuredContent")) << result.dump();
  return nlohmann::json::parse(result.at("content").at(0).at("text").get<std::string>())
      .at("error");
}

}  // namespace crmd::testing
