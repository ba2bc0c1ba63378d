// Feeds: any bytes as what an HTTP client sends to the node's one HTTP server, through the
// steps HttpServer takes: FindHeadEnd (also as the bytes trickle in, split where the input
// says), ParseRequestHead, SplitTarget, DecodePath; and the bytes as a target by themselves.
// Checks: the head's end is found at the same place whether searched at once or from an
// earlier call's offset, and ends in LF LF or LF CR LF; a parsed target is a path starting
// with "/", with no dot segment left, that RemoveDotSegments leaves as it is; a decoded path
// holds no NUL, CR or LF and is valid UTF-8.
#include <cstdint>
#include <string>

#include "common/utf8.h"
#include "fuzz_check.h"
#include "http/http_server.h"
#include "http/request_head.h"

namespace http = limits::http;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  limits::fuzz::QuietLogs();
  return 0;
}

namespace {

bool HasDotSegment(std::string_view path) {
  for (size_t start = 0; start < path.size();) {
    const size_t slash = path.find('/', start + 1);
    const std::string_view seg = path.substr(start + 1, slash == std::string_view::npos ? std::string_view::npos
                                                                                       : slash - start - 1);
    if (seg == "." || seg == "..") return true;
    if (slash == std::string_view::npos) break;
    start = slash;
  }
  return false;
}

void CheckTarget(std::string_view raw) {
  limits::Result<http::Target> t = http::SplitTarget(raw);
  if (!t.ok()) return;
  FUZZ_CHECK(!t->path.empty() && t->path.front() == '/');
  FUZZ_CHECK(!HasDotSegment(t->path));
  FUZZ_CHECK(http::RemoveDotSegments(t->path) == t->path);
  limits::Result<std::string> path = http::DecodePath(t->path);
  if (!path.ok()) return;
  FUZZ_CHECK(path->find_first_of(std::string_view("\0\r\n", 3)) == std::string::npos);
  FUZZ_CHECK(limits::IsValidUtf8(*path));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in = limits::fuzz::AsView(data, size);
  const size_t end = http::FindHeadEnd(in);
  FUZZ_CHECK(end <= in.size());
  if (end > 0) {
    const std::string_view head = in.substr(0, end);
    FUZZ_CHECK(head.ends_with("\n\n") || head.ends_with("\n\r\n"));
    FUZZ_CHECK(http::FindHeadEnd(head.substr(0, end - 1)) == 0);
  }
  // As received in two reads: the first (shorter than the end) finds nothing, the second
  // searches from there and finds the same end.
  const size_t split = size == 0 ? 0 : static_cast<uint8_t>(in[0]) % (size + 1);
  if (end == 0 || split < end) {
    if (http::FindHeadEnd(in.substr(0, split)) == 0) FUZZ_CHECK(http::FindHeadEnd(in, split) == end);
  }

  if (end > 0) {
    limits::Result<http::RequestLine> line = http::ParseRequestHead(in.substr(0, end));
    if (line.ok()) {
      FUZZ_CHECK(!line->method.empty() && !line->target.empty());
      CheckTarget(line->target);
    }
  }
  CheckTarget(in);
  return 0;
}
