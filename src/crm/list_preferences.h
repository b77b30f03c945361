#pragma once
// A contact's own choice of lists: the preference page behind every message's unsubscribe
// link (src/console/links.cc, docs/mail.md).
//
// A membership (contact_lists, migration 0072) has a state: 'subscribed' (a member),
// 'unsubscribed' (left the list on the preference page) or 'pending' (asked to join again
// through a form with double opt-in, not confirmed yet). Only 'subscribed' rows are members.
// The row of a list left stays, so that imports, forms and tools adding the contact to the
// list skip it (contacts_repo::AddMembership inserts nothing over an existing row); the
// contact joins again only here, or by confirming a form's double opt-in.
//
// Every change emits contact.list_removed / contact.list_added and is audited, in the same
// transaction. Thread-safe; the object holds no state of its own.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "src/core/clock.h"
#include "src/core/result.h"
#include "src/crm/contacts.h"
#include "src/crm/outbox.h"
#include "src/governance/actor.h"
#include "src/governance/audit.h"
#include "src/governance/settings.h"
#include "src/store/db.h"

namespace crmd::crm {

// One list of the page: a public list (lists.public) the contact has a membership row in.
struct ListPreference {
  int64_t list_id = 0;
  std::string name;
  std::string description;
  bool subscribed = false;  // state 'subscribed'
};

struct ListPreferenceChoice {
  int64_t list_id = 0;
  bool subscribed = false;
};

struct ListPreferencesOptions {
  store::Database* db = nullptr;
  Clock* clock = nullptr;
  Outbox* outbox = nullptr;
  governance::AuditLog* audit = nullptr;
  governance::SettingsService* settings = nullptr;  // double_opt_in; null: off
};

class ListPreferences {
 public:
  explicit ListPreferences(ListPreferencesOptions o) : o_(o) {}
  ListPreferences(const ListPreferences&) = delete;
  ListPreferences& operator=(const ListPreferences&) = delete;

  // The page's lists, by name. kNotFound when the contact does not exist.
  Result<std::vector<ListPreference>> Get(int64_t contact_id);

  // Applies the choices for the page's lists in one transaction: a list switched off is
  // left (state 'unsubscribed'), one switched on is joined again. Choices for lists that
  // are not on the contact's page (not public, or no membership row) are ignored, so a
  // forged form cannot join a list. Answers the lists that changed.
  Result<std::vector<NamedRef>> Set(const governance::Actor& actor, int64_t contact_id,
                                    const std::vector<ListPreferenceChoice>& choices);

  // A form submission by an existing contact for `list_ids`: with double opt-in on, the
  // lists it had left and those it is not on become 'pending' (still not members) and a
  // confirmation email is queued; the confirmation (ConfirmPending) joins them. Without
  // double opt-in nothing changes: a left list stays left. Answers whether any list became
  // pending. For use inside the form's transaction.
  Result<bool> RejoinByFormIn(store::Conn& c, int64_t contact_id,
                              const std::vector<int64_t>& list_ids);

  // The contact confirmed (double opt-in link): its 'pending' rows become members again.
  Result<std::vector<NamedRef>> ConfirmPending(const governance::Actor& actor, int64_t contact_id);

 private:
  Result<std::vector<NamedRef>> ConfirmPendingIn(store::Conn& c, const governance::Actor& actor,
                                                 int64_t contact_id);
  // Sets one row's state to `to` where it is `from` (any other state when `from` is null);
  // emits the event and answers whether the row changed.
  Result<bool> MoveIn(store::Conn& c, const Contact& k, const NamedRef& list, const char* to,
                      const char* from);

  const ListPreferencesOptions o_;
};

}  // namespace crmd::crm
