#pragma once
// The console's Suppressions page (administrators only, shell.h's rules):
//   GET  /console/suppressions[?email=A][&reason=R][&cursor=C]
//                                   the list, 100 a page, newest last (an address is shown
//                                   only while a live contact holds it: entries keep a
//                                   keyed hash), or the entry that applies to one address;
//                                   the form to add an address or a domain
//   POST /console/suppressions      action=add (value, reason) | remove (id), both audited
//                                   with the signed-in person as the actor
// It calls crm::SuppressionList, as REST /suppressions and crmctl suppression do.
// Thread-safe; handlers block on the database (worker pool).
#include "src/console/shell.h"
#include "src/crm/suppression.h"

namespace crmd::console {

struct SuppressionsPagesDeps {
  crm::SuppressionList* suppressions = nullptr;
  ConsolePeople people;
};

ConsoleRoutes SuppressionsRoutes(SuppressionsPagesDeps deps);

}  // namespace crmd::console
