#pragma once
// A streaming reader of RFC 4180 CSV for imports: records one at a time from a byte
// source, never the whole file in memory. Quoted fields may hold the delimiter, doubled
// quotes and line breaks; CRLF, LF and a lone CR end a record; a UTF-8 byte order mark at
// the very start is skipped. Each record carries the physical line it starts on (the first
// line is 1) and the byte offsets where it starts and ends, so that a reader can be
// started again at a record's end (Resume) and number the lines as the first one did.
//
// Lenient where RFC 4180 is silent and a spreadsheet is forgiving: a quote inside an
// unquoted field is kept as text, text after a closing quote is appended. A quoted field
// still open at the end of the input is an error record (`error` set), as is a record
// longer than kMaxCsvRecordBytes (its bytes are skipped to the next line break).
// Not thread-safe: one reader per thread.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace crmd::crm {

inline constexpr size_t kMaxCsvRecordBytes = 1 << 20;

// Fills `buf` with up to `n` bytes and answers how many (0 at the end of the input), or
// kByteSourceFailed when the input cannot be read to its end (an upload cut short).
using ByteSource = std::function<size_t(char* buf, size_t n)>;
inline constexpr size_t kByteSourceFailed = static_cast<size_t>(-1);

struct CsvRecord {
  std::vector<std::string> fields;
  int64_t line = 0;          // physical line where the record starts
  int64_t begin_offset = 0;  // byte offset of its first byte
  int64_t end_offset = 0;    // byte offset just past its line break (or the input's end)
  int64_t next_line = 0;     // the physical line of the next record
  std::string error;         // non-empty: the record could not be read (reason)
};

struct CsvReaderOptions {
  char delimiter = ',';
  int64_t start_offset = 0;  // where `source` starts in the file
  int64_t start_line = 1;    // the physical line at start_offset
};

class CsvReader {
 public:
  CsvReader(ByteSource source, CsvReaderOptions options);
  CsvReader(const CsvReader&) = delete;
  CsvReader& operator=(const CsvReader&) = delete;

  // The next record; false at the end of the input. Blank lines are passed over.
  bool Next(CsvRecord* out);

 private:
  bool Fill();  // more bytes into buf_; false at the end
  int Peek();   // the next byte or -1, without taking it
  int Take();   // the next byte or -1
  void SkipLineBreak(int c);

  ByteSource source_;
  const char delimiter_;
  std::string buf_;
  size_t pos_ = 0;
  bool eof_ = false;
  int64_t offset_;  // file offset of buf_[pos_]
  int64_t line_;
};

// The delimiter of a file from its first bytes: whichever of ',', ';' and tab occurs most
// often outside quotes on the first line (',' when none does).
char DetectCsvDelimiter(std::string_view head);

// Whether `s` is well-formed UTF-8 (RFC 3629: no overlongs, surrogates or values past
// U+10FFFF). `complete` false: a sequence cut short at the very end is accepted (a chunk
// of a longer input); answers the number of bytes of such a tail through `tail`.
bool IsValidUtf8(std::string_view s, bool complete = true, size_t* tail = nullptr);

}  // namespace crmd::crm
