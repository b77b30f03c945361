#pragma once
// crm::Services: the CRM core services, built once by the composition root (src/app) and
// handed to tools, REST, forms and webhooks. Owns its services; borrows db, clock,
// random, resolver and usage source (they must outlive it). Thread-safe once built.
//
// Marketing adds its services in the marked slot below (and registers its confirmation
// actions with `confirmations`, and its UsageSource with SetUsageSource).
#include <memory>

#include "src/core/clock.h"
#include "src/core/random.h"
#include "src/core/result.h"
#include "src/crm/audit.h"
#include "src/crm/automations.h"
#include "src/crm/campaign_delivery.h"
#include "src/crm/campaigns.h"
#include "src/crm/confirmations.h"
#include "src/crm/contacts.h"
#include "src/crm/email_validation.h"
#include "src/crm/idempotency.h"
#include "src/crm/lists.h"
#include "src/crm/outbox.h"
#include "src/crm/reports.h"
#include "src/crm/resolver.h"
#include "src/crm/sequences.h"
#include "src/crm/settings.h"
#include "src/crm/tags.h"
#include "src/crm/usage.h"
#include "src/store/db.h"

namespace crmd::crm {

struct ServicesOptions {
  store::Database* db = nullptr;
  Clock* clock = nullptr;
  Random* random = nullptr;
  Resolver* resolver = nullptr;   // nullptr -> DNS mode behaves like syntax mode
  UsageSource* usage = nullptr;   // nullptr until marketing provides one
};

struct Services {
  explicit Services(ServicesOptions options);
  ~Services();
  Services(const Services&) = delete;
  Services& operator=(const Services&) = delete;

  // Wires the UsageSource into lists and tags. REQUIRES: start-up only.
  void SetUsageSource(UsageSource* usage);

  const ServicesOptions options;
  std::unique_ptr<AuditLog> audit;
  std::unique_ptr<Outbox> outbox;
  std::unique_ptr<Idempotency> idempotency;
  std::unique_ptr<SettingsService> settings;
  std::unique_ptr<EmailValidator> email_validator;
  std::unique_ptr<ConfirmationService> confirmations;
  std::unique_ptr<ContactService> contacts;
  std::unique_ptr<ListService> lists;
  std::unique_ptr<TagService> tags;

  // --- marketing services (owned by the marketing helper; add members below) ---
  // Built by InstallMarketing (src/crm/marketing.h) after MakeServices.
  std::unique_ptr<CampaignService> campaigns;
  std::unique_ptr<CampaignDelivery> delivery;  // the send queue and delivery events
  std::unique_ptr<AutomationService> automations;
  std::unique_ptr<SequenceService> sequences;
  std::unique_ptr<ReportService> reports;
  std::unique_ptr<UsageSource> marketing_usage;
};

// Builds Services and registers crm's confirmation actions (delete_contacts,
// delete_list, delete_tag).
Result<std::unique_ptr<Services>> MakeServices(ServicesOptions options);

}  // namespace crmd::crm
