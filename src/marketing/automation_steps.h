#pragma once
// The automation trigger types and the step catalogue, and their validation. A step is a
// JSON object {"type": ..., params}; the catalogue says which params each type takes:
//   wait          {seconds | days}          1 second .. 365 days
//   add_tag       {tag_id}      remove_tag  {tag_id}
//   add_list      {list_id}     remove_list {list_id}
//   set_status    {status}                  a contact status
//   send_email    {subject, html_body | text_body, from_name?, from_email?, template_id?}
//   call_webhook  {url}                     http(s) URL
// Triggers: contact_created, tag_added/tag_removed {tag_id}, list_added/list_removed
// {list_id}, status_changed {status}, form_submitted {form_id?}.
// Stateless and thread-safe.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "src/core/result.h"
#include "src/store/db.h"

namespace crmd::marketing {

inline constexpr size_t kMaxAutomationSteps = 50;

// Contact statuses a step or trigger may name (the contacts module's kStatuses).
const std::vector<std::string>& ContactStatuses();

const std::vector<std::string>& TriggerTypes();
const std::vector<std::string>& StepTypes();

// A list or tag an automation references, for the usage index (automation_refs).
struct AutomationRef {
  std::string kind;  // "list" | "tag"
  int64_t id = 0;
  std::string role;  // "trigger" | "step"
  bool operator==(const AutomationRef&) const = default;
};

// Checks shape and values (no database). Errors name the field, e.g. "steps[2].tag_id".
// Returns the trigger normalised to {"type", params...} without unknown keys.
Result<nlohmann::json> ValidateTrigger(const nlohmann::json& trigger);
Result<nlohmann::json> ValidateSteps(const nlohmann::json& steps);

// Lists and tags named by a validated trigger and steps.
std::vector<AutomationRef> CollectRefs(const nlohmann::json& trigger, const nlohmann::json& steps);

// Every referenced list and tag must exist (and form, when the forms table exists).
Status CheckRefsExist(store::Conn& c, const std::vector<AutomationRef>& refs,
                      const nlohmann::json& trigger);

}  // namespace crmd::marketing
