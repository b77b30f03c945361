#pragma once
// The 8 contact event types (the product's webhook triggers) and their display names, and
// the opt-in email outcome events (docs/webhooks.md): an endpoint gets an email event only
// when it lists it; "all" and the console's defaults stay the 8 contact events.
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

// What became of an email crmd sent (campaign, sequence or automation step): appended
// where the outcome is recorded, in its transaction (src/marketing/email_events.h).
inline constexpr std::string_view kEmailSent = "email.sent";
inline constexpr std::string_view kEmailBounced = "email.bounced";
inline constexpr std::string_view kEmailComplained = "email.complained";
inline constexpr std::string_view kEmailOpened = "email.opened";
inline constexpr std::string_view kEmailClicked = "email.clicked";
inline constexpr std::string_view kEmailUnsubscribed = "email.unsubscribed";
inline constexpr EventType kEmail[] = {
    {kEmailSent, "Email Sent"},
    {kEmailBounced, "Email Bounced"},
    {kEmailComplained, "Email Complained"},
    {kEmailOpened, "Email Opened"},
    {kEmailClicked, "Email Clicked"},
    {kEmailUnsubscribed, "Email Unsubscribed"},
};

// A contact event or an email event.
bool IsKnown(std::string_view name);
bool IsEmail(std::string_view name);
// "" when unknown.
std::string_view DisplayName(std::string_view name);

}  // namespace crmd::crm::events
