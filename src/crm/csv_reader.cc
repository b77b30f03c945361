#include "src/crm/csv_reader.h"

#include <array>

#include "src/core/utf8.h"

namespace crmd::crm {

namespace {
constexpr size_t kCsvChunk = 64 * 1024;
}  // namespace

CsvReader::CsvReader(ByteSource source, CsvReaderOptions options)
    : source_(std::move(source)),
      delimiter_(options.delimiter),
      offset_(options.start_offset),
      line_(options.start_line) {
  if (options.start_offset != 0) return;
  while (buf_.size() < 3 && Fill()) {
  }
  if (buf_.size() >= 3 && buf_.compare(0, 3, "\xEF\xBB\xBF") == 0) {
    pos_ = 3;
    offset_ = 3;
  }
}

bool CsvReader::Fill() {
  if (eof_) return false;
  buf_.erase(0, pos_);
  pos_ = 0;
  size_t old = buf_.size();
  buf_.resize(old + kCsvChunk);
  size_t n = source_(buf_.data() + old, kCsvChunk);
  buf_.resize(old + n);
  if (n == 0) eof_ = true;
  return n > 0;
}

int CsvReader::Peek() {
  if (pos_ >= buf_.size() && !Fill()) return -1;
  return static_cast<unsigned char>(buf_[pos_]);
}

int CsvReader::Take() {
  int c = Peek();
  if (c >= 0) {
    ++pos_;
    ++offset_;
  }
  return c;
}

// After a CR or LF taken: a CR's LF belongs to the same line break.
void CsvReader::SkipLineBreak(int c) {
  if (c == '\r' && Peek() == '\n') Take();
  ++line_;
}

bool CsvReader::Next(CsvRecord* out) {
  out->fields.clear();
  out->error.clear();
  // Blank lines are not records.
  for (int c = Peek(); c == '\r' || c == '\n'; c = Peek()) SkipLineBreak(Take());
  if (Peek() < 0) return false;
  out->line = line_;
  out->begin_offset = offset_;
  std::string field;
  size_t bytes = 0;
  bool quoted = false, was_quoted = false;
  auto end_record = [&]() {
    out->fields.push_back(std::move(field));
    out->end_offset = offset_;
    out->next_line = line_;
    return true;
  };
  for (;;) {
    int c = Take();
    if (c < 0) {
      if (quoted) out->error = "a quoted field is not closed before the end of the file";
      return end_record();
    }
    if (++bytes > kMaxCsvRecordBytes && out->error.empty()) {
      out->error = "record longer than 1 MiB";
      field.clear();
      out->fields.clear();
    }
    if (quoted) {
      if (c == '"') {
        if (Peek() == '"') {
          Take();
          if (out->error.empty()) field.push_back('"');
        } else {
          quoted = false;
        }
        continue;
      }
      // A line break inside quotes is data, kept as it was written (CRLF stays CRLF).
      if (c == '\r' || c == '\n') {
        bool crlf = c == '\r' && Peek() == '\n';
        SkipLineBreak(c);
        if (out->error.empty()) field.append(crlf ? "\r\n" : std::string(1, static_cast<char>(c)));
        continue;
      }
      if (out->error.empty()) field.push_back(static_cast<char>(c));
      continue;
    }
    if (c == delimiter_) {
      if (out->error.empty()) out->fields.push_back(std::move(field));
      field.clear();
      was_quoted = false;
      continue;
    }
    if (c == '\r' || c == '\n') {
      SkipLineBreak(c);
      return end_record();
    }
    if (c == '"' && field.empty() && !was_quoted) {
      quoted = was_quoted = true;
      continue;
    }
    if (out->error.empty()) field.push_back(static_cast<char>(c));
  }
}

char DetectCsvDelimiter(std::string_view head) {
  std::array<size_t, 3> counts{};
  const char kCandidates[] = {',', ';', '\t'};
  bool quoted = false;
  for (char c : head) {
    if (c == '"') quoted = !quoted;
    if (quoted) continue;
    if (c == '\n' || c == '\r') break;
    for (size_t i = 0; i < counts.size(); ++i)
      if (c == kCandidates[i]) ++counts[i];
  }
  size_t best = 0;
  for (size_t i = 1; i < counts.size(); ++i)
    if (counts[i] > counts[best]) best = i;
  return kCandidates[best];
}

bool IsValidUtf8(std::string_view s, bool complete, size_t* tail) {
  if (tail) *tail = 0;
  for (size_t i = 0; i < s.size();) {
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    size_t n = Utf8Sequence(s, i);
    if (n == 0) {
      // A sequence cut short by the end of a chunk is checked again with the next one.
      if (complete || s.size() - i >= 4) return false;
      if (tail) *tail = s.size() - i;
      return true;
    }
    i += n;
  }
  return true;
}

}  // namespace crmd::crm
