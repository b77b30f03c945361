#pragma once
// crm::Services: the contact book (contacts, lists, tags, forms, email validation, the
// outbox),
// built once by the composition root (src/app) on top of governance::Services and handed
// to marketing, tools, REST, forms and webhooks. Owns its services; borrows governance,
// db, clock, random, resolver and the marketing hooks (they must outlive it). Thread-safe
// once built.
#include <memory>

#include "src/core/clock.h"
#include "src/core/random.h"
#include "src/core/result.h"
#include "src/crm/contact_exit.h"
#include "src/crm/contacts.h"
#include "src/crm/contacts_export.h"
#include "src/crm/email_validation.h"
#include "src/crm/forms.h"
#include "src/crm/imports.h"
#include "src/crm/list_preferences.h"
#include "src/crm/lists.h"
#include "src/crm/outbox.h"
#include "src/crm/resolver.h"
#include "src/crm/suppression.h"
#include "src/crm/tags.h"
#include "src/crm/usage.h"
#include "src/governance/services.h"
#include "src/store/db.h"

namespace crmd::crm {

struct ServicesOptions {
  store::Database* db = nullptr;
  // Reads that tolerate lag (the export): a standby behind a router
  // (src/store/replica.h); null: db.
  store::Database* read_db = nullptr;
  Clock* clock = nullptr;
  Random* random = nullptr;
  Resolver* resolver = nullptr;  // nullptr -> DNS mode behaves like syntax mode
  // What marketing does with the contact book's rows (marketing::MarketingUsage): the
  // campaigns and automations a list or tag is used by, and the open sends and runs a
  // deleted contact leaves. Either may be null (unit tests of the contact book alone).
  UsageSource* usage = nullptr;
  ContactExit* contact_exit = nullptr;
  // The suppression list's HMAC key: the server secret "suppression_address_v1"
  // (src/app/shared_secrets.h), the same on every node; at least 32 bytes.
  std::string suppression_key;
  int64_t import_max_bytes = kDefaultImportMaxBytes;  // config import_max_bytes
};

struct Services {
  Services(governance::Services& governance, ServicesOptions options);
  ~Services();
  Services(const Services&) = delete;
  Services& operator=(const Services&) = delete;

  governance::Services& governance;
  const ServicesOptions options;
  const std::unique_ptr<Outbox> outbox;
  const std::unique_ptr<EmailValidator> email_validator;
  const std::unique_ptr<SuppressionList> suppressions;
  const std::unique_ptr<ContactService> contacts;
  const std::unique_ptr<ListService> lists;
  const std::unique_ptr<TagService> tags;
  const std::unique_ptr<ListPreferences> list_preferences;
  const std::unique_ptr<FormService> forms;
  const std::unique_ptr<ContactExporter> exporter;
  const std::unique_ptr<ImportService> imports;
};

// Builds Services and registers the contact book's confirmation actions (delete_contacts,
// delete_list, delete_tag) with governance's confirmation service.
Result<std::unique_ptr<Services>> MakeServices(governance::Services& governance,
                                               ServicesOptions options);

}  // namespace crmd::crm
