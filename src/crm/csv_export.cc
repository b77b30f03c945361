#include "src/crm/csv_export.h"

namespace crmd::crm {

bool LooksLikeFormula(std::string_view cell) {
  if (cell.empty()) return false;
  char c = cell.front();
  return c == '=' || c == '+' || c == '-' || c == '@' || c == '\t' || c == '\r';
}

std::string_view RemoveFormulaGuard(std::string_view cell) {
  if (cell.size() >= 2 && cell.front() == '\'' && LooksLikeFormula(cell.substr(1)))
    return cell.substr(1);
  return cell;
}

void AppendCsvCell(std::string& out, std::string_view cell) {
  bool guard = LooksLikeFormula(cell);
  bool quote = cell.find_first_of(",\"\r\n") != std::string_view::npos;
  if (quote) out += '"';
  if (guard) out += '\'';
  if (!quote) {
    out.append(cell);
    return;
  }
  for (char c : cell) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
}

void AppendCsvRecord(std::string& out, const std::vector<std::string>& cells) {
  for (size_t i = 0; i < cells.size(); ++i) {
    if (i) out += ',';
    AppendCsvCell(out, cells[i]);
  }
  out += "\r\n";
}

}  // namespace crmd::crm
