#include "src/console/contact_changes.h"

#include <charconv>

#include "src/console/confirm_flow.h"

namespace crmd::console {

namespace {

using ConsoleMembershipFn = Result<std::vector<crm::MembershipChange>> (crm::ContactService::*)(
    const governance::Actor&, const std::vector<int64_t>&, const std::vector<crm::Ref>&);

struct ConsoleMembershipAction {
  const char* action;
  const char* field;
  ConsoleMembershipFn fn;
  const char* done;
};

constexpr ConsoleMembershipAction kMembershipActions[] = {
    {"add_list", "list", &crm::ContactService::AddToLists, "list_added"},
    {"remove_list", "list", &crm::ContactService::RemoveFromLists, "list_removed"},
    {"add_tag", "tag", &crm::ContactService::AddTags, "tag_added"},
    {"remove_tag", "tag", &crm::ContactService::RemoveTags, "tag_removed"},
};

std::string ContactPagePath(int64_t id) { return "/console/contacts/" + std::to_string(id); }

}  // namespace

crm::Ref GroupRef(const std::string& typed) {
  int64_t id = 0;
  auto [end, ec] = std::from_chars(typed.data(), typed.data() + typed.size(), id);
  if (ec == std::errc() && end == typed.data() + typed.size() && id > 0) return id;
  return typed;
}

http::Response PostContactChange(crm::ContactService& contacts, const ConsolePeople& people,
                                 const Person& p, int64_t id, const http::Request& req) {
  auto in = http::ParseForm(req.body);
  if (auto refused = RefuseForgedPost(people, req, p, in)) return *refused;
  const PageChrome chrome = ChromeFor(p, "contacts");
  const governance::Actor actor = ConsoleActor(p, req);
  const std::string action = FieldValue(in, "action");
  if (action == "status") {
    auto revision = IdField(in, "revision");
    auto changed =
        contacts.SetStatus(actor, id, FieldValue(in, "status"), FieldValue(in, "consent") == "yes",
                           revision, FieldValue(in, "reason"));
    if (!changed) return ServiceErrorPage(changed.error(), chrome, ContactPagePath(id));
    return SeeOther(ContactPagePath(id) + "?done=status");
  }
  for (const ConsoleMembershipAction& m : kMembershipActions) {
    if (action != m.action) continue;
    const std::string typed = FieldValue(in, m.field);
    if (typed.empty())
      return MessagePage(400, "Bad request", std::string("Name the ") + m.field + ".", chrome,
                         ContactPagePath(id), "Back to the contact");
    auto changed = (contacts.*m.fn)(actor, {id}, {GroupRef(typed)});
    if (!changed) return ServiceErrorPage(changed.error(), chrome, ContactPagePath(id));
    return SeeOther(ContactPagePath(id) + "?done=" + m.done);
  }
  return MessagePage(400, "Bad request", "Use the buttons on the contact's page.", chrome,
                     ContactPagePath(id), "Back to the contact");
}

}  // namespace crmd::console
