// FormService's submissions: CheckSubmission and Submit (definitions are in forms.cc).
#include <spdlog/spdlog.h>

#include <algorithm>

#include "src/core/log.h"
#include "src/crm/contact_records_repo.h"
#include "src/crm/contact_status.h"
#include "src/crm/contacts.h"
#include "src/crm/contacts_repo.h"
#include "src/crm/forms.h"
#include "src/crm/forms_detail.h"
#include "src/crm/forms_repo.h"
#include "src/crm/groups_repo.h"
#include "src/crm/list_preferences.h"

namespace crmd::crm {

using form_detail::FieldPath;
using form_detail::FirstError;
using form_detail::In;
using nlohmann::json;

std::vector<FormError> FormService::CheckSubmission(const Form& form, const json& fields) const {
  std::vector<FormError> errors;
  if (!fields.is_object()) return {{"fields", "invalid_type", "must be an object of field values"}};
  for (const auto& [name, value] : fields.items()) {
    if (form.IsHoneypot(name)) continue;
    const FormField* f = nullptr;
    bool display = false;
    for (const auto& x : form.fields)
      if (x.name == name) {
        if (x.input())
          f = &x;
        else
          display = true;
      }
    if (!f) {
      errors.push_back(
          {FieldPath(name), display ? "display_only" : "unknown_field",
           display ? "is a display field and takes no value" : "is not a field of this form"});
      continue;
    }
    if (value.is_null()) continue;  // same as absent; "required" is checked below
    const std::string& t = f->type;
    if (t == "Input" || t == "Textarea" || t == "Email") {
      if (!value.is_string())
        errors.push_back({FieldPath(name), "invalid_type", "must be a string"});
      else if (value.get_ref<const std::string&>().size() > kMaxFormValueBytes)
        errors.push_back({FieldPath(name), "too_long", "at most 10000 bytes"});
    } else if (t == "Dropdown" || t == "Radio") {
      if (!value.is_string() || !In(value.get<std::string>(), f->options))
        errors.push_back({FieldPath(name), "invalid_option", "must be one of the field's options"});
    } else if (t == "Checkbox" && f->options.empty()) {
      if (!value.is_boolean())
        errors.push_back({FieldPath(name), "invalid_type", "must be true or false"});
    } else {  // List, or Checkbox with options: a subset of the options
      bool ok = value.is_array();
      if (ok)
        for (const auto& v : value)
          ok = ok && v.is_string() && In(v.get<std::string>(), f->options);
      if (!ok)
        errors.push_back(
            {FieldPath(name), "invalid_option", "must be an array of the field's options"});
    }
  }
  for (const auto& f : form.fields) {
    if (!f.input() || !f.required) continue;
    auto it = fields.find(f.name);
    bool missing = it == fields.end() || it->is_null() ||
                   (it->is_string() && it->get_ref<const std::string&>().empty()) ||
                   (it->is_array() && it->empty()) || (f.type == "Checkbox" && *it == false);
    if (missing) errors.push_back({FieldPath(f.name), "required", "is required"});
  }
  return errors;
}

namespace {

bool IsContactColumn(const std::string& name) {
  return name == "first_name" || name == "last_name" || name == "phone";
}

// What a submission without an API key may do to a contact that already exists: fill its
// empty name and phone and add custom fields it does not have. Everything else (a changed
// name or field, type, status, tags, lists) is the contact's own to change, not an
// anonymous visitor's, and is left out.
ContactInput StrangerFill(const ContactInput& in, const Contact& existing) {
  ContactInput out;
  out.email = in.email;
  auto fill = [](const std::optional<std::string>& v, const std::string& have) {
    return v && have.empty() && !v->empty() ? v : std::nullopt;
  };
  out.first_name = fill(in.first_name, existing.first_name);
  out.last_name = fill(in.last_name, existing.last_name);
  out.phone = fill(in.phone, existing.phone);
  if (in.custom_fields) {
    nlohmann::json add = nlohmann::json::object();
    for (const auto& [k, v] : in.custom_fields->items()) {
      auto have = existing.custom_fields.find(k);
      bool empty = have == existing.custom_fields.end() || have->is_null() ||
                   (have->is_string() && have->get_ref<const std::string&>().empty());
      if (empty && !v.is_null()) add[k] = v;
    }
    if (!add.empty()) out.custom_fields = std::move(add);
  }
  return out;
}

// A list the contact left stays left (UpsertIn added nothing for it), and a stranger's
// submission adds no list to an existing contact; with double opt-in the contact may
// confirm its way onto them (list_preferences.h).
Status AskToRejoinLeftListsIn(store::Conn& c, ListPreferences& preferences, int64_t contact_id,
                              const std::vector<Ref>& lists) {
  std::vector<int64_t> ids;
  for (const auto& l : lists) {
    auto row = groups_repo::FindRefByName(c, GroupKind::kList, std::get<std::string>(l));
    if (!row) return Fail(row.error());
    if (*row) ids.push_back((*row)->id);
  }
  if (auto p = preferences.RejoinByFormIn(c, contact_id, ids); !p) return Fail(p.error());
  return Ok();
}

// The contact a checked submission describes: its Email, name and phone fields, custom
// fields, the form's lists with the List choices added, and what the form applies.
// `email_field`: the name of the form's Email field.
ContactInput SubmissionInput(const Form& form, const json& fields, std::string* email_field) {
  ContactInput in;
  in.custom_fields = json::object();
  std::vector<Ref> lists(form.applies.lists.begin(), form.applies.lists.end());
  for (const auto& f : form.fields) {
    if (!f.input()) continue;
    auto it = fields.find(f.name);
    if (f.type == "Email") *email_field = f.name;
    if (it == fields.end() || it->is_null()) continue;
    if (f.type == "Email") {
      in.email = it->get<std::string>();
    } else if (f.type == "List") {
      for (const auto& v : *it)
        if (std::find(lists.begin(), lists.end(), Ref(v.get<std::string>())) == lists.end())
          lists.emplace_back(v.get<std::string>());
    } else if (IsContactColumn(f.name) && it->is_string()) {
      std::string v = it->get<std::string>();
      if (f.name == "first_name") in.first_name = v;
      if (f.name == "last_name") in.last_name = v;
      if (f.name == "phone") in.phone = v;
    } else {
      (*in.custom_fields)[f.name] = *it;
    }
  }
  if (in.custom_fields->empty()) in.custom_fields.reset();
  in.type = form.applies.type;
  in.source = "form:" + std::to_string(form.id);
  in.signup = true;  // a suppressed address waits for the person's own confirmation
  in.tags.assign(form.applies.tags.begin(), form.applies.tags.end());
  in.lists = std::move(lists);
  return in;
}

}  // namespace

Result<SubmitResult> FormService::Submit(const governance::Actor& actor, const Form& form,
                                         const json& fields, bool keyed,
                                         const ConsentOrigin& origin) {
  if (!contacts_) return Fail(Errc::kInternal, "form submissions need the contact service");
  auto errors = CheckSubmission(form, fields);
  // The address is judged with the other fields, so that every field error comes at once;
  // its verdict is kept for the write (judging may do DNS: once is enough).
  std::optional<EmailVerdict> judged;
  for (const auto& f : form.fields) {
    if (!f.input() || f.type != "Email") continue;
    auto it = fields.find(f.name);
    if (it == fields.end() || !it->is_string() || it->get_ref<const std::string&>().empty())
      continue;
    if (it->get_ref<const std::string&>().size() > kMaxFormValueBytes)
      continue;  // too_long already
    judged = contacts_->ValidateEmail(it->get<std::string>());
    if (!judged->valid)
      errors.push_back(
          {FieldPath(f.name), "invalid_email",
           judged->reasons.empty() ? "is not a valid email address" : judged->reasons.front()});
  }
  if (!errors.empty()) return Fail(FirstError(errors));
  for (const auto& [name, value] : fields.items()) {
    if (form.IsHoneypot(name) && !value.is_null() &&
        !(value.is_string() && value.get_ref<const std::string&>().empty()))
      return SubmitResult{.discarded = true};
  }

  std::string email_field;
  ContactInput in = SubmissionInput(form, fields, &email_field);
  if (!in.email)
    return Fail(
        FirstError({{FieldPath(email_field), "required", "the email address is required"}}));

  EmailVerdict verdict = judged ? std::move(*judged) : contacts_->ValidateEmail(*in.email);
  if (!verdict.valid) {
    std::string why =
        verdict.reasons.empty() ? "is not a valid email address" : verdict.reasons.front();
    return Fail(FirstError({{FieldPath(email_field), "invalid_email", why}}));
  }
  // The lists the form applies that no longer exist, logged once after the write (whose
  // callback may run more than once).
  std::vector<std::string> missing_lists;
  auto result = db_.Write([&](store::Conn& c) -> Result<SubmitResult> {
    missing_lists.clear();
    // A form never forces a status move the state machine refuses without consent (for
    // example it does not resubscribe an unsubscribed contact); it applies the rest.
    ContactInput input = in;
    auto existing = contacts_repo::FindContactByEmail(c, verdict.normalized);
    if (!existing) return Fail(existing.error());
    if (*existing && !keyed) input = StrangerFill(in, **existing);
    if (form.applies.status && (keyed || !*existing) &&
        (!*existing || CheckTransition({(*existing)->status, *form.applies.status, false})))
      input.status = form.applies.status;
    // A list the form applies may have been deleted since the form was saved: the lead
    // still counts; the missing list is skipped and logged.
    std::vector<Ref> lists;
    for (const auto& l : in.lists) {
      auto row = groups_repo::FindRefByName(c, GroupKind::kList, std::get<std::string>(l));
      if (!row) return Fail(row.error());
      if (*row)
        lists.push_back(l);
      else
        missing_lists.push_back(std::get<std::string>(l));
    }
    if (keyed || !*existing) input.lists = lists;
    auto r = contacts_->UpsertIn(c, actor, input, verdict);
    if (!r && r.error().code == Errc::kSuppressed)  // a domain's entry: no confirmation lifts it
      return Fail(FirstError(
          {{FieldPath(email_field), "suppressed", "this address cannot be subscribed here"}}));
    if (!r) {
      // A contact-field limit (e.g. first_name over 100 characters) names the form field.
      if (r.error().code == Errc::kInvalidArgument && r.error().detail.empty()) {
        const std::string& m = r.error().message;
        std::string name = m.substr(0, m.find_first_of(" :"));
        for (const auto& f : form.fields)
          if (f.input() && f.name == name)
            return Fail(FirstError({{FieldPath(name), "invalid", m}}));
      }
      return Fail(r.error());
    }
    // An existing contact joins a list it left, or (asked by a stranger) any list, only
    // through its own confirmation.
    if (!r->created && preferences_)
      if (auto st = AskToRejoinLeftListsIn(c, *preferences_, r->contact.id, lists); !st)
        return Fail(st.error());
    if (auto st = contact_records_repo::AddConsentRecord(c, r->contact.id, "form_submission",
                                                         form.id, origin.ip_address,
                                                         origin.user_agent, clock_.NowUnix());
        !st)
      return Fail(st.error());
    auto n = forms_repo::CountSubmission(c, form.id);
    if (!n) return Fail(n.error());
    if (!*n) return Fail(Errc::kNotFound, "no form with id " + std::to_string(form.id));
    return SubmitResult{.contact_id = r->contact.id, .created = r->created};
  });
  if (result)
    for (const auto& list : missing_lists)
      spdlog::warn(R"("event":"form_list_missing","form_id":{},"list":"{}")", form.id,
                   JsonEscape(list));
  return result;
}

}  // namespace crmd::crm
