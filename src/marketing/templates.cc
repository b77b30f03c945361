#include "src/marketing/templates.h"

#include <utility>

#include "src/mail/merge.h"
#include "src/mail/message.h"
#include "src/marketing/templates_repo.h"

// The layouts embedded from src/marketing/layouts/ (cmake/Embed.cmake).
namespace crmd::marketing::layouts {
std::optional<std::string_view> Find(std::string_view path);
}  // namespace crmd::marketing::layouts

namespace crmd::marketing {
namespace {

using nlohmann::json;

constexpr std::string_view kSlot = "content";
constexpr size_t kMaxTemplateName = 200;

mail::MergeSchema LayoutSchema() {
  mail::MergeSchema schema = mail::DefaultMergeSchema();
  schema.fields.emplace_back(kSlot);
  return schema;
}

// Where a layout part's one slot is: [begin, end) of its source.
struct Slot {
  size_t begin = 0, end = 0;
};

Result<Slot> ParseLayout(const char* field, std::string_view source) {
  auto parsed = mail::MergeTemplate::Parse(source, LayoutSchema());
  if (!parsed)
    return Fail(Errc::kInvalidArgument, std::string(field) + ": " + parsed.error().message);
  Slot out;
  int slots = 0;
  for (const auto& tag : parsed->tags()) {
    if (tag.name != kSlot) continue;
    ++slots;
    out = {tag.offset, tag.end};
    if (tag.fallback || tag.in_url)
      return Fail(Errc::kInvalidArgument, std::string(field) +
                                              ": the {{content}} slot takes no fallback and stands "
                                              "outside any attribute (line " +
                                              std::to_string(tag.line) + ", column " +
                                              std::to_string(tag.column) + ")");
  }
  if (slots != 1)
    return Fail(Errc::kInvalidArgument, std::string(field) +
                                            ": needs exactly one {{content}} slot, found " +
                                            std::to_string(slots));
  return out;
}

// `layout` with its slot replaced by `body`.
Result<std::string> FillSlot(const char* field, std::string_view layout, std::string_view body) {
  auto slot = ParseLayout(field, layout);
  if (!slot) return Fail(slot.error());
  std::string out;
  out.reserve(layout.size() + body.size());
  out.append(layout.substr(0, slot->begin));
  out.append(body);
  out.append(layout.substr(slot->end));
  return out;
}

Status ApplyTemplateFields(const json& j, EmailTemplate& out) {
  EmailTemplate t = out;  // all or nothing
  for (const auto& [key, value] : j.items())
    if (key != "name" && key != "html" && key != "text")
      return Fail(Errc::kInvalidArgument, key + ": unknown field (name, html, text)");
  struct Field {
    const char* key;
    std::string* member;
    size_t max;
  };
  for (const Field& f :
       {Field{"name", &t.name, kMaxTemplateName}, Field{"html", &t.html, kMaxTemplateHtml},
        Field{"text", &t.text, kMaxTemplateText}}) {
    if (!j.contains(f.key)) continue;
    const auto& v = j[f.key];
    if (f.member == &t.text && v.is_null()) {
      t.text.clear();
      continue;
    }
    if (!v.is_string())
      return Fail(Errc::kInvalidArgument, std::string(f.key) + ": must be a string");
    if (v.get_ref<const std::string&>().size() > f.max)
      return Fail(Errc::kInvalidArgument,
                  std::string(f.key) + ": longer than " + std::to_string(f.max) + " bytes");
    *f.member = v.get<std::string>();
  }
  if (t.name.empty()) return Fail(Errc::kInvalidArgument, "name: must not be empty");
  if (t.html.empty()) return Fail(Errc::kInvalidArgument, "html: must not be empty");
  if (auto s = CheckLayoutPart("html", t.html); !s) return s;
  if (!t.text.empty())
    if (auto s = CheckLayoutPart("text", t.text); !s) return s;
  out = std::move(t);
  return Ok();
}

}  // namespace

json ToJson(const EmailTemplate& t, bool full) {
  json j = {{"id", t.id},
            {"name", t.name},
            {"revision", t.revision},
            {"builtin", t.builtin.empty() ? json(nullptr) : json(t.builtin)},
            {"created_at", TimeJson(t.created_at)},
            {"updated_at", TimeJson(t.updated_at)}};
  if (full) {
    j["html"] = t.html;
    j["text"] = t.text;
  }
  return j;
}

void ResolveBuiltin(EmailTemplate& t) {
  if (t.builtin.empty() || !t.html.empty()) return;
  t.html = std::string(layouts::Find(t.builtin + ".html").value_or(""));
  t.text = std::string(layouts::Find(t.builtin + ".txt").value_or(""));
}

Status CheckLayoutPart(const char* field, std::string_view source) {
  auto slot = ParseLayout(field, source);
  if (!slot) return Fail(slot.error());
  return Ok();
}

Result<MessageBodies> WrapInLayout(const EmailTemplate* layout, const std::string& html_body,
                                   const std::string& text_body) {
  // A text-only message still gets an HTML part: its text, escaped, in <pre>-like lines.
  std::string html = html_body.empty() ? "<div style=\"white-space:pre-wrap\">" +
                                             mail::HtmlEscape(text_body) + "</div>"
                                       : html_body;
  MessageBodies out;
  if (!text_body.empty()) out.text = text_body;
  if (!layout) {
    out.html = std::move(html);
    return out;
  }
  auto wrapped = FillSlot("template html", layout->html, html);
  if (!wrapped) return Fail(wrapped.error());
  out.html = std::move(*wrapped);
  if (out.text && !layout->text.empty()) {
    auto text = FillSlot("template text", layout->text, *out.text);
    if (!text) return Fail(text.error());
    out.text = std::move(*text);
  }
  return out;
}

json ToJson(const std::vector<TemplateUse>& uses) {
  json out = json::array();
  for (const auto& u : uses) {
    json j = {{"kind", u.kind}, {"id", u.id}, {"name", u.name}};
    if (u.kind == "sequence") j["emails"] = u.at;
    if (u.kind == "automation") j["steps"] = u.at;
    out.push_back(std::move(j));
  }
  return out;
}

Result<std::optional<int64_t>> TemplateIdOf(const json& fields, const std::string& where) {
  if (!fields.is_object() || !fields.contains("template_id") || fields["template_id"].is_null())
    return std::optional<int64_t>{};
  const auto& v = fields["template_id"];
  if (!v.is_number_integer() || v.get<int64_t>() <= 0)
    return Fail(Errc::kInvalidArgument, where + ": must be a template id or null");
  return std::optional<int64_t>(v.get<int64_t>());
}

Result<EmailTemplate> UsableTemplate(store::Conn& c, int64_t id, const std::string& where) {
  auto row = templates_repo::Find(c, id, /*lock=*/true);
  if (!row) return Fail(row.error());
  if (!*row)
    return Fail(Errc::kInvalidArgument,
                where + ": template " + std::to_string(id) + " does not exist");
  ResolveBuiltin(**row);
  return std::move(**row);
}

Status CheckTemplateRefs(store::Conn& c, const json& items, const std::string& where) {
  if (!items.is_array()) return Ok();
  for (size_t i = 0; i < items.size(); ++i) {
    const std::string at = where + "[" + std::to_string(i) + "]";
    auto id = TemplateIdOf(items[i], at + ".template_id");
    if (!id) return Fail(id.error());
    if (!*id) continue;
    auto t = UsableTemplate(c, **id, at + ".template_id");
    if (!t) return Fail(t.error());
    auto bodies =
        WrapInLayout(&*t, items[i].value("html_body", ""), items[i].value("text_body", ""));
    if (!bodies) return Fail(Errc::kInvalidArgument, at + ": " + bodies.error().message);
    for (const std::string* part : {&bodies->html, bodies->text ? &*bodies->text : nullptr}) {
      if (!part) continue;
      if (auto parsed = mail::MergeTemplate::Parse(*part); !parsed)
        return Fail(Errc::kInvalidArgument,
                    at + ": in template " + std::to_string(**id) + ", " + parsed.error().message);
    }
  }
  return Ok();
}

TemplateService::TemplateService(store::Database& db, const Clock& clock, AuditSink audit)
    : db_(db), clock_(clock), audit_(std::move(audit)) {}

Result<EmailTemplate> TemplateService::LoadOr404(store::Conn& c, int64_t id, bool lock) const {
  auto row = templates_repo::Find(c, id, lock);
  if (!row) return Fail(row.error());
  if (!*row) return Fail(Error::NotFound("template " + std::to_string(id) + " not found"));
  ResolveBuiltin(**row);
  return std::move(**row);
}

Status TemplateService::Audit(store::Conn& c, const governance::Actor& actor, const char* action,
                              const EmailTemplate& t,
                              std::optional<int64_t> revision_before) const {
  if (!audit_) return Ok();
  return audit_(c, actor,
                governance::AuditEntry{.action = action,
                                       .target_type = "template",
                                       .target_ids = {t.id},
                                       .revision_before = revision_before,
                                       .revision_after = t.revision,
                                       .details = {{"name", t.name}}});
}

Result<TemplatePage> TemplateService::List(std::string_view cursor, int limit) const {
  auto page = ListPageAfterCursor<TemplatePage>(db_, cursor, limit,
                                                [](store::Conn& c, int64_t after, int64_t n) {
                                                  return templates_repo::ListAfter(c, after, n);
                                                });
  if (page)
    for (auto& t : page->items) ResolveBuiltin(t);
  return page;
}

Result<EmailTemplate> TemplateService::Get(int64_t id) const {
  return db_.Read([&](store::Conn& c) { return LoadOr404(c, id, false); });
}

Result<EmailTemplate> TemplateService::Create(const governance::Actor& actor, const json& fields) {
  if (!fields.is_object()) return Fail(Errc::kInvalidArgument, "template must be an object");
  EmailTemplate t;
  if (auto s = ApplyTemplateFields(fields, t); !s) return Fail(s.error());
  t.created_at = t.updated_at = clock_.NowUnix();
  return db_.Write([&](store::Conn& c) -> Result<EmailTemplate> {
    auto id = templates_repo::Insert(c, t);
    if (!id) return Fail(id.error());
    t.id = *id;
    if (auto s = Audit(c, actor, "create_template", t, std::nullopt); !s) return Fail(s.error());
    return t;
  });
}

Result<EmailTemplate> TemplateService::Update(const governance::Actor& actor, int64_t id,
                                              int64_t expected_revision, const json& fields) {
  if (!fields.is_object()) return Fail(Errc::kInvalidArgument, "template must be an object");
  return db_.Write([&](store::Conn& c) -> Result<EmailTemplate> {
    auto t = LoadOr404(c, id, /*lock=*/true);
    if (!t) return Fail(t.error());
    if (t->revision != expected_revision)
      return Fail(Errc::kRevisionConflict, "revision " + std::to_string(expected_revision) +
                                               " is stale; the template is at revision " +
                                               std::to_string(t->revision));
    if (auto s = ApplyTemplateFields(fields, *t); !s) return Fail(s.error());
    t->updated_at = clock_.NowUnix();
    auto saved = templates_repo::Update(c, *t);
    if (!saved) return Fail(saved.error());
    if (!*saved) return Fail(Errc::kRevisionConflict, "the template was changed by someone else");
    t->revision += 1;
    if (auto s = Audit(c, actor, "update_template", *t, expected_revision); !s)
      return Fail(s.error());
    return t;
  });
}

Result<EmailTemplate> TemplateService::Delete(const governance::Actor& actor, int64_t id) {
  return db_.Write([&](store::Conn& c) -> Result<EmailTemplate> {
    auto t = LoadOr404(c, id, /*lock=*/true);
    if (!t) return Fail(t.error());
    auto uses = templates_repo::Uses(c, id);
    if (!uses) return Fail(uses.error());
    if (!uses->empty()) {
      std::string names;
      for (const auto& u : *uses)
        names +=
            (names.empty() ? "" : ", ") + u.kind + " " + std::to_string(u.id) + " (" + u.name + ")";
      return Fail(Error{Errc::kDependencyBlocked,
                        "template " + std::to_string(id) + " is used by " + names +
                            "; change them to another template first",
                        ToJson(*uses).dump()});
    }
    // Always there to start from (and never reusing its id): edited, not deleted.
    if (!t->builtin.empty())
      return Fail(Errc::kInvalidTransition,
                  "the built-in template " + std::to_string(id) + " cannot be deleted; edit it");
    if (auto s = templates_repo::Remove(c, id); !s) return Fail(s.error());
    if (auto s = Audit(c, actor, "delete_template", *t, t->revision); !s) return Fail(s.error());
    return t;
  });
}

Result<std::vector<TemplateUse>> TemplateService::Uses(int64_t id) const {
  return db_.Read([&](store::Conn& c) -> Result<std::vector<TemplateUse>> {
    if (auto t = LoadOr404(c, id, false); !t) return Fail(t.error());
    return templates_repo::Uses(c, id);
  });
}

}  // namespace crmd::marketing
