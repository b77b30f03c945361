#include "src/crm/services.h"

namespace crmd::crm {

Services::Services(ServicesOptions o) : options(o) {
  audit = std::make_unique<AuditLog>(o.clock, o.db);
  outbox = std::make_unique<Outbox>(o.clock);
  idempotency = std::make_unique<Idempotency>(o.db, o.clock);
  settings = std::make_unique<SettingsService>(
      SettingsOptions{.db = o.db, .clock = o.clock, .audit = audit.get()});
  email_validator = std::make_unique<EmailValidator>(EmailValidatorOptions{.resolver = o.resolver});
  confirmations = std::make_unique<ConfirmationService>(ConfirmationOptions{
      .db = o.db, .clock = o.clock, .random = o.random, .settings = settings.get()});
  contacts = std::make_unique<ContactService>(ContactServiceOptions{
      .db = o.db, .clock = o.clock, .validator = email_validator.get(),
      .settings = settings.get(), .outbox = outbox.get(), .audit = audit.get(),
      .idempotency = idempotency.get()});
  auto group = [&](GroupKind kind) {
    return std::make_unique<GroupService>(GroupServiceOptions{
        .kind = kind, .db = o.db, .clock = o.clock, .audit = audit.get(),
        .idempotency = idempotency.get(), .outbox = outbox.get(), .usage = o.usage});
  };
  lists = group(GroupKind::kList);
  tags = group(GroupKind::kTag);
}

Services::~Services() = default;

void Services::SetUsageSource(UsageSource* usage) {
  lists->SetUsageSource(usage);
  tags->SetUsageSource(usage);
}

Result<std::unique_ptr<Services>> MakeServices(ServicesOptions options) {
  if (!options.db || !options.clock || !options.random)
    return Fail(Error::Internal("crm::Services needs db, clock and random"));
  auto s = std::make_unique<Services>(options);
  for (auto spec : {s->contacts->DeleteAction(), s->lists->DeleteAction(),
                    s->tags->DeleteAction()}) {
    if (auto st = s->confirmations->RegisterAction(std::move(spec)); !st) return Fail(st.error());
  }
  return s;
}

}  // namespace crmd::crm
