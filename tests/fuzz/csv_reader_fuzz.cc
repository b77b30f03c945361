// The import's CSV reader (src/crm/csv_reader.h): whatever the bytes, records come out in
// order with growing offsets and lines, reading a byte at a time gives the same records as
// reading at once, and a reader started again at any record's end reads what followed it.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "src/crm/csv_reader.h"

namespace {

std::vector<crmd::crm::CsvRecord> ReadCsv(const std::string& text, char delimiter, int64_t from,
                                          int64_t line, size_t step) {
  auto pos = std::make_shared<size_t>(static_cast<size_t>(from));
  crmd::crm::CsvReader reader(
      [&text, pos, step](char* buf, size_t n) {
        size_t k = std::min({n, step, text.size() - *pos});
        std::memcpy(buf, text.data() + *pos, k);
        *pos += k;
        return k;
      },
      {.delimiter = delimiter, .start_offset = from, .start_line = line});
  std::vector<crmd::crm::CsvRecord> out;
  crmd::crm::CsvRecord rec;
  while (reader.Next(&rec)) out.push_back(rec);
  return out;
}

bool Same(const crmd::crm::CsvRecord& a, const crmd::crm::CsvRecord& b) {
  return a.fields == b.fields && a.line == b.line && a.end_offset == b.end_offset &&
         a.error == b.error;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const char delimiter = ",;\t"[data[0] % 3];
  std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  auto whole = ReadCsv(text, delimiter, 0, 1, 1 << 20);
  auto bytes = ReadCsv(text, delimiter, 0, 1, 1);
  if (whole.size() != bytes.size()) std::abort();
  int64_t end = 0, line = 0;
  for (size_t i = 0; i < whole.size(); ++i) {
    if (!Same(whole[i], bytes[i])) std::abort();
    if (whole[i].end_offset <= end || whole[i].line <= line) std::abort();
    if (whole[i].end_offset > static_cast<int64_t>(text.size())) std::abort();
    end = whole[i].end_offset;
    line = whole[i].line;
  }
  if (whole.size() > 1) {
    size_t k = whole.size() / 2 - 1;
    auto rest = ReadCsv(text, delimiter, whole[k].end_offset, whole[k].next_line, 7);
    if (rest.size() != whole.size() - k - 1) std::abort();
    for (size_t i = 0; i < rest.size(); ++i)
      if (!Same(rest[i], whole[k + 1 + i])) std::abort();
  }
  return 0;
}
