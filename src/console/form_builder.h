#pragma once
// The Forms page's visual builder (forms_pages.h): a form's fields as rows the person
// adds, removes and moves up or down (any number up to crm::kMaxFormFields), a preview of
// the form as a visitor will see it, and each field's error beside its row. Without
// script every button is a round trip that changes nothing stored (the rows come back
// rearranged); console.js refreshes the preview as the person types
// (POST /console/forms/preview). Pure functions; thread-safe.
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "src/console/shell.h"

namespace crmd::console {

struct BuilderRow {
  std::string type, label, name, options;
  bool required = false;
};

// The rows of a posted builder: f<i>_type, f<i>_label, f<i>_name, f<i>_options and
// f<i>_required for i = 0, 1, ... while f<i>_type is in the form (at most the form limit).
// An empty form (the page opened fresh) gives an Email row and an empty one.
std::vector<BuilderRow> ReadBuilderRows(const FormFields& in);

// Applies a builder button: "add", "remove:<i>", "up:<i>", "down:<i>". False when `button`
// is none of them (or names no row); `error` says why an add was refused (the limit).
bool ApplyBuilderButton(const std::string& button, std::vector<BuilderRow>& rows,
                        std::string* error);

// The rows with a type as the "fields" of a form definition (rows without a type, or with
// neither name nor label, are left out). `row_of[k]` is the builder row of field k.
nlohmann::json BuilderFieldsJson(const std::vector<BuilderRow>& rows, std::vector<int>* row_of);

// The builder's rows for forms.mustache; `errors`: a message per row index.
ViewList BuilderRowsView(const std::vector<BuilderRow>& rows,
                         const std::map<int, std::string>& errors);

// The form as a visitor sees it (labels, inputs, options, texts), from the definition's
// fields, without script or inline style and with images named, not loaded: what the
// console's page may show under its policy. HTML-escaped.
std::string FormPreviewHtml(const nlohmann::json& fields);

}  // namespace crmd::console
