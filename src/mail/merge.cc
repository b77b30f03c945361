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

bool IsUrlAttribute(std::string_view name) {
  for (std::string_view a :
       {"href", "src", "action", "formaction", "background", "poster", "xlink:href"})
    if (name == a) return true;
  return false;
}

bool IsHtmlSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }

// Where `tag` stands in HTML: inside the value of a URL attribute of an element, and the
// value's literal text before it. `earlier` are the tags before it (skipped as opaque).
// A small scan from the last '<' before the tag; markup it does not understand (a
// comment, a closing tag) leaves the tag outside any attribute.
void FindUrlContext(std::string_view src, const std::vector<MergeTag>& earlier, MergeTag& tag) {
  size_t lt = src.rfind('<', tag.offset);
  if (lt == src.npos || lt + 1 >= tag.offset ||
      !std::isalpha(static_cast<unsigned char>(src[lt + 1])))
    return;
  auto skip_tag = [&](size_t p) {  // past an earlier merge tag starting at p, else p
    for (const auto& t : earlier)
      if (t.offset == p) return t.end;
    return p;
  };
  size_t p = lt + 1;
  while (p < tag.offset && !IsHtmlSpace(src[p]) && src[p] != '>' && src[p] != '/') ++p;
  while (p < tag.offset) {
    while (p < tag.offset && (IsHtmlSpace(src[p]) || src[p] == '/')) ++p;
    if (p >= tag.offset || src[p] == '>') return;
    size_t name_begin = p;
    while (p < tag.offset && !IsHtmlSpace(src[p]) && src[p] != '=' && src[p] != '>' &&
           src[p] != '/')
      p = skip_tag(p) == p ? p + 1 : skip_tag(p);
    std::string name(src.substr(name_begin, p - name_begin));
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    while (p < tag.offset && IsHtmlSpace(src[p])) ++p;
    if (p >= tag.offset || src[p] != '=') continue;
    ++p;
    while (p < tag.offset && IsHtmlSpace(src[p])) ++p;
    char quote = p < tag.offset && (src[p] == '"' || src[p] == '\'') ? src[p] : 0;
    if (quote) ++p;
    std::string literal;
    bool after_tag = false;
    while (p < tag.offset) {
      if (size_t q = skip_tag(p); q != p) {
        after_tag = true;
        p = q;
        continue;
      }
      char c = src[p];
      if (quote ? c == quote : (IsHtmlSpace(c) || c == '>')) break;
      literal += c;
      ++p;
    }
    if (p < tag.offset) {  // the value ended before the tag
      if (quote) ++p;
      continue;
    }
    tag.in_url = IsUrlAttribute(name);
    tag.scheme_open = tag.in_url && literal.find_first_of(":/?#") == std::string::npos;
    tag.after_tag = after_tag;
    tag.url_prefix = std::move(literal);
    return;
  }
}

std::string Where(const MergeTag& t) {
  return "at line " + std::to_string(t.line) + ", column " + std::to_string(t.column);
}

}  // namespace

MergeSchema DefaultMergeSchema() {
  return {
      .fields = {"email", "first_name", "last_name", "phone", "unsubscribe_url", "company_address"},
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
    tag.end = pos;
    FindUrlContext(src, t.tags_, tag);
    t.tags_.push_back(tag);
    t.pieces_.emplace_back(std::move(tag));
  }
  return t;
}

std::string MergeTemplate::Render(const MergeValues& values, bool html,
                                  std::vector<MergeSpan>* filled) const {
  std::string out;
  for (const auto& piece : pieces_) {
    if (const auto* literal = std::get_if<std::string>(&piece)) {
      out += *literal;
      continue;
    }
    const MergeTag& tag = std::get<MergeTag>(piece);
    auto it = values.find(tag.name);
    const std::string* value = it != values.end() && !it->second.empty() ? &it->second : nullptr;
    if (value && html && tag.scheme_open &&
        !IsSafeLinkUrl(tag.after_tag ? *value : tag.url_prefix + *value))
      value = nullptr;
    bool from_values = value != nullptr;
    if (!value && tag.fallback) value = &*tag.fallback;
    if (!value) continue;
    size_t begin = out.size();
    out += html ? HtmlEscape(*value) : *value;
    if (filled && html && tag.in_url && from_values) filled->push_back({begin, out.size()});
  }
  return out;
}

std::string MergeTemplate::RenderText(const MergeValues& values) const {
  return Render(values, false, nullptr);
}

std::string MergeTemplate::RenderHtml(const MergeValues& values,
                                      std::vector<MergeSpan>* filled) const {
  return Render(values, true, filled);
}

bool IsSafeLinkUrl(std::string_view url) {
  size_t i = 0;
  while (i < url.size() && static_cast<unsigned char>(url[i]) <= 0x20) ++i;
  std::string scheme;
  for (; i < url.size() && scheme.size() < 8; ++i) {
    char c = url[i];
    if (c == '\t' || c == '\n' || c == '\r') continue;
    scheme += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return scheme.rfind("http://", 0) == 0 || scheme.rfind("https://", 0) == 0 ||
         scheme.rfind("mailto:", 0) == 0;
}

}  // namespace crmd::mail
