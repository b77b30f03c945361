// HtmlToText (declared in message.h): the text/plain alternative of an HTML body. Not an
// HTML parser: a tag scanner that is good enough for the markup of email templates and
// never fails (malformed markup degrades to more literal text, never to lost text).
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <string>
#include <string_view>

#include "src/core/text.h"
#include "src/mail/message.h"

namespace crmd::mail {
namespace {

void AppendUtf8(std::string& out, uint32_t cp) {
  if (cp == 0 || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) cp = 0xFFFD;
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

struct NamedEntity {
  std::string_view name;
  uint32_t code_point;
};
constexpr NamedEntity kEntities[] = {
    {"amp", '&'},      {"lt", '<'},       {"gt", '>'},       {"quot", '"'},     {"apos", '\''},
    {"nbsp", ' '},     {"copy", 0xA9},    {"reg", 0xAE},     {"trade", 0x2122}, {"hellip", 0x2026},
    {"mdash", 0x2014}, {"ndash", 0x2013}, {"lsquo", 0x2018}, {"rsquo", 0x2019}, {"ldquo", 0x201C},
    {"rdquo", 0x201D}, {"bull", 0x2022},  {"middot", 0xB7},  {"euro", 0x20AC},  {"pound", 0xA3},
    {"zwnj", 0x200C},  {"zwj", 0x200D},   {"shy", 0xAD},     {"laquo", 0xAB},   {"raquo", 0xBB},
};

// Entities decoded (&amp; &#233; &#xE9; and the named ones above); unknown ones kept.
std::string DecodeEntities(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '&') {
      out += s[i];
      continue;
    }
    size_t semi = s.find(';', i);
    if (semi == s.npos || semi - i > 10) {
      out += '&';
      continue;
    }
    std::string_view body = s.substr(i + 1, semi - i - 1);
    bool done = false;
    if (body.size() > 1 && body[0] == '#') {
      bool hex = body[1] == 'x' || body[1] == 'X';
      std::string_view digits = body.substr(hex ? 2 : 1);
      uint32_t cp = 0;
      bool ok = !digits.empty() && digits.size() <= 7;
      for (char c : digits) {
        int v = std::isdigit(static_cast<unsigned char>(c)) ? c - '0'
                : hex && std::isxdigit(static_cast<unsigned char>(c))
                    ? std::tolower(static_cast<unsigned char>(c)) - 'a' + 10
                    : -1;
        if (v < 0) ok = false;
        cp = cp * (hex ? 16 : 10) + static_cast<uint32_t>(std::max(v, 0));
      }
      if (ok) {
        AppendUtf8(out, cp);
        done = true;
      }
    } else {
      for (const NamedEntity& e : kEntities) {
        if (e.name == body) {
          AppendUtf8(out, e.code_point);
          done = true;
          break;
        }
      }
    }
    if (done) {
      i = semi;
    } else {
      out += '&';
    }
  }
  return out;
}

// The value of attribute `name` in the inside of a tag ("a href='x' class=y").
std::string Attribute(std::string_view tag, std::string_view name) {
  std::string lower = text::AsciiLower(tag);
  size_t pos = 0;
  while ((pos = lower.find(name, pos)) != lower.npos) {
    bool word_start = pos > 0 && std::isspace(static_cast<unsigned char>(lower[pos - 1]));
    size_t p = pos + name.size();
    while (p < lower.size() && std::isspace(static_cast<unsigned char>(lower[p]))) ++p;
    if (!word_start || p >= lower.size() || lower[p] != '=') {
      pos += name.size();
      continue;
    }
    ++p;
    while (p < lower.size() && std::isspace(static_cast<unsigned char>(lower[p]))) ++p;
    if (p >= tag.size()) return {};
    if (tag[p] == '"' || tag[p] == '\'') {
      size_t end = tag.find(tag[p], p + 1);
      if (end == tag.npos) end = tag.size();
      return DecodeEntities(tag.substr(p + 1, end - p - 1));
    }
    size_t end = p;
    while (end < tag.size() && !std::isspace(static_cast<unsigned char>(tag[end])) &&
           tag[end] != '>') {
      ++end;
    }
    return DecodeEntities(tag.substr(p, end - p));
  }
  return {};
}

bool IsBlock(std::string_view t) {
  static constexpr std::string_view kBlocks[] = {
      "p",   "div",        "h1",      "h2",         "h3",     "h4",     "h5",
      "h6",  "table",      "tr",      "ul",         "ol",     "dl",     "dt",
      "dd",  "blockquote", "section", "article",    "header", "footer", "hr",
      "pre", "center",     "tbody",   "thead",      "tfoot",  "title",  "address",
      "nav", "main",       "figure",  "figcaption", "form"};
  return std::find(std::begin(kBlocks), std::end(kBlocks), t) != std::end(kBlocks);
}

std::string Trim(std::string_view s) {
  size_t b = s.find_first_not_of(' ');
  if (b == s.npos) return {};
  size_t e = s.find_last_not_of(' ');
  return std::string(s.substr(b, e - b + 1));
}

// Lines trimmed, at most one blank line in a row, none at the start or end.
std::string Tidy(std::string_view raw) {
  std::string out;
  int pending_breaks = 0;
  size_t start = 0;
  while (start <= raw.size()) {
    size_t nl = raw.find('\n', start);
    if (nl == raw.npos) nl = raw.size();
    std::string line = Trim(raw.substr(start, nl - start));
    if (line.empty()) {
      ++pending_breaks;
    } else {
      if (!out.empty()) out += pending_breaks >= 1 ? "\n\n" : "\n";
      out += line;
      pending_breaks = 0;
    }
    start = nl + 1;
  }
  return out;
}

}  // namespace

