#pragma once
// Merge tags: personalisation placeholders in subjects and bodies.
//
//   {{first_name}}              the value, or nothing
//   {{ first_name | "there" }}  the value, or "there" when it is missing or empty
//   {{custom.plan}}             a custom field (custom.<key>, key [A-Za-z0-9_-]+)
//
// A template is parsed and checked when it is saved (MergeTemplate::Parse), so a typo is
// a validation error naming the tag and where it is, never a blank at send time. A parsed
// template is immutable and thread-safe; rendering never fails. Inside a fallback, \" and
// \\ stand for " and \. There is no other syntax: "{{" always opens a tag.
//
// In HTML a value may be a stranger's text (a public form fills custom fields), so a tag
// inside a URL attribute (href, src, action, formaction, background, poster, xlink:href)
// whose scheme the template does not fix itself (no ':', '/', '?' or '#' before it in the
// value) renders only an http:, https: or mailto: value; any other value (javascript:,
// data:, a relative path) renders as a missing one would (the fallback, or nothing).
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "src/core/result.h"

namespace crmd::mail {

// The tags a template may use: `fields` by name, plus custom.<key> when `custom_fields`.
struct MergeSchema {
  std::vector<std::string> fields;
  bool custom_fields = true;
};

// The contact fields of crm (docs/crm.md), the per-recipient links a send adds and the
// sender's postal address (settings company_address). mail knows nothing of contacts:
// this is vocabulary only, and callers may pass their own.
MergeSchema DefaultMergeSchema();  // email, first_name, last_name, phone, unsubscribe_url,
                                   // company_address

// Values by tag name ("first_name", "custom.plan"). A missing name renders as its fallback.
using MergeValues = std::map<std::string, std::string, std::less<>>;

struct MergeTag {
  std::string name;
  std::optional<std::string> fallback;
  size_t offset = 0;  // byte offset of "{{" in the source
  size_t line = 1;    // 1-based line and column (in bytes) of "{{"
  size_t column = 1;
  size_t end = 0;  // byte offset just past "}}"
  // HTML only: inside a URL attribute's value, and whether the template leaves that
  // value's scheme to this tag (see above). `url_prefix` is the literal text of the value
  // before the tag; `after_tag` says another tag came before it in the value.
  bool in_url = false;
  bool scheme_open = false;
  bool after_tag = false;
  std::string url_prefix;
};

// A byte range [begin, end) of rendered HTML that a merge value filled.
struct MergeSpan {
  size_t begin = 0;
  size_t end = 0;
};

// True when `url`, as a browser reads it (leading spaces and control characters skipped,
// tabs and line breaks ignored, the scheme in any case), is http:, https: or mailto:.
bool IsSafeLinkUrl(std::string_view url);

class MergeTemplate {
 public:
  // Fails with kInvalidArgument on an unknown tag, a malformed tag or an unclosed "{{";
  // the message names the tag and its line and column, e.g.
  // `unknown merge tag "frist_name" at line 2, column 7`.
  static Result<MergeTemplate> Parse(std::string_view source,
                                     const MergeSchema& schema = DefaultMergeSchema());

  // Values inserted as they are: for subjects and text parts.
  std::string RenderText(const MergeValues& values) const;
  // Values HTML-escaped (& < > " '): for HTML parts, including attribute values; URL
  // attributes take only safe values (above). `filled`, when given, receives the ranges of
  // the output that values filled inside URL attributes (not fallbacks), so that click
  // tracking leaves those links alone.
  std::string RenderHtml(const MergeValues& values, std::vector<MergeSpan>* filled = nullptr) const;

  const std::vector<MergeTag>& tags() const { return tags_; }

 private:
  // Literal text and tags in source order.
  std::vector<std::variant<std::string, MergeTag>> pieces_;
  std::vector<MergeTag> tags_;

  std::string Render(const MergeValues& values, bool html, std::vector<MergeSpan>* filled) const;
};

}  // namespace crmd::mail
