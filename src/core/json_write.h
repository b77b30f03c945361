#pragma once
// Serialising JSON answers fast. nlohmann's dump() decodes every byte of every string
// through its UTF-8 state machine; a tool result carries its structured content twice
// (once as the text of content[0]), so on get_contact that was 40 % of the handler's
// instructions (docs/performance.md). DumpJson writes the same bytes as
// dump(-1, ' ', false, handler): compact, keys in the object's order, strings escaped as
// nlohmann escapes them, non-ASCII kept as UTF-8. Runs of plain ASCII are copied whole;
// only non-ASCII bytes are validated. A string that is not valid UTF-8 makes it fall back
// to nlohmann's own dump() with the same handler, so that case (an exception under
// `strict`, U+FFFD under `replace`) behaves exactly as before.
//
// Pure functions; thread-safe.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace crmd {

std::string DumpJson(const nlohmann::json& value, nlohmann::json::error_handler_t on_invalid_utf8 =
                                                      nlohmann::json::error_handler_t::strict);

// A value inside the document being written, and its serialisation, written in its place
// instead of being serialised again. A tool result carries its structured content as a
// tree and as the text of content[0], which is that tree's DumpJson: the answer's writer
// copies the text where the tree goes (docs/performance.md).
struct JsonSerialized {
  const nlohmann::json* node = nullptr;
  std::string_view text;  // REQUIRES: DumpJson(*node) == text
};

// DumpJson, writing `known.text` where `known.node` is met (compared by address).
std::string DumpJson(const nlohmann::json& value, nlohmann::json::error_handler_t on_invalid_utf8,
                     const JsonSerialized& known);

// Pieces for writers that build a known document straight into a string, bytes as
// DumpJson(..., replace) writes them (a string that is not UTF-8 gets U+FFFD): a tool's
// answer written without a tree (crm::AppendJson(Contact)), compared with DumpJson of the
// tree in tests.
void AppendJsonString(std::string& out, std::string_view s);
void AppendJsonInt(std::string& out, int64_t v);
void AppendJson(std::string& out, const nlohmann::json& value);

}  // namespace crmd
