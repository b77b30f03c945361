#pragma once
// multipart/form-data (RFC 7578) as an import upload sends it (REST, console): each part's name,
// its file name when it has one, and its content, viewed in the request body (which must outlive
// them). Only what a browser's or curl's form post carries: a boundary parameter, parts
// delimited by CRLF "--" boundary, a Content-Disposition of form-data per part.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace crmd::http {

struct FormPart {
  std::string name;
  std::optional<std::string> filename;
  std::string_view content;
};

// The boundary of a "multipart/form-data; boundary=..." Content-Type; nullopt for any other.
std::optional<std::string> MultipartBoundary(std::string_view content_type);
// The parts of `body`; nullopt when it is not well-formed (no closing boundary, a part
// without Content-Disposition form-data and a name).
std::optional<std::vector<FormPart>> ParseMultipartForm(std::string_view body,
                                                        std::string_view boundary);

}  // namespace crmd::http
