#pragma once
// Email templates: a saved layout, HTML and optional text, each with one {{content}} slot
// and the usual merge tags (src/mail/merge.h), a name and a revision. A campaign, a
// sequence email or an automation's send_email step that names a template_id has its
// body put in the slot when the message is rendered (WrapInLayout); the merge tags of
// the whole are then filled for the recipient. Merge tags are checked when a template is
// saved, as they are when a message is.
//
// crmd ships one template, "Default" (builtin "default", row 1 of migration 0082):
// responsive, readable without images and in dark mode, with a footer holding the
// sender's postal address ({{company_address}}, settings company_address) and the
// unsubscribe and preferences links ({{unsubscribe_url}}). Until someone saves it, its
// layout is the one embedded in this binary (src/marketing/layouts/).
//
// A template in use cannot be deleted (kDependencyBlocked, naming the users), nor can the
// built-in one.
// TemplateService is thread-safe (all state is in the database).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "src/core/clock.h"
#include "src/core/result.h"
#include "src/governance/actor.h"
#include "src/marketing/common.h"
#include "src/store/db.h"

namespace crmd::marketing {

inline constexpr size_t kMaxTemplateHtml = 512 * 1024;
inline constexpr size_t kMaxTemplateText = 256 * 1024;

struct EmailTemplate {
  int64_t id = 0;
  std::string name, html, text;
  std::string builtin;  // "default" for the template crmd ships; "" for a site's own
  int64_t revision = 1;
  int64_t created_at = 0, updated_at = 0;
};

// {id, name, html, text, revision, builtin, created_at, updated_at}; compact (no html and
// text) for lists.
nlohmann::json ToJson(const EmailTemplate& t, bool full = true);

// The built-in template's embedded layout when its stored html is empty (never saved).
void ResolveBuiltin(EmailTemplate& t);

// Checks a layout part: merge tags known (DefaultMergeSchema plus the slot), and exactly
// one {{content}} slot. `field` names the part in the message ("html", "text").
Status CheckLayoutPart(const char* field, std::string_view source);

// The bodies of a message inside `layout` (none: as they are). HTML: the layout's html with
// its slot replaced by `html_body` (or, without one, by `text_body` as preformatted text).
// Text: with a text body, the layout's text with its slot replaced by it (a layout without
// text: the text body alone); without one, none (the message's text part is then made from
// its HTML). The result is merge-tag source, parsed by the caller.
struct MessageBodies {
  std::string html;
  std::optional<std::string> text;
};
Result<MessageBodies> WrapInLayout(const EmailTemplate* layout, const std::string& html_body,
                                   const std::string& text_body);

// A record that uses a template: kind "campaign" | "sequence" | "automation", its id and
// name, and for sequences and automations the positions (emails[i], steps[i]) that do.
struct TemplateUse {
  std::string kind;
  int64_t id = 0;
  std::string name;
  std::vector<int64_t> at;
};
nlohmann::json ToJson(const std::vector<TemplateUse>& uses);

// The template_id of a message's fields: nullopt when absent or null; kInvalidArgument
// naming `where` when it is not a positive integer.
Result<std::optional<int64_t>> TemplateIdOf(const nlohmann::json& fields, const std::string& where);

// The template `id`, held (FOR UPDATE on PostgreSQL) until the caller's transaction ends,
// so that it cannot be deleted under a record that is being saved to use it; kInvalidArgument
// naming `where` ("template_id") when there is none. REQUIRES: inside Database::Write.
Result<EmailTemplate> UsableTemplate(store::Conn& c, int64_t id, const std::string& where);

// Every item of `items` (sequence emails, automation steps) that names a template_id: the
// template exists (held as UsableTemplate holds it) and the item's body fits it (the merge
// tags of the whole parse). Errors name the field, e.g. "emails[1].template_id".
// REQUIRES: inside Database::Write.
Status CheckTemplateRefs(store::Conn& c, const nlohmann::json& items, const std::string& where);

struct TemplatePage {
  std::vector<EmailTemplate> items;
  std::optional<std::string> next_cursor;
};

class TemplateService {
 public:
  // `audit` may be empty (unit tests).
  TemplateService(store::Database& db, const Clock& clock, AuditSink audit = {});
  TemplateService(const TemplateService&) = delete;
  TemplateService& operator=(const TemplateService&) = delete;

  Result<TemplatePage> List(std::string_view cursor, int limit) const;
  // kNotFound "template <id> not found".
  Result<EmailTemplate> Get(int64_t id) const;
  // fields: name (required, 1-200 bytes), html (required, one {{content}} slot), text
  // (optional; when not empty, one slot). kInvalidArgument naming the field.
  Result<EmailTemplate> Create(const governance::Actor& actor, const nlohmann::json& fields);
  // The fields present replace the stored ones. kRevisionConflict when expected_revision
  // (required, >= 1) is not the stored revision.
  Result<EmailTemplate> Update(const governance::Actor& actor, int64_t id,
                               int64_t expected_revision, const nlohmann::json& fields);
  // kDependencyBlocked while a campaign, sequence email or automation step uses it: the
  // message names them, the detail is ToJson(uses) as JSON text. kInvalidTransition for the
  // built-in template (edited, never deleted).
  Result<EmailTemplate> Delete(const governance::Actor& actor, int64_t id);
  // Who uses template `id` (empty when nobody).
  Result<std::vector<TemplateUse>> Uses(int64_t id) const;

 private:
  Result<EmailTemplate> LoadOr404(store::Conn& c, int64_t id, bool lock) const;
  Status Audit(store::Conn& c, const governance::Actor& actor, const char* action,
               const EmailTemplate& t, std::optional<int64_t> revision_before) const;

  store::Database& db_;
  const Clock& clock_;
  const AuditSink audit_;
};

}  // namespace crmd::marketing
