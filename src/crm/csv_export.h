#pragma once
// Writing CSV (RFC 4180) for spreadsheets: the cells of every export crmd makes.
//
// A cell is quoted when it holds a comma, a double quote, CR or LF (quotes doubled);
// records end with CRLF. A cell that a spreadsheet would run as a formula (it starts with
// '=', '+', '-', '@', a tab or CR) gets a leading apostrophe, so that opening an export
// never runs a stranger's "=HYPERLINK(...)" (OWASP "CSV injection"). Reading such a file
// back, RemoveFormulaGuard undoes exactly that prefix. Stateless; thread-safe.
#include <string>
#include <string_view>
#include <vector>

namespace crmd::crm {

// Appends `cell`, neutralised and quoted as needed (no separator).
void AppendCsvCell(std::string& out, std::string_view cell);

// Appends the cells separated by commas and a CRLF.
void AppendCsvRecord(std::string& out, const std::vector<std::string>& cells);

// True when a spreadsheet would read `cell` as a formula.
bool LooksLikeFormula(std::string_view cell);

// `cell` without the apostrophe AppendCsvCell put before a formula-like value (for an
// import of crmd's own export); any other cell unchanged.
std::string_view RemoveFormulaGuard(std::string_view cell);

}  // namespace crmd::crm
