#pragma once
// Streamed request content (Request::body_stream) for src/http/server.cc: the handler
// reads the content from the connection as it arrives, a piece at a time, instead of the
// listener holding all of it first. Beast/Asio, so only src/http includes it.
#include <algorithm>
#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <chrono>
#include <cstring>
#include <memory>

#include "src/core/http_types.h"
#include "src/core/worker_pool.h"
#include "src/http/connection_deadline.h"

namespace crmd::http {

// One request's content of `length` bytes, read for the handler while the connection's
// coroutine waits for the handler's answer: the bytes already in `buffer` first, then
// from `stream`, each read started on the connection's executor (the only one that
// touches the stream) and awaited by the handler's thread (a fiber of the worker pool
// yields its thread meanwhile). Each read has read_timeout_s, as a whole body has.
//
// Lives in the connection coroutine's frame; Close() (after the handler answered) makes
// any later Read fail rather than touch a finished request.
template <typename Stream>
class StreamedContent {
 public:
  StreamedContent(Stream& stream, boost::beast::flat_buffer& buffer, ConnectionDeadline& deadline,
                  std::chrono::seconds timeout, uint64_t length)
      : state_(std::make_shared<State>(stream, buffer, deadline, timeout, length)) {}
  ~StreamedContent() { Close(); }
  StreamedContent(const StreamedContent&) = delete;
  StreamedContent& operator=(const StreamedContent&) = delete;

  std::shared_ptr<BodyStream> Source() {
    auto source = std::make_shared<BodyStream>();
    source->length = state_->remaining;
    source->read = [state = state_](char* buf, size_t n) { return state->Read(buf, n); };
    return source;
  }
  void Close() { state_->open.store(false); }
  // Every byte was read: the connection may carry the next request.
  bool Complete() const { return state_->remaining == 0 && !state_->failed; }

 private:
  struct State {
    State(Stream& s, boost::beast::flat_buffer& b, ConnectionDeadline& d, std::chrono::seconds t,
          uint64_t length)
        : stream(s), buffer(b), deadline(d), timeout(t), remaining(length) {}

    size_t Read(char* buf, size_t n) {
      if (!open.load() || failed) return BodyStream::kFailed;
      if (remaining == 0 || n == 0) return 0;
      n = static_cast<size_t>(std::min<uint64_t>(n, remaining));
      if (buffer.size()) {
        size_t k = std::min(n, buffer.size());
        std::memcpy(buf, buffer.data().data(), k);
        buffer.consume(k);
        remaining -= k;
        return k;
      }
      boost::system::error_code error;
      size_t got = 0;
      Wakeup done;
      boost::asio::post(stream.get_executor(), [&] {
        deadline.Set(timeout);
        stream.async_read_some(boost::asio::buffer(buf, n),
                               [&](const boost::system::error_code& ec, size_t k) {
                                 error = ec;
                                 got = k;
                                 done.Notify();
                               });
      });
      {
        BlockingRegion waiting;
        done.Wait();
      }
      if (error || got == 0) {
        failed = true;
        return BodyStream::kFailed;
      }
      remaining -= got;
      return got;
    }

    Stream& stream;
    boost::beast::flat_buffer& buffer;
    ConnectionDeadline& deadline;
    const std::chrono::seconds timeout;
    uint64_t remaining;
    bool failed = false;
    std::atomic<bool> open{true};
  };
  std::shared_ptr<State> state_;
};

}  // namespace crmd::http
