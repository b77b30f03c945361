// The import's CSV reader: RFC 4180 records, physical line numbers, resuming at an offset.
#include "src/crm/csv_reader.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

namespace crmd::crm {
namespace {

// A source over `text` from `from`, handing out at most `step` bytes per call.
ByteSource TextSource(const std::string& text, size_t from = 0, size_t step = 1 << 20) {
  auto pos = std::make_shared<size_t>(from);
  return [text, pos, step](char* buf, size_t n) {
    size_t k = std::min({n, step, text.size() - *pos});
    std::memcpy(buf, text.data() + *pos, k);
    *pos += k;
    return k;
  };
}

std::vector<CsvRecord> ReadAll(const std::string& text, CsvReaderOptions o = {},
                               size_t step = 1 << 20) {
  CsvReader r(TextSource(text, static_cast<size_t>(o.start_offset), step), o);
  std::vector<CsvRecord> out;
  CsvRecord rec;
  while (r.Next(&rec)) out.push_back(rec);
  return out;
}

const std::string kTricky =
    "email,note\r\n"
    "a@example.com,\"one, \"\"two\"\"\r\nthree\"\r\n"
    "\r\n"
    "b@example.com,plain\n"
    "c@example.com,\"\"\r"
    "d@example.com,last";

TEST(CsvReader, QuotedFieldsHoldDelimitersQuotesAndLineBreaks_Rfc4180_2) {
  auto recs = ReadAll(kTricky);
  ASSERT_EQ(recs.size(), 5u);
  EXPECT_EQ(recs[0].fields, (std::vector<std::string>{"email", "note"}));
  EXPECT_EQ(recs[1].fields, (std::vector<std::string>{"a@example.com", "one, \"two\"\r\nthree"}));
  EXPECT_EQ(recs[2].fields, (std::vector<std::string>{"b@example.com", "plain"}));
  EXPECT_EQ(recs[3].fields, (std::vector<std::string>{"c@example.com", ""}));
  EXPECT_EQ(recs[4].fields, (std::vector<std::string>{"d@example.com", "last"}));
  for (const auto& r : recs) EXPECT_TRUE(r.error.empty()) << r.error;
}

TEST(CsvReader, NumbersPhysicalLinesWhereEachRecordStarts) {
  auto recs = ReadAll(kTricky);
  ASSERT_EQ(recs.size(), 5u);
  // Line 3 is the quoted field's second line, line 4 blank, CRLF, LF and CR each end one.
  EXPECT_EQ(recs[0].line, 1);
  EXPECT_EQ(recs[1].line, 2);
  EXPECT_EQ(recs[2].line, 5);
  EXPECT_EQ(recs[3].line, 6);
  EXPECT_EQ(recs[4].line, 7);
}

TEST(CsvReader, ReadsTheSameOneByteAtATime) {
  auto whole = ReadAll(kTricky);
  auto bytes = ReadAll(kTricky, {}, 1);
  ASSERT_EQ(whole.size(), bytes.size());
  for (size_t i = 0; i < whole.size(); ++i) {
    EXPECT_EQ(whole[i].fields, bytes[i].fields);
    EXPECT_EQ(whole[i].line, bytes[i].line);
    EXPECT_EQ(whole[i].end_offset, bytes[i].end_offset);
  }
}

TEST(CsvReader, ResumesAtARecordsEndWithTheSameRecordsAndLines) {
  auto whole = ReadAll(kTricky);
  for (size_t k = 0; k + 1 < whole.size(); ++k) {
    auto rest =
        ReadAll(kTricky, {.start_offset = whole[k].end_offset, .start_line = whole[k].next_line});
    ASSERT_EQ(rest.size(), whole.size() - k - 1) << "after record " << k;
    for (size_t i = 0; i < rest.size(); ++i) {
      EXPECT_EQ(rest[i].fields, whole[k + 1 + i].fields);
      EXPECT_EQ(rest[i].line, whole[k + 1 + i].line);
    }
  }
}

TEST(CsvReader, SkipsAByteOrderMarkAtTheStartOnly) {
  auto recs = ReadAll(
      "\xEF\xBB\xBF"
      "email\nx@example.com\n");
  ASSERT_EQ(recs.size(), 2u);
  EXPECT_EQ(recs[0].fields[0], "email");
  EXPECT_EQ(recs[0].line, 1);
  EXPECT_EQ(recs[0].begin_offset, 3);
}

TEST(CsvReader, SkipsAByteOrderMarkHandedOverOneByteAtATime) {
  auto recs = ReadAll(
      "\xEF\xBB\xBF"
      "email\nx@example.com\n",
      {}, 1);
  ASSERT_EQ(recs.size(), 2u);
  EXPECT_EQ(recs[0].fields[0], "email");
  EXPECT_EQ(recs[1].line, 2);
}

TEST(CsvReader, SemicolonAndTabDelimiters) {
  auto semi = ReadAll("email;name\nx@example.com;\"A;B\"\n", {.delimiter = ';'});
  ASSERT_EQ(semi.size(), 2u);
  EXPECT_EQ(semi[1].fields, (std::vector<std::string>{"x@example.com", "A;B"}));
  auto tab = ReadAll("email\tname\nx@example.com\tA,B\n", {.delimiter = '\t'});
  ASSERT_EQ(tab.size(), 2u);
  EXPECT_EQ(tab[1].fields, (std::vector<std::string>{"x@example.com", "A,B"}));
}

TEST(CsvReader, AnUnclosedQuoteAtTheEndIsAnErrorRecord) {
  auto recs = ReadAll("email,note\nx@example.com,\"open\nstill open\n");
  ASSERT_EQ(recs.size(), 2u);
  EXPECT_NE(recs[1].error.find("not closed"), std::string::npos);
  EXPECT_EQ(recs[1].line, 2);
}

TEST(CsvReader, AnOverlongRecordIsAnErrorAndTheNextRecordIsRead) {
  std::string text = "email\n" + std::string(kMaxCsvRecordBytes + 10, 'a') + "\nz@example.com\n";
  auto recs = ReadAll(text);
  ASSERT_EQ(recs.size(), 3u);
  EXPECT_FALSE(recs[1].error.empty());
  EXPECT_EQ(recs[2].fields[0], "z@example.com");
  EXPECT_EQ(recs[2].line, 3);
}

TEST(CsvDelimiter, DetectsFromTheHeaderLineOutsideQuotes) {
  EXPECT_EQ(DetectCsvDelimiter("email,first_name,last_name\n"), ',');
  EXPECT_EQ(DetectCsvDelimiter("email;first_name;\"a,b,c,d\"\n"), ';');
  EXPECT_EQ(DetectCsvDelimiter("email\tfirst_name\nx,y,z,w,v\n"), '\t');
  EXPECT_EQ(DetectCsvDelimiter("email\n"), ',');
}

TEST(Utf8Check, RefusesMalformedAndAcceptsACutTailInAChunk_Rfc3629) {
  EXPECT_TRUE(IsValidUtf8("Zoë, 東京, 😀"));
  EXPECT_FALSE(IsValidUtf8("\xC0\x80"));      // overlong NUL
  EXPECT_FALSE(IsValidUtf8("\xED\xA0\x80"));  // a surrogate
  EXPECT_FALSE(IsValidUtf8("caf\xE9"));       // Latin-1
  size_t tail = 0;
  EXPECT_TRUE(IsValidUtf8("ab\xE6\x9D", false, &tail));
  EXPECT_EQ(tail, 2u);
  EXPECT_FALSE(IsValidUtf8("ab\xE6\x9D", true));
}

}  // namespace
}  // namespace crmd::crm
