#pragma once
// The POST of the console's campaign page (campaign_pages.h): activate and resend through
// the confirmation service (preview, then confirm, with the person's approval when the
// policy asks for one), and pause. Thread-safe; blocks on the database.
#include "src/console/campaign_pages.h"

namespace crmd::console {

http::Response PostCampaign(const CampaignPagesDeps& d, const http::Request& req, const Person& p);

}  // namespace crmd::console
