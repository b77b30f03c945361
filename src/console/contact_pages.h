#pragma once
// The console's contact pages (administrators only, shell.h's rules: a person's data is
// everyone's business only for those who run the site):
//   GET /console/contacts[?q=PREFIX][&cursor=C]
//                                  find a contact by the start of an address or a name
//                                  (list_contacts' query filter), 50 a page; an exact
//                                  address that a contact has opens that contact's page
//   GET /console/contacts/<id>[?cursor=C]
//                                  the contact: profile, custom fields, lists with their
//                                  membership states, tags, suppression, consent, and the
//                                  timeline (marketing::ContactHistory), 50 entries a page,
//                                  most recent first; a link to the export as JSON
//   GET /console/contacts/<id>/export.json
//                                  the export document (docs/crm.md) as a download
// Audit rows about a contact link here. Read-only; nothing on these pages changes data.
// Thread-safe; handlers block on the database (worker pool).
#include "src/console/shell.h"
#include "src/crm/contacts.h"
#include "src/marketing/contact_history.h"

namespace crmd::console {

struct ContactPagesDeps {
  crm::ContactService* contacts = nullptr;
  marketing::ContactHistory* history = nullptr;
  ConsolePeople people;
};

ConsoleRoutes ContactRoutes(ContactPagesDeps deps);

}  // namespace crmd::console
