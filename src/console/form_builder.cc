#include "src/console/form_builder.h"

#include <utility>

#include "src/crm/forms.h"
#include "src/mail/message.h"

namespace crmd::console {

namespace {

using nlohmann::json;

constexpr const char* kBuilderTypes[] = {"Email",     "Input",    "Textarea", "Dropdown",
                                         "Radio",     "Checkbox", "List",     "Heading",
                                         "Paragraph", "Image",    "Link"};

bool BuilderHasField(const FormFields& in, const std::string& name) {
  for (const auto& [k, v] : in)
    if (k == name) return true;
  return false;
}

std::optional<size_t> BuilderRowIndex(const std::string& s, size_t rows) {
  if (s.empty() || s.size() > 4 || s.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  size_t i = std::stoul(s);
  return i < rows ? std::optional<size_t>(i) : std::nullopt;
}

std::string BuilderEsc(std::string_view s) { return mail::HtmlEscape(s); }

std::string BuilderPreviewInput(const json& f, const std::string& id) {
  const std::string type = f.value("type", "");
  const std::string label = BuilderEsc(f.value("label", f.value("name", std::string())));
  // Shown, not enforced: the preview sits inside the builder's own form.
  const std::string req;
  const std::string star = f.value("required", false) ? " *" : "";
  std::vector<std::string> options = f.value("options", std::vector<std::string>{});
  if (type == "Textarea")
    return "<p><label for=\"" + id + "\">" + label + star + "</label><br><textarea id=\"" + id +
           "\"" + req + "></textarea></p>";
  if (type == "Dropdown") {
    std::string s = "<p><label for=\"" + id + "\">" + label + star + "</label><br><select id=\"" +
                    id + "\"" + req + "><option value=\"\"></option>";
    for (const auto& o : options) s += "<option>" + BuilderEsc(o) + "</option>";
    return s + "</select></p>";
  }
  if (type == "Radio" || type == "List" || (type == "Checkbox" && !options.empty())) {
    std::string s = "<fieldset><legend>" + label + star + "</legend>";
    for (size_t k = 0; k < options.size(); ++k) {
      std::string oid = id + "-" + std::to_string(k);
      s += "<label for=\"" + oid + "\"><input type=\"" + (type == "Radio" ? "radio" : "checkbox") +
           "\" id=\"" + oid + "\" name=\"" + id + "\"> " + BuilderEsc(options[k]) + "</label> ";
    }
    return s + "</fieldset>";
  }
  if (type == "Checkbox")
    return "<p><label for=\"" + id + "\"><input type=\"checkbox\" id=\"" + id + "\"" + req + "> " +
           label + star + "</label></p>";
  return "<p><label for=\"" + id + "\">" + label + star + "</label><br><input id=\"" + id +
         "\" type=\"" + (type == "Email" ? "email" : "text") + "\"" + req + "></p>";
}

}  // namespace

std::vector<BuilderRow> ReadBuilderRows(const FormFields& in) {
  std::vector<BuilderRow> rows;
  if (in.empty()) {
    rows.push_back({.type = "Email", .label = "Email", .name = "email", .required = true});
    rows.push_back({});
    return rows;
  }
  for (size_t i = 0; i < crm::kMaxFormFields; ++i) {
    const std::string p = "f" + std::to_string(i) + "_";
    if (!BuilderHasField(in, p + "type")) break;
    rows.push_back({.type = FieldValue(in, p + "type"),
                    .label = FieldValue(in, p + "label"),
                    .name = FieldValue(in, p + "name"),
                    .options = FieldValue(in, p + "options"),
                    .required = FieldValue(in, p + "required") == "on"});
  }
  return rows;
}

bool ApplyBuilderButton(const std::string& button, std::vector<BuilderRow>& rows,
                        std::string* error) {
  if (button == "add") {
    if (rows.size() >= crm::kMaxFormFields) {
      *error = "A form has at most " + std::to_string(crm::kMaxFormFields) + " fields.";
      return true;
    }
    rows.push_back({.type = "Input"});
    return true;
  }
  const size_t colon = button.find(':');
  if (colon == std::string::npos) return false;
  const std::string verb = button.substr(0, colon);
  auto i = BuilderRowIndex(button.substr(colon + 1), rows.size());
  if (!i) return false;
  if (verb == "remove") {
    rows.erase(rows.begin() + static_cast<std::ptrdiff_t>(*i));
  } else if (verb == "up" && *i > 0) {
    std::swap(rows[*i], rows[*i - 1]);
  } else if (verb == "down" && *i + 1 < rows.size()) {
    std::swap(rows[*i], rows[*i + 1]);
  } else if (verb != "up" && verb != "down") {
    return false;
  }
  return true;
}

json BuilderFieldsJson(const std::vector<BuilderRow>& rows, std::vector<int>* row_of) {
  json fields = json::array();
  for (size_t i = 0; i < rows.size(); ++i) {
    const BuilderRow& r = rows[i];
    if (r.type.empty() || (r.name.empty() && r.label.empty())) continue;
    json f{{"type", r.type}};
    if (!r.name.empty()) f["name"] = r.name;
    if (!r.label.empty()) f["label"] = r.label;
    if (r.required) f["required"] = true;
    auto options = SplitList(r.options, ",\n");
    if (!options.empty()) f["options"] = options;
    fields.push_back(std::move(f));
    if (row_of) row_of->push_back(static_cast<int>(i));
  }
  return fields;
}

ViewList BuilderRowsView(const std::vector<BuilderRow>& rows,
                         const std::map<int, std::string>& errors) {
  ViewList out;
  for (size_t i = 0; i < rows.size(); ++i) {
    const BuilderRow& r = rows[i];
    ViewList types;
    for (const char* t : kBuilderTypes)
      types.emplace_back(ViewMap{{"type", std::string(t)}, {"selected", r.type == t}});
    ViewMap row{{"i", std::to_string(i)},
                {"n", std::to_string(i + 1)},
                {"types", std::move(types)},
                {"name", r.name},
                {"label", r.label},
                {"required", r.required},
                {"options", r.options},
                {"first", i == 0},
                {"last", i + 1 == rows.size()}};
    auto e = errors.find(static_cast<int>(i));
    row.emplace("has_error", e != errors.end());  // set on every row: not the page's
    row.emplace("field_error", e != errors.end() ? e->second : std::string());
    out.emplace_back(std::move(row));
  }
  return out;
}

std::string FormPreviewHtml(const json& fields) {
  std::string html;
  int n = 0;
  for (const json& f : fields) {
    const std::string type = f.value("type", "");
    const std::string id = "preview-field-" + std::to_string(n++);
    const std::string label = BuilderEsc(f.value("label", std::string()));
    if (type == "Heading")
      html += "<h3>" + label + "</h3>";
    else if (type == "Paragraph")
      html += "<p>" + label + "</p>";
    else if (type == "Image")
      html += "<p class=\"preview-image\">[image: " + label + "]</p>";
    else if (type == "Link" && mail::IsSafeLinkUrl(f.value("label", std::string())))
      html += "<p><a href=\"" + label + "\">" + label + "</a></p>";
    else if (type == "Link")
      html += "<p>" + label + "</p>";
    else
      html += BuilderPreviewInput(f, id);
  }
  if (html.empty()) html = "<p>No fields yet.</p>";
  return html + "<p><button type=\"button\" disabled>Send</button></p>";
}

}  // namespace crmd::console
