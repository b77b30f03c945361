#pragma once
// Files under schemas/ embedded into the binary at build time (cmake/EmbedGen.cmake).
#include <optional>
#include <span>
#include <string_view>

namespace crmd::embedded {

struct File {
  std::string_view path;  // relative to schemas/, e.g. "tools/get_contact.json"
  std::string_view data;
};

std::span<const File> All();
std::optional<std::string_view> Find(std::string_view path);

}  // namespace crmd::embedded
