#pragma once
// The 8 contact event types (the product's webhook triggers) and their display names.
#include <string_view>

namespace crmd::crm::events {

inline constexpr std::string_view kContactCreated = "contact.created";    // New Contact
inline constexpr std::string_view kContactUpdated = "contact.updated";    // Update Contact
inline constexpr std::string_view kContactDeleted = "contact.deleted";    // Delete Contact
inline constexpr std::string_view kTagAdded = "contact.tag_added";        // Add Tag
inline constexpr std::string_view kTagRemoved = "contact.tag_removed";    // Remove Tag
inline constexpr std::string_view kListAdded = "contact.list_added";      // Add List
inline constexpr std::string_view kListRemoved = "contact.list_removed";  // Remove List
inline constexpr std::string_view kStatusUpdated =
    "contact.status_updated";  // Update Contact Status

struct EventType {
  std::string_view name;
  std::string_view display_name;
};
inline constexpr EventType kAll[] = {
    {kContactCreated, "New Contact"},    {kContactUpdated, "Update Contact"},
    {kContactDeleted, "Delete Contact"}, {kTagAdded, "Add Tag"},
    {kTagRemoved, "Remove Tag"},         {kListAdded, "Add List"},
    {kListRemoved, "Remove List"},       {kStatusUpdated, "Update Contact Status"},
};

bool IsKnown(std::string_view name);
// "" when unknown.
std::string_view DisplayName(std::string_view name);

}  // namespace crmd::crm::events
