#pragma once
// The console's email Templates (editors; viewers read):
//   GET  /console/templates                 the templates, and a form to make one
//   POST /console/templates                 action=create (name, html, text) | delete (id;
//                                           refused, 409, naming the users while in use)
//   GET  /console/templates/edit?id=N[&contact=EMAIL]
//                                           the editor (name, html, text, the revision read)
//                                           beside a preview of the saved template for a
//                                           real contact (the first one, or EMAIL's)
//   POST /console/templates/edit            action=save: saves at the revision read (a stale
//                                           one is 409 with what was typed kept)
//   GET  /console/templates/preview?id=N[&contact=EMAIL]
//   POST /console/templates/preview         the message as that contact would get it, a
//                                           sample body in the {{content}} slot: the saved
//                                           template (GET) or what is typed in the editor
//                                           (POST, the editor's Preview button, which the
//                                           console's script presses after a pause in typing)
// The preview is the message's own HTML, shown in a sandboxed frame (no scripts, no forms,
// nothing fetched but images over https) with a policy of its own; the editor's page keeps
// the console's policy and adds only frame-src 'self'. Every POST carries the session's
// CSRF token (shell.h). Thread-safe; handlers block on the database (worker pool).
#include "src/console/shell.h"
#include "src/crm/contacts.h"
#include "src/governance/settings.h"
#include "src/marketing/campaign_render.h"
#include "src/marketing/templates.h"

namespace crmd::console {

struct TemplatesPagesDeps {
  marketing::TemplateService* templates = nullptr;
  crm::ContactService* contacts = nullptr;          // the preview's contact
  governance::SettingsService* settings = nullptr;  // sender and company_address
  const marketing::MailContext* mail = nullptr;     // links of the preview (for nobody)
  ConsolePeople people;
};

ConsoleRoutes TemplatesRoutes(TemplatesPagesDeps deps);

}  // namespace crmd::console
