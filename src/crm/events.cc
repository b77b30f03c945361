#include "src/crm/events.h"

namespace crmd::crm::events {

bool IsKnown(std::string_view name) { return !DisplayName(name).empty(); }

bool IsEmail(std::string_view name) {
  for (const auto& e : kEmail)
    if (e.name == name) return true;
  return false;
}

std::string_view DisplayName(std::string_view name) {
  for (const auto& e : kAll)
    if (e.name == name) return e.display_name;
  for (const auto& e : kEmail)
    if (e.name == name) return e.display_name;
  return {};
}

}  // namespace crmd::crm::events
