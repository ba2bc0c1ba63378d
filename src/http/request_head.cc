#include "http/request_head.h"

#include <algorithm>
#include <cctype>

namespace limits::http {
namespace {

// RFC 9110 5.6.2: the characters of a method or header name.
bool IsTokenChar(char c) {
  if (std::isalnum(static_cast<unsigned char>(c))) return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

bool IsToken(std::string_view s) { return !s.empty() && std::all_of(s.begin(), s.end(), IsTokenChar); }

bool StartsWithIgnoringCase(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(s[i])) != prefix[i]) return false;
  }
  return true;
}

// The next line of `rest` without its CRLF or LF; `rest` moves past it.
std::string_view NextLine(std::string_view& rest) {
  const size_t lf = rest.find('\n');
  std::string_view line = rest.substr(0, lf);
  rest.remove_prefix(lf == std::string_view::npos ? rest.size() : lf + 1);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

void RemoveLastSegment(std::string& out) {
  const size_t slash = out.rfind('/');
  out.erase(slash == std::string::npos ? 0 : slash);
}

}  // namespace

size_t FindHeadEnd(std::string_view received, size_t from) {
  // "\n\r\n" is the longest terminator: a match may start two bytes before `from`.
  for (size_t i = from >= 2 ? from - 2 : 0; i < received.size(); ++i) {
    if (received[i] != '\n') continue;
    if (i + 1 < received.size() && received[i + 1] == '\n') return i + 2;
    if (i + 2 < received.size() && received[i + 1] == '\r' && received[i + 2] == '\n') return i + 3;
  }
  return 0;
}

Result<RequestLine> ParseRequestHead(std::string_view head) {
  if (head.find('\0') != std::string_view::npos) return Status::InvalidArgument("the request head contains a NUL byte");
  std::string_view rest = head;
  const std::string_view line = NextLine(rest);
  const size_t sp1 = line.find(' ');
  const size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos) {
    return Status::InvalidArgument("malformed request line");
  }
  RequestLine out{std::string(line.substr(0, sp1)), std::string(line.substr(sp1 + 1, sp2 - sp1 - 1))};
  const std::string_view version = line.substr(sp2 + 1);
  if (!IsToken(out.method)) return Status::InvalidArgument("malformed method");
  if (out.target.empty() || std::any_of(out.target.begin(), out.target.end(), [](char c) {
        return static_cast<unsigned char>(c) <= 0x20 || c == 0x7f;
      })) {
    return Status::InvalidArgument("malformed request target");
  }
  if (version.size() != 8 || version.substr(0, 7) != "HTTP/1." || !std::isdigit(static_cast<unsigned char>(version[7]))) {
    return Status::InvalidArgument("unsupported HTTP version; use HTTP/1.1");
  }
  while (!rest.empty()) {
    const std::string_view header = NextLine(rest);
    if (header.empty()) break;  // the empty line that ends the head
    if (header.front() == ' ' || header.front() == '\t') return Status::InvalidArgument("folded header line");
    if (header.find('\r') != std::string_view::npos) return Status::InvalidArgument("a bare CR in a header line");
    const size_t colon = header.find(':');
    if (colon == std::string_view::npos || !IsToken(header.substr(0, colon))) {
      return Status::InvalidArgument("malformed header line");
    }
  }
  return out;
}

Result<Target> SplitTarget(std::string_view target) {
  if (const size_t hash = target.find('#'); hash != std::string_view::npos) target = target.substr(0, hash);
  if (target.empty() || target.front() != '/') {
    // Absolute form ("http://host:3100/live"), which HTTP/1.1 servers must accept: the
    // authority is the connection's business, not the route's.
    size_t scheme = 0;
    if (StartsWithIgnoringCase(target, "http://")) scheme = 7;
    else if (StartsWithIgnoringCase(target, "https://")) scheme = 8;
    else return Status::InvalidArgument("the request target is not a path");
    const size_t path = target.find_first_of("/?", scheme);
    target = path == std::string_view::npos ? std::string_view() : target.substr(path);
  }
  Target out;
  const size_t question = target.find('?');
  if (question != std::string_view::npos) out.query = std::string(target.substr(question + 1));
  const std::string_view path = target.substr(0, question);
  out.path = path.empty() ? "/" : RemoveDotSegments(path);
  return out;
}

std::string RemoveDotSegments(std::string_view path) {
  std::string dotted;
  dotted.reserve(path.size());
  for (size_t i = 0; i < path.size(); ++i) {
    if (path[i] == '%' && i + 2 < path.size() && path[i + 1] == '2' && (path[i + 2] == 'e' || path[i + 2] == 'E')) {
      dotted.push_back('.');
      i += 2;
    } else {
      dotted.push_back(path[i]);
    }
  }
  std::string out;
  out.reserve(dotted.size());
  std::string_view in = dotted;
  auto starts = [&in](std::string_view p) { return in.substr(0, p.size()) == p; };
  while (!in.empty()) {
    if (starts("../")) {
      in.remove_prefix(3);
    } else if (starts("./") || starts("/./")) {
      in.remove_prefix(2);
    } else if (in == "/.") {
      in = "/";
    } else if (starts("/../")) {
      in.remove_prefix(3);
      RemoveLastSegment(out);
    } else if (in == "/..") {
      in = "/";
      RemoveLastSegment(out);
    } else if (in == "." || in == "..") {
      in = {};
    } else {
      const size_t next = in.find('/', 1);
      const size_t n = next == std::string_view::npos ? in.size() : next;
      out.append(in.substr(0, n));
      in.remove_prefix(n);
    }
  }
  return out.empty() ? "/" : out;
}

}  // namespace limits::http
