#pragma once
// The console's Contacts page: importing a CSV file and exporting the contact book
// (docs/crm.md "Import", "Exports"; shell.h's rules):
//   GET  /console/contacts                 the import form (editors and administrators)
//                                          and the export form with its filters (status,
//                                          type, tag, list; administrators, who download
//                                          /console/contacts.csv, overview_pages.h)
//   POST /console/contacts/import          multipart/form-data: the file (part "file"),
//                                          the import's options (list, tag, status,
//                                          consent, existing, events, dry_run, delimiter,
//                                          map) and the CSRF token; action=preview shows
//                                          the first rows as they will be mapped (nothing
//                                          kept; the file is chosen again to import),
//                                          action=import queues the import (crmd's import
//                                          loop runs it) and sends the browser to its page;
//                                          form-encoded action=cancel (id) cancels one
//   GET  /console/contacts/import?id=N     the import's progress (a progress bar and the
//                                          counts; the page reloads itself every 2 s while
//                                          it is queued or running) and, once rows were not
//                                          applied, the link to its error file
//   GET  /console/contacts/import-errors?id=N  the rows not applied, as CSV
// The import pages are for editors and administrators; a viewer sees the page without
// the forms. The upload is bounded by the listener's max_body_bytes (413 above it).
// It calls crm::ImportService, as REST /imports and crmctl contacts import do.
// Thread-safe; handlers block on the database (worker pool).
#include "src/console/shell.h"
#include "src/crm/imports.h"

namespace crmd::console {

struct ContactsPagesDeps {
  crm::ImportService* imports = nullptr;
  bool can_export = false;  // /console/contacts.csv is served (overview_pages.h)
  ConsolePeople people;
};

ConsoleRoutes ContactsRoutes(ContactsPagesDeps deps);

}  // namespace crmd::console
