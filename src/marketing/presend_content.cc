// Content checks of the pre-send check: unsubscribe, postal_address, links, size, alt_text,
// subject (on the message as the first recipient gets it) and merge_empty (on a sample of
// the audience). presend.h, presend_content.h.
#include "src/marketing/presend_content.h"

#include <algorithm>
#include <regex>

#include "src/mail/merge.h"
#include "src/marketing/presend.h"

namespace crmd::marketing {

using nlohmann::json;

namespace {

constexpr size_t kGmailClipBytes = 102 * 1024;  // Gmail clips a message above this
constexpr size_t kMaxSubjectChars = 150;

bool Contains(const std::string& haystack, const std::string& needle) {
  return !needle.empty() && haystack.find(needle) != std::string::npos;
}

// The first non-empty line of the postal address, as a message shows it.
std::string FirstLine(const std::string& address) {
  size_t at = 0;
  while (at < address.size()) {
    size_t end = address.find('\n', at);
    if (end == std::string::npos) end = address.size();
    std::string line = address.substr(at, end - at);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    while (!line.empty() && line.front() == ' ') line.erase(0, 1);
    if (!line.empty()) return line;
    at = end + 1;
  }
  return "";
}

// Whether a link's host is this machine or a private network (RFC 1918, link-local, .local).
bool PrivateHost(std::string host) {
  std::transform(host.begin(), host.end(), host.begin(),
                 [](unsigned char ch) { return std::tolower(ch); });
  if (host == "localhost" || host.ends_with(".localhost") || host.ends_with(".local") ||
      host.ends_with(".internal") || host == "[::1]" || host.rfind("[fc", 0) == 0 ||
      host.rfind("[fd", 0) == 0 || host.rfind("[fe80", 0) == 0)
    return true;
  int a = -1, b = -1;
  if (std::sscanf(host.c_str(), "%d.%d.", &a, &b) != 2) return false;
  return a == 127 || a == 10 || a == 0 || (a == 172 && b >= 16 && b <= 31) ||
         (a == 192 && b == 168) || (a == 169 && b == 254);
}

std::string HostOf(const std::string& url) {
  auto scheme = url.find("://");
  std::string rest = url.substr(scheme + 3);
  rest = rest.substr(0, rest.find_first_of("/?#"));
  if (auto at = rest.rfind('@'); at != std::string::npos) rest = rest.substr(at + 1);
  if (!rest.empty() && rest.front() == '[') return rest.substr(0, rest.find(']') + 1);
  return rest.substr(0, rest.find(':'));
}

void CheckLinks(const std::string& html, const std::string& own_base,
                std::vector<PresendCheck>& out) {
  static const std::regex kHref(R"(\bhref\s*=\s*["']([^"']*)["'])", std::regex::icase);
  json relative = json::array(), local = json::array();
  for (auto it = std::sregex_iterator(html.begin(), html.end(), kHref);
       it != std::sregex_iterator(); ++it) {
    std::string url = (*it)[1].str();
    if (!own_base.empty() && url.rfind(own_base, 0) == 0) continue;  // crmd's own links
    std::string lower = url;
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char ch) { return std::tolower(ch); });
    if (lower.rfind("mailto:", 0) == 0 || lower.rfind("tel:", 0) == 0) continue;
    if (lower.rfind("http://", 0) != 0 && lower.rfind("https://", 0) != 0) {
      if (relative.size() < 5) relative.push_back(url);
    } else if (PrivateHost(HostOf(url)) && local.size() < 5) {
      local.push_back(url);
    }
  }
  if (!relative.empty())
    out.push_back({.id = "links",
                   .severity = "warning",
                   .message = "some links are not absolute http(s) URLs: they go nowhere in a "
                              "mail client",
                   .detail = {{"links", relative}}});
  if (!local.empty())
    out.push_back({.id = "links",
                   .severity = "warning",
                   .message = "some links point to localhost or a private network address: "
                              "recipients cannot reach them",
                   .detail = {{"links", local}}});
}

