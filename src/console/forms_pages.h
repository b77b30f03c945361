#pragma once
// The console's Forms (administrators only, shell.h's rules):
//   GET  /console/forms            forms with their generated-contact counts, and the
//                                  builder: up to 8 fields of the 11 types (label, name,
//                                  required, options), what a submission applies (status,
//                                  type, tags, lists), display rules (JSON), allowed
//                                  origins, honeypot, API key required
//   POST /console/forms            action=create (the builder's fields) | delete (id)
//   GET  /console/forms/view?id=N  the definition and its embed code: an HTML form and a
//                                  small script that posts {"fields": ...} as JSON to the
//                                  public POST <rest base>/form/submit/<public id>
// The definition is checked by crm::FormService, as for crmctl form and REST /admin/forms.
// Thread-safe; handlers block on the database (worker pool).
#include <string>

#include "src/console/shell.h"
#include "src/crm/forms.h"

namespace crmd::console {

struct FormsPagesDeps {
  crm::FormService* forms = nullptr;
  ConsolePeople people;
  std::string rest_base_url;  // absolute, e.g. http://127.0.0.1:8080/api/crm/v1
};

ConsoleRoutes FormsRoutes(FormsPagesDeps deps);

// The embed code of a form (exposed for tests): every value HTML-escaped.
std::string EmbedCode(const crm::Form& form, const std::string& submit_url);

}  // namespace crmd::console
