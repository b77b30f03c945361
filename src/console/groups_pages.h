#pragma once
// The console's Lists and Tags (everyone signed in reads; editors and administrators
// change), one handler for both kinds (crm::GroupService):
//   GET  /console/lists, /console/tags   each list or tag with its description, member
//                                        count (and for lists whether members see it on
//                                        the preference page), 100 a page by name; a form
//                                        for a new one; Rename; Delete…
//   POST the same                        action=create (name, description, public) |
//                                        rename (id, revision, name, description) |
//                                        delete (id): the delete_list / delete_tag
//                                        preview with the campaigns and automations that
//                                        use it (those it would break block it) and a
//                                        Confirm button | confirm (confirmation_token,
//                                        approval_id): as for an assistant (confirm_flow.h)
// Every POST carries the session's CSRF token (shell.h). Thread-safe; handlers block on
// the database (worker pool).
#include "src/console/shell.h"
#include "src/crm/lists.h"
#include "src/governance/confirmations.h"

namespace crmd::console {

struct GroupsPagesDeps {
  crm::GroupService* lists = nullptr;
  crm::GroupService* tags = nullptr;
  governance::ConfirmationService* confirmations = nullptr;
  ConsolePeople people;
};

ConsoleRoutes GroupsRoutes(GroupsPagesDeps deps);

}  // namespace crmd::console
