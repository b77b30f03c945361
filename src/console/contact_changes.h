#pragma once
// The changes a contact's console page makes (contact_pages.h), through the contact
// book's own rules (crm::ContactService: the status machine, memberships), as the
// set_contact_status, add_contact_tags, remove_contact_tags, add_contact_to_lists and
// remove_contact_from_lists tools do, with the signed-in person as the audit rows' actor:
//   POST /console/contacts/<id>  action=status (status, consent, reason, revision)
//                                | add_list (list: name or id) | remove_list (list: id)
//                                | add_tag (tag: name or id) | remove_tag (tag: id)
// Answers 303 to the contact's page, or the refusal as a page (400 bad input, 404 an
// unknown list or tag, 409 a transition the status machine does not allow or a stale
// revision). Thread-safe; blocks on the database.
#include <cstdint>
#include <string>

#include "src/console/shell.h"
#include "src/crm/contacts.h"

namespace crmd::console {

http::Response PostContactChange(crm::ContactService& contacts, const ConsolePeople& people,
                                 const Person& p, int64_t id, const http::Request& req);

// A list or tag typed as an id ("12") or a name.
crm::Ref GroupRef(const std::string& typed);

}  // namespace crmd::console
