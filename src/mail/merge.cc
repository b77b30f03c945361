#include "src/mail/merge.h"

#include <algorithm>
#include <cctype>

#include "src/mail/message.h"

namespace crmd::mail {
namespace {

bool IsNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
}

bool IsCustomKey(std::string_view key) {
  return !key.empty() && std::all_of(key.begin(), key.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
  });
}

bool Known(const MergeSchema& schema, std::string_view name) {
  if (std::find(schema.fields.begin(), schema.fields.end(), name) != schema.fields.end()) {
    return true;
  }
  constexpr std::string_view kCustom = "custom.";
  return schema.custom_fields && name.substr(0, kCustom.size()) == kCustom &&
         IsCustomKey(name.substr(kCustom.size()));
}

std::string Where(const MergeTag& t) {
  return "at line " + std::to_string(t.line) + ", column " + std::to_string(t.column);
}

}  // namespace

MergeSchema DefaultMergeSchema() {
  return {.fields = {"email", "first_name", "last_name", "phone", "unsubscribe_url"},
          .custom_fields = true};
}

Result<MergeTemplate> MergeTemplate::Parse(std::string_view src, const MergeSchema& schema) {
  MergeTemplate t;
  size_t line = 1;
  size_t line_start = 0;
  size_t pos = 0;
  auto skip_ws = [&](size_t& p) {
    while (p < src.size() && (src[p] == ' ' || src[p] == '\t')) ++p;
  };
  while (pos < src.size()) {
    size_t open = src.find("{{", pos);
    size_t literal_end = open == src.npos ? src.size() : open;
    for (size_t k = pos; k < literal_end; ++k) {
      if (src[k] == '\n') {
        ++line;
        line_start = k + 1;
      }
    }
    if (literal_end > pos) t.pieces_.emplace_back(std::string(src.substr(pos, literal_end - pos)));
    if (open == src.npos) break;

    MergeTag tag{.offset = open, .line = line, .column = open - line_start + 1};
    size_t p = open + 2;
    skip_ws(p);
    size_t name_begin = p;
    while (p < src.size() && IsNameChar(src[p])) ++p;
    tag.name = std::string(src.substr(name_begin, p - name_begin));
    skip_ws(p);
    bool malformed = tag.name.empty();
    if (!malformed && p < src.size() && src[p] == '|') {
      ++p;
      skip_ws(p);
      if (p >= src.size() || src[p] != '"') {
        return Fail(Errc::kInvalidArgument, "the fallback of merge tag \"" + tag.name + "\" " +
                                                Where(tag) + " must be a quoted string");
      }
      std::string fallback;
      for (++p; p < src.size() && src[p] != '"'; ++p) {
        if (src[p] == '\\' && p + 1 < src.size()) ++p;
        if (src[p] == '\n') {
          malformed = true;
          break;
        }
        fallback += src[p];
      }
      if (p >= src.size()) malformed = true;
      ++p;
      skip_ws(p);
      tag.fallback = std::move(fallback);
    }
    if (malformed || src.compare(p, 2, "}}") != 0) {
      size_t close = src.find("}}", open + 2);
      if (close == src.npos || src.substr(open, close - open).find('\n') != src.npos) {
        return Fail(Errc::kInvalidArgument, "unclosed merge tag " + Where(tag));
      }
      return Fail(Errc::kInvalidArgument, "malformed merge tag \"" +
                                              std::string(src.substr(open, close + 2 - open)) +
                                              "\" " + Where(tag));
    }
    if (!Known(schema, tag.name)) {
      std::string known;
      for (const std::string& f : schema.fields) known += (known.empty() ? "" : ", ") + f;
      if (schema.custom_fields) known += (known.empty() ? "" : ", ") + std::string("custom.<key>");
      return Fail(Errc::kInvalidArgument, "unknown merge tag \"" + tag.name + "\" " + Where(tag) +
                                              " (known: " + known + ")");
    }
    pos = p + 2;
    t.tags_.push_back(tag);
    t.pieces_.emplace_back(std::move(tag));
  }
  return t;
}

std::string MergeTemplate::Render(const MergeValues& values, bool html) const {
  std::string out;
  for (const auto& piece : pieces_) {
    if (const auto* literal = std::get_if<std::string>(&piece)) {
      out += *literal;
      continue;
    }
    const MergeTag& tag = std::get<MergeTag>(piece);
    auto it = values.find(tag.name);
    const std::string* value = it != values.end() && !it->second.empty() ? &it->second : nullptr;
    if (!value && tag.fallback) value = &*tag.fallback;
    if (value) out += html ? HtmlEscape(*value) : *value;
  }
  return out;
}

std::string MergeTemplate::RenderText(const MergeValues& values) const {
  return Render(values, false);
}

std::string MergeTemplate::RenderHtml(const MergeValues& values) const {
  return Render(values, true);
}

}  // namespace crmd::mail
