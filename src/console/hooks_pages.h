#pragma once
// The console's incoming webhooks (administrators only, shell.h's rules):
//   GET  /console/hooks           hooks (name, URL prefix, HMAC, status, received) and the
//                                 editor: name, mapping rows (contact field <- dotted path
//                                 in the payload, required), applied tags/lists/status/
//                                 type, HMAC secret, and a sample payload to try it on
//   POST /console/hooks           action=preview (the editor's fields and sample: the page
//                                 again with what the sample would become, nothing saved);
//                                 action=create (the URL shown once);
//                                 action=enable|disable|delete (id)
//   POST /console/hooks/preview   the same preview as JSON, for console.js's live preview
//                                 {"ok", "rows": [{"label","value"}], "errors":
//                                 [{"path","message"}]}
// The mapping is parsed and applied by src/webhooks (ParseMapping, ParseApplies,
// MapPayload), exactly as POST <rest base>/hooks/<token> does; nothing is written by a
// preview. Thread-safe; handlers block on the database (worker pool).
#include <string>

#include "src/console/shell.h"
#include "src/webhooks/incoming.h"

namespace crmd::console {

struct HooksPagesDeps {
  webhooks::IncomingHooks* hooks = nullptr;
  ConsolePeople people;
  std::string rest_base_url;  // absolute; the hook URL is <it>/hooks/<token>
};

ConsoleRoutes HooksRoutes(HooksPagesDeps deps);

}  // namespace crmd::console
