#pragma once
// The console's people page (administrators only, shell.h's rules):
//   GET  /console/people   every person (email, role, status, created) with their actions,
//                          and the form that adds a person
//   POST /console/people   action=create (email, password, role);
//                          action=role (id, role) | disable (id) | enable (id) | delete (id)
// A change that ends access (disable, delete, a role that no longer covers a grant) answers
// a page naming the assistants that must sign in again. An administrator cannot change
// their own role, disable or delete themselves here (another administrator or crmctl
// can), and the last active administrator cannot be demoted, disabled or deleted at all.
// Each change is an audit row by the administrator (auth/users.h).
//
// The console knows nothing of auth: the composition root passes the people's store as
// functions (PeopleSource). Thread-safe; handlers block on the database (worker pool).
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "src/console/shell.h"
#include "src/core/result.h"

namespace crmd::console {

struct PersonRow {
  int64_t id = 0;
  std::string email;
  std::string role;  // viewer | editor | administrator
  bool disabled = false;
  int64_t created_at = 0;
};

struct PeopleSource {
  std::function<Result<std::vector<PersonRow>>()> list;
  // kInvalidArgument (email, password, role) or kAlreadyExists: shown on the form.
  std::function<Result<PersonRow>(const Person& by, const std::string& email,
                                  const std::string& password, const std::string& role)>
      create;
  // action: role (value: the role's name) | disable | enable | delete, on the person `id`.
  // Answers the names of the assistants whose access ended. kNotFound for an unknown id,
  // kInvalidTransition for the last administrator, kInvalidArgument for a bad role.
  std::function<Result<std::vector<std::string>>(
      const Person& by, int64_t id, const std::string& action, const std::string& value)>
      change;
};

struct PeoplePagesDeps {
  PeopleSource people_source;
  ConsolePeople people;
};

ConsoleRoutes PeopleRoutes(PeoplePagesDeps deps);

}  // namespace crmd::console
