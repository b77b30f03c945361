#include "src/crm/services.h"

namespace crmd::crm {
namespace {

std::unique_ptr<GroupService> MakeGroupService(GroupKind kind, governance::Services& g,
                                               const ServicesOptions& o, Outbox* outbox) {
  return std::make_unique<GroupService>(GroupServiceOptions{.kind = kind,
                                                            .db = o.db,
                                                            .clock = o.clock,
                                                            .audit = g.audit.get(),
                                                            .idempotency = g.idempotency.get(),
                                                            .outbox = outbox,
                                                            .usage = o.usage});
}

}  // namespace

Services::Services(governance::Services& g, ServicesOptions o)
    : governance(g),
      options(o),
      outbox(std::make_unique<Outbox>(o.clock)),
      email_validator(
          std::make_unique<EmailValidator>(EmailValidatorOptions{.resolver = o.resolver})),
      suppressions(std::make_unique<SuppressionList>(SuppressionListOptions{
          .db = o.db, .clock = o.clock, .audit = g.audit.get(), .key = o.suppression_key})),
      contacts(std::make_unique<ContactService>(
          ContactServiceOptions{.db = o.db,
                                .clock = o.clock,
                                .validator = email_validator.get(),
                                .settings = g.settings.get(),
                                .outbox = outbox.get(),
                                .audit = g.audit.get(),
                                .idempotency = g.idempotency.get(),
                                .exit = o.contact_exit,
                                .suppressions = suppressions.get()})),
      lists(MakeGroupService(GroupKind::kList, g, o, outbox.get())),
      tags(MakeGroupService(GroupKind::kTag, g, o, outbox.get())),
      list_preferences(
          std::make_unique<ListPreferences>(ListPreferencesOptions{.db = o.db,
                                                                   .clock = o.clock,
                                                                   .outbox = outbox.get(),
                                                                   .audit = g.audit.get(),
                                                                   .settings = g.settings.get()})),
      forms(std::make_unique<FormService>(*o.db, *o.clock, *o.random, contacts.get(),
                                          list_preferences.get())),
      exporter(std::make_unique<ContactExporter>(o.read_db ? *o.read_db : *o.db)),
      imports(
          std::make_unique<ImportService>(ImportServiceOptions{.db = o.db,
                                                               .clock = o.clock,
                                                               .contacts = contacts.get(),
                                                               .settings = g.settings.get(),
                                                               .max_bytes = o.import_max_bytes})) {}

Services::~Services() = default;

Result<std::unique_ptr<Services>> MakeServices(governance::Services& governance,
                                               ServicesOptions options) {
  if (!options.db || !options.clock || !options.random)
    return Fail(Error::Internal("crm::Services needs db, clock and random"));
  if (options.suppression_key.size() < 32)
    return Fail(Error::Internal("crm::Services needs the suppression list's key (32 bytes)"));
  auto s = std::make_unique<Services>(governance, options);
  for (auto spec :
       {s->contacts->DeleteAction(), s->lists->DeleteAction(), s->tags->DeleteAction()}) {
    if (auto st = governance.confirmations->RegisterAction(std::move(spec)); !st)
      return Fail(st.error());
  }
  return s;
}

}  // namespace crmd::crm
