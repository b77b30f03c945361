// ContactService and the suppression list (docs/crm.md "Suppression list"): the gate on
// every write that would make a suppressed address subscribed, the entries a status makes,
// and the double opt-in confirmation that lifts one.
#include "src/crm/contact_records_repo.h"
#include "src/crm/contacts.h"
#include "src/crm/contacts_repo.h"

namespace crmd::crm {

Result<std::optional<Suppression>> ContactService::SuppressedIn(store::Conn& conn,
                                                                std::string_view normalized_email) {
  if (!o_.suppressions) return std::optional<Suppression>{};
  return o_.suppressions->CheckIn(conn, normalized_email);
}

Result<std::unordered_set<std::string>> ContactService::SuppressedAmongIn(
    store::Conn& conn, const std::vector<std::string>& normalized_emails) {
  if (!o_.suppressions) return std::unordered_set<std::string>{};
  return o_.suppressions->SuppressedAmongIn(conn, normalized_emails);
}

Result<std::optional<Suppression>> ContactService::GateSubscribed(store::Conn& c,
                                                                  const ContactInput& in,
                                                                  Contact& k,
                                                                  const std::string& held,
                                                                  bool* confirm_by_email) {
  auto hit = SuppressedIn(c, k.email);
  if (!hit) return Fail(hit.error());
  const bool mails = k.status == "subscribed" || (confirm_by_email && *confirm_by_email);
  if (!*hit || !mails) return hit;
  // The person's own signup goes to their confirmation, which alone lifts an address's
  // entry; a domain's entry only an administrator lifts.
  if (in.signup && !(*hit)->is_domain()) {
    if (k.status == "subscribed") k.status = held;
    if (confirm_by_email) *confirm_by_email = k.status == "pending";
    return hit;
  }
  return Fail(SuppressedError(**hit));
}

Status ContactService::SuppressForStatusIn(store::Conn& c, const governance::Actor& actor,
                                           const Contact& k, const std::string& why) {
  std::string_view reason = SuppressionReasonFor(k.status);
  if (!o_.suppressions || reason.empty()) return Ok();
  std::string source = actor.kind;
  if (!actor.subject.empty()) source += ":" + actor.subject;
  if (!why.empty()) source += ": " + why;
  return o_.suppressions->EnterIn(c, k.email, reason, source, k.id);
}

Status ContactService::SuppressAddressIn(store::Conn& c, std::string_view normalized_email,
                                         std::string_view reason, std::string_view source) {
  if (!o_.suppressions) return Ok();
  return o_.suppressions->EnterIn(c, normalized_email, reason, source, std::nullopt);
}

Result<Contact> ContactService::ConfirmOptIn(int64_t id, const std::string& request_id,
                                             const ConsentOrigin& origin) {
  const governance::Actor actor{
      .kind = "system", .subject = "double_opt_in", .request_id = request_id};
  return o_.db->Write([&](store::Conn& c) -> Result<Contact> {
    auto k = contacts_repo::FindContact(c, id);
    if (!k) return Fail(k.error());
    if (!*k) return Fail(Error::NotFound("contact " + std::to_string(id) + " not found"));
    if ((*k)->status == "subscribed") return GetIn(c, id);
    if ((*k)->status != "pending")
      return Fail(Errc::kInvalidTransition,
                  "only a pending contact confirms a subscription; this one is " + (*k)->status);
    if (o_.suppressions)
      if (auto st = o_.suppressions->LiftIn(c, actor, (*k)->email, id); !st)
        return Fail(st.error());
    if (auto st = contact_records_repo::AddConsentRecord(c, id, "optin_confirmation", std::nullopt,
                                                         origin.ip_address, origin.user_agent,
                                                         o_.clock->NowUnix());
        !st)
      return Fail(st.error());
    return SetStatusIn(c, actor, id, "subscribed", true, "double opt-in confirmed");
  });
}

}  // namespace crmd::crm
