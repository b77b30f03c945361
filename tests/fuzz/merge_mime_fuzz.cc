// Merge tags (src/mail/merge.h) and MIME building (message.h): the input's first line is
// a template (subject), the rest the HTML body. Parsing refuses or accepts; rendering
// never fails; a rendered message keeps CRLF line endings and no header carries a bare
// CR or LF from the input (header injection).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "src/core/clock.h"
#include "src/mail/merge.h"
#include "src/mail/message.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static crmd::SystemClock clock;
  std::string_view in(reinterpret_cast<const char*>(data), size);
  auto nl = in.find('\n');
  std::string_view subject_src = in.substr(0, nl);
  std::string_view html_src = nl == std::string_view::npos ? std::string_view() : in.substr(nl + 1);

  crmd::mail::MergeValues values{{"first_name", std::string(html_src.substr(0, 16))},
                                 {"email", "ada@example.com"},
                                 {"custom.plan", "<b>\"pro\"</b>"}};
  std::string subject(subject_src), html(html_src);
  if (auto t = crmd::mail::MergeTemplate::Parse(subject_src)) subject = t->RenderText(values);
  if (auto t = crmd::mail::MergeTemplate::Parse(html_src)) html = t->RenderHtml(values);
  (void)crmd::mail::HtmlToText(html);
  (void)crmd::mail::QuotedPrintable(html);
  (void)crmd::mail::EncodeHeaderText(subject, 9);

  crmd::mail::Message m;
  m.from = {std::string(subject_src.substr(0, 24)), "news@example.com"};
  m.to = {"Ada", "ada@example.com"};
  m.subject = subject;
  m.html = html.empty() ? "<p>x</p>" : html;
  m.preheader = std::string(subject_src.substr(0, 40));
  m.message_id = "<1.2@example.com>";
  m.list_unsubscribe = {"https://crm.example.com/u/abc"};
  m.one_click_unsubscribe = true;
  auto rendered = crmd::mail::RenderMessage(m, clock);
  if (!rendered) return 0;
  const std::string& msg = *rendered;
  auto end = msg.find("\r\n\r\n");
  if (end == std::string::npos) std::abort();
  for (size_t i = 0; i < end; ++i) {
    if (msg[i] == '\n' && (i == 0 || msg[i - 1] != '\r')) std::abort();  // bare LF in the header
    if (msg[i] == '\r' && msg[i + 1] != '\n') std::abort();              // bare CR in the header
    // A header line starting without whitespace must be a "Name:" field (no injected line).
    if (msg[i] == '\n' && i + 1 < end && msg[i + 1] != ' ' && msg[i + 1] != '\t') {
      auto colon = msg.find(':', i + 1);
      auto eol = msg.find("\r\n", i + 1);
      if (colon == std::string::npos || colon > eol) std::abort();
    }
  }
  return 0;
}
