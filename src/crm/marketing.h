#pragma once
// Installs the marketing module into crm::Services: builds the campaign, automation,
// sequence and report services, registers the confirmable actions (activate_campaign,
// delete_campaign, activate_automation, delete_automation) with the confirmation service,
// and hands crm the list/tag UsageSource. Called once by the composition root after
// crm::MakeServices. REQUIRES: start-up only (before requests are served).
#include "src/core/result.h"
#include "src/crm/actor.h"

namespace crmd::crm {

struct Services;

Status InstallMarketing(Services& s);

// `crmctl seed`: a few campaigns, automations and a sequence over the lists and tags that
// exist (creates "Newsletter" / "welcome" when there are none). Idempotent by name.
Status SeedMarketing(Services& s, const Actor& actor);

}  // namespace crmd::crm
