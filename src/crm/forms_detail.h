#pragma once
// What forms.cc (definitions) and form_submission.cc (submissions) share: the error shape
// of a form's field errors. Private to the contact book.
#include <algorithm>
#include <iterator>
#include <string>
#include <vector>

#include "src/core/result.h"
#include "src/crm/forms.h"

namespace crmd::crm::form_detail {

inline bool In(const std::string& s, const auto& arr) {
  return std::find(std::begin(arr), std::end(arr), s) != std::end(arr);
}
// The field name as a JSON member path inside "fields".
std::string FieldPath(const std::string& name);
// kInvalidArgument naming the first error, with all of them as JSON in the detail.
Error FirstError(const std::vector<FormError>& errors);

}  // namespace crmd::crm::form_detail