std::string HtmlToText(std::string_view html) {
  std::string raw;  // whitespace collapsed; '\n' only from structure
  std::string link_href;
  size_t link_start = std::string::npos;
  auto add_text = [&](std::string_view chunk) {
    std::string decoded = DecodeEntities(chunk);
    for (char c : decoded) {
      if (c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f') {
        if (!raw.empty() && raw.back() != ' ' && raw.back() != '\n') raw += ' ';
      } else {
        raw += c;
      }
    }
  };
  size_t i = 0;
  while (i < html.size()) {
    size_t lt = html.find('<', i);
    if (lt == html.npos) {
      add_text(html.substr(i));
      break;
    }
    add_text(html.substr(i, lt - i));
    if (html.compare(lt, 4, "<!--") == 0) {
      size_t end = html.find("-->", lt + 4);
      i = end == html.npos ? html.size() : end + 3;
      continue;
    }
    // A '<' that does not open a tag is text.
    if (lt + 1 >= html.size() || !(std::isalpha(static_cast<unsigned char>(html[lt + 1])) ||
                                   html[lt + 1] == '/' || html[lt + 1] == '!')) {
      add_text("<");
      i = lt + 1;
      continue;
    }
    // The tag's end: the next '>' outside quotes.
    size_t gt = lt + 1;
    char quote = 0;
    for (; gt < html.size(); ++gt) {
      char c = html[gt];
      if (quote) {
        if (c == quote) quote = 0;
      } else if (c == '"' || c == '\'') {
        quote = c;
      } else if (c == '>') {
        break;
      }
    }
    std::string_view inside = html.substr(lt + 1, gt - lt - 1);
    i = gt == html.size() ? gt : gt + 1;
    bool closing = !inside.empty() && inside[0] == '/';
    if (closing) inside.remove_prefix(1);
    size_t name_end = 0;
    while (name_end < inside.size() && std::isalnum(static_cast<unsigned char>(inside[name_end]))) {
      ++name_end;
    }
    std::string name = text::AsciiLower(inside.substr(0, name_end));
    if (!closing && (name == "script" || name == "style" || name == "head")) {
      std::string lower_rest = text::AsciiLower(html.substr(i));
      size_t end = lower_rest.find("</" + name);
      if (end == std::string::npos) break;
      size_t close = lower_rest.find('>', end);
      i += close == std::string::npos ? lower_rest.size() : close + 1;
      continue;
    }
    if (name == "br") {
      raw += '\n';
    } else if (name == "li") {
      if (!closing) raw += "\n- ";
    } else if (name == "td" || name == "th") {
      if (closing && !raw.empty() && raw.back() != ' ' && raw.back() != '\n') raw += ' ';
    } else if (name == "img" && !closing) {
      add_text(Attribute(inside, "alt"));
    } else if (name == "a") {
      if (!closing) {
        link_href = Attribute(inside, "href");
        link_start = raw.size();
      } else if (link_start != std::string::npos) {
        std::string label = Trim(raw.substr(link_start));
        std::string shown = link_href.rfind("mailto:", 0) == 0 ? link_href.substr(7) : link_href;
        bool keep = !link_href.empty() && link_href[0] != '#';
        if (keep && label.empty()) {
          raw += shown;
        } else if (keep && label != shown && label != link_href) {
          if (!raw.empty() && raw.back() != ' ' && raw.back() != '\n') raw += ' ';
          raw += "(" + link_href + ")";
        }
        link_start = std::string::npos;
      }
    } else if (IsBlock(name)) {
      raw += '\n';
      if (name == "p" || name == "table" ||
          (name.size() == 2 && name[0] == 'h' && name[1] != 'r')) {
        raw += '\n';
      }
    }
  }
  return Tidy(raw);
}

}  // namespace crmd::mail
