// The request head as HttpServer reads it: where it ends in the bytes received so far, its
// request line, and the request target split into a path and a query. Headers are checked
// for syntax only: no route reads one. Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "common/result.h"

namespace limits::http {

// The length of the head (through the empty line that ends it) at the front of `received`,
// or 0 while it is incomplete. Lines end in CRLF or a bare LF. `from` is how much of
// `received` an earlier call already searched, so a head trickling in is scanned once.
size_t FindHeadEnd(std::string_view received, size_t from = 0);

struct RequestLine {
  std::string method;
  std::string target;  // as sent
};

// The request line of a complete head, with every header line checked: InvalidArgument for a
// malformed request line, an HTTP version other than 1.x, a NUL, a folded or nameless header.
Result<RequestLine> ParseRequestHead(std::string_view head);

struct Target {
  std::string path;   // still percent-encoded (DecodePath), dot segments removed, starts with "/"
  std::string query;  // raw, without "?"
};

// An origin-form ("/a?b") or absolute-form ("http://host/a?b") target; InvalidArgument for
// any other ("*", "host:443", "a/b"). A fragment is dropped.
Result<Target> SplitTarget(std::string_view target);

// RFC 3986 5.2.4 on a path that starts with "/", after "%2E" is read as "." (so an encoded dot
// segment is one too): "/a/./b/../c" -> "/a/c", "/../live" -> "/live".
std::string RemoveDotSegments(std::string_view path);

}  // namespace limits::http
