#include "src/core/multipart.h"

#include <cctype>

namespace crmd::http {
namespace {

std::string LowerAsciiCopy(std::string_view s) {
  std::string out(s);
  for (char& ch : out) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return out;
}

// The value of parameter `key` in a header value ("form-data; name=\"file\"; ...").
std::optional<std::string> HeaderParam(std::string_view value, std::string_view key) {
  std::string lower = LowerAsciiCopy(value);
  for (size_t at = lower.find(';'); at != std::string::npos; at = lower.find(';', at + 1)) {
    size_t p = at + 1;
    while (p < lower.size() && lower[p] == ' ') ++p;
    if (lower.compare(p, key.size(), key) != 0 || p + key.size() >= lower.size() ||
        lower[p + key.size()] != '=')
      continue;
    p += key.size() + 1;
    if (p < value.size() && value[p] == '"') {
      size_t end = value.find('"', p + 1);
      if (end == std::string_view::npos) return std::nullopt;
      return std::string(value.substr(p + 1, end - p - 1));
    }
    size_t end = value.find(';', p);
    return std::string(value.substr(p, end == std::string_view::npos ? end : end - p));
  }
  return std::nullopt;
}

// Reads one part's header section; false when malformed.
bool ReadPartHeaders(std::string_view headers, FormPart* part) {
  bool disposition = false;
  size_t start = 0;
  while (start < headers.size()) {
    size_t end = headers.find("\r\n", start);
    std::string_view line =
        headers.substr(start, end == std::string_view::npos ? end : end - start);
    start = end == std::string_view::npos ? headers.size() : end + 2;
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    if (LowerAsciiCopy(line.substr(0, colon)) != "content-disposition") continue;
    std::string_view value = line.substr(colon + 1);
    while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    if (LowerAsciiCopy(value.substr(0, 9)) != "form-data") return false;
    auto name = HeaderParam(value, "name");
    if (!name) return false;
    part->name = *name;
    part->filename = HeaderParam(value, "filename");
    disposition = true;
  }
  return disposition;
}

}  // namespace

std::optional<std::string> MultipartBoundary(std::string_view content_type) {
  std::string_view media = content_type.substr(0, content_type.find(';'));
  while (!media.empty() && media.back() == ' ') media.remove_suffix(1);
  if (LowerAsciiCopy(media) != "multipart/form-data") return std::nullopt;
  auto b = HeaderParam(content_type, "boundary");
  if (!b || b->empty() || b->size() > 70) return std::nullopt;
  return b;
}

std::optional<std::vector<FormPart>> ParseMultipartForm(std::string_view body,
                                                        std::string_view boundary) {
  const std::string delimiter = "--" + std::string(boundary);
  std::vector<FormPart> parts;
  size_t at = body.find(delimiter);
  if (at == std::string_view::npos) return std::nullopt;
  for (;;) {
    at += delimiter.size();
    if (body.substr(at, 2) == "--") return parts;  // the closing boundary
    if (body.substr(at, 2) != "\r\n") return std::nullopt;
    at += 2;
    size_t head_end = body.find("\r\n\r\n", at);
    if (head_end == std::string_view::npos) return std::nullopt;
    FormPart part;
    if (!ReadPartHeaders(body.substr(at, head_end - at + 2), &part)) return std::nullopt;
    size_t content = head_end + 4;
    // The next delimiter line: CRLF, "--" boundary, then CRLF or the closing "--" (text
    // that merely starts like one is content).
    size_t next = content;
    for (;; ++next) {
      next = body.find("\r\n" + delimiter, next);
      if (next == std::string_view::npos) return std::nullopt;
      std::string_view after = body.substr(next + 2 + delimiter.size(), 2);
      if (after == "\r\n" || after == "--") break;
    }
    part.content = body.substr(content, next - content);
    parts.push_back(std::move(part));
    at = next + 2;
  }
}

}  // namespace crmd::http
