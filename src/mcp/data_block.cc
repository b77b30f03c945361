#include "src/mcp/data_block.h"

namespace crmd::mcp {

void AppendDataText(std::string& out, std::string_view json_text) {
  out.reserve(out.size() + kDataPreamble.size() + json_text.size() + 32);
  out.append(kDataPreamble);
  out.push_back('\n');
  out.append(kDataFenceOpen);
  out.push_back('\n');
  // A backtick occurs only inside a JSON string (keys included), where \u0060 means the
  // same character: the fence cannot be written by the data, and the JSON is unchanged.
  size_t from = 0;
  for (size_t at = json_text.find('`'); at != std::string_view::npos;
       at = json_text.find('`', from)) {
    out.append(json_text.substr(from, at - from));
    out.append("\\u0060");
    from = at + 1;
  }
  out.append(json_text.substr(from));
  out.push_back('\n');
  out.append(kDataFenceClose);
}

std::string DataText(std::string_view json_text) {
  std::string out;
  AppendDataText(out, json_text);
  return out;
}

std::optional<nlohmann::json> ParseDataText(std::string_view text) {
  std::string head;
  head.append(kDataPreamble).push_back('\n');
  head.append(kDataFenceOpen).push_back('\n');
  std::string tail = "\n" + std::string(kDataFenceClose);
  if (text.size() < head.size() + tail.size() || text.substr(0, head.size()) != head ||
      text.substr(text.size() - tail.size()) != tail)
    return std::nullopt;
  std::string_view body = text.substr(head.size(), text.size() - head.size() - tail.size());
  if (body.find('\n') != std::string_view::npos) return std::nullopt;
  auto parsed = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) return std::nullopt;
  return parsed;
}

}  // namespace crmd::mcp
