#include "src/app/people_audit.h"

namespace crmd::app {

auth::PersonAudit AuditPeopleChanges(governance::AuditLog& audit) {
  return [&audit](store::Conn& c, const auth::PersonChanger& by,
                  const auth::PersonChange& change) -> Status {
    return audit.Record(c, governance::Actor{.kind = by.kind, .subject = by.subject},
                        governance::AuditEntry{.action = change.action,
                                               .target_type = "user",
                                               .target_ids = {change.user_id},
                                               .details = change.details});
  };
}

std::string PersonLabel(auth::Users& users, const std::string& actor_kind,
                        const std::string& subject) {
  if (actor_kind != "oauth" && actor_kind != "user") return "";
  if (subject.empty() || subject.size() > 18 ||
      subject.find_first_not_of("0123456789") != std::string::npos)
    return "";
  auto user = users.FindById(std::stoll(subject));
  if (!user || !*user) return "";
  if ((*user)->deleted_at) return "deleted user #" + subject;
  return (*user)->email;
}

}  // namespace crmd::app