void CheckImages(const std::string& html, std::vector<PresendCheck>& out) {
  static const std::regex kImg(R"(<img\b[^>]*>)", std::regex::icase);
  static const std::regex kAlt(R"(\balt\s*=)", std::regex::icase);
  int missing = 0;
  for (auto it = std::sregex_iterator(html.begin(), html.end(), kImg); it != std::sregex_iterator();
       ++it)
    if (!std::regex_search((*it).str(), kAlt)) ++missing;
  if (missing > 0)
    out.push_back({.id = "alt_text",
                   .severity = "warning",
                   .message = std::to_string(missing) +
                              " image(s) without alt text: readers with images off or a "
                              "screen reader see nothing",
                   .detail = {{"images", missing}}});
}

void CheckSubject(const std::string& subject, std::vector<PresendCheck>& out) {
  auto warn = [&](std::string message) {
    out.push_back({.id = "subject",
                   .severity = "warning",
                   .message = std::move(message),
                   .detail = {{"subject", subject}}});
  };
  if (subject.find_first_not_of(" \t") == std::string::npos)
    return warn("the subject renders empty");
  size_t chars = 0;
  for (unsigned char ch : subject) chars += (ch & 0xC0) != 0x80;
  if (chars >= kMaxSubjectChars)
    warn("the subject has " + std::to_string(chars) + " characters: keep it under 150");
  int upper = 0, lower = 0;
  for (unsigned char ch : subject) {
    upper += std::isupper(ch) != 0;
    lower += std::islower(ch) != 0;
  }
  if (upper >= 4 && lower == 0) warn("the subject is all capitals, which spam filters dislike");
}

}  // namespace

std::vector<PresendCheck> ContentChecks(const ContentInput& in) {
  std::vector<PresendCheck> out;
  const mail::Message& m = *in.message;
  const std::string text = m.text.value_or("");
  const std::string unsubscribe = in.public_base_url + "/u/";
  if (!Contains(m.html, unsubscribe) && !Contains(text, unsubscribe))
    out.push_back({.id = "unsubscribe",
                   .severity = "error",
                   .message = "the message has no unsubscribe link: put {{unsubscribe_url}} in "
                              "the body, or use a template with the footer"});
  const std::string line = FirstLine(in.company_address);
  if (line.empty())
    out.push_back({.id = "postal_address",
                   .severity = "error",
                   .message = "no postal address is set: set company_address in the settings "
                              "(the law requires one in marketing email)"});
  else if (!Contains(m.html, mail::HtmlEscape(line)) && !Contains(text, line))
    out.push_back({.id = "postal_address",
                   .severity = "warning",
                   .message = "the message does not show the postal address: put "
                              "{{company_address}} in the body, or use a template with the "
                              "footer",
                   .detail = {{"company_address", in.company_address}}});
  CheckLinks(m.html, in.public_base_url, out);
  if (m.html.size() >= kGmailClipBytes)
    out.push_back({.id = "size",
                   .severity = "warning",
                   .message = "the HTML is " + std::to_string(m.html.size() / 1024) +
                              " KB: Gmail clips messages above 102 KB",
                   .detail = {{"bytes", m.html.size()}}});
  CheckImages(m.html, out);
  CheckSubject(m.subject, out);
  return out;
}

std::vector<PresendCheck> MergeEmptyCheck(const std::vector<std::string>& sources,
                                          const std::vector<MailRecipient>& sample) {
  if (sample.empty()) return {};
  std::set<std::string> tags;  // tags without a fallback, filled from the contact
  for (const auto& source : sources) {
    auto parsed = mail::MergeTemplate::Parse(source);
    if (!parsed) continue;
    for (const auto& t : parsed->tags())
      if (!t.fallback && t.name != "unsubscribe_url" && t.name != "company_address" &&
          t.name != "content")
        tags.insert(t.name);
  }
  std::vector<PresendCheck> out;
  for (const auto& tag : tags) {
    size_t empty = 0;
    for (const auto& to : sample) {
      auto values = MergeValuesFor(to, "");
      auto it = values.find(tag);
      empty += it == values.end() || it->second.empty();
    }
    if (empty * 10 > sample.size())
      out.push_back({.id = "merge_empty",
                     .severity = "warning",
                     .message = "{{" + tag + "}} renders empty for " +
                                std::to_string(empty * 100 / sample.size()) +
                                "% of the audience: give it a fallback ({{" + tag + " | \"...\"}})",
                     .detail = {{"tag", tag}, {"empty", empty}, {"sampled", sample.size()}}});
  }
  return out;
}

}  // namespace crmd::marketing
