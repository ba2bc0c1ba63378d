// Feeds: any bytes as the body of an ExceedsLimits or UpdateRates request (what a gRPC client
// sends; the server reads it with rpc::StreamList::Parse, then ForEachSlice).
// Checks: the verdict, the tenant and every stream (hash, size, policy, in order) agree with
// protobuf's parser of rpc/limits_server.proto's ExceedsLimitsRequest and UpdateRatesRequest;
// size() is the stream count; slices hold at most `slice` streams, and returning false stops
// after the first; tenant and policies are views inside the body.
#include <cstdint>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "fuzz_check.h"
#include "rpc/limits_server.pb.h"
#include "rpc/stream_list.h"

using limits::fuzz::Within;
using Streams = std::vector<std::tuple<uint64_t, uint64_t, std::string>>;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  limits::fuzz::QuietLogs();
  return 0;
}

template <typename Request>
bool Theirs(std::string_view body, std::string* tenant, Streams* streams) {
  Request r;
  if (!r.ParseFromArray(body.data(), static_cast<int>(body.size()))) return false;
  *tenant = r.tenant();
  for (const auto& s : r.streams()) streams->emplace_back(s.streamhash(), s.totalsize(), s.ingestionpolicy());
  return true;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view body = limits::fuzz::AsView(data, size);
  limits::rpc::StreamList list;
  const bool ok = list.Parse(body);

  std::string tenant;
  Streams want;
  const bool want_ok = Theirs<::proto::server::ExceedsLimitsRequest>(body, &tenant, &want);
  std::string tenant2;
  Streams want2;
  FUZZ_CHECK(Theirs<::proto::server::UpdateRatesRequest>(body, &tenant2, &want2) == want_ok);
  FUZZ_CHECK(ok == want_ok);
  if (!ok) return 0;
  FUZZ_CHECK(tenant2 == tenant && want2 == want);

  FUZZ_CHECK(list.tenant() == tenant);
  FUZZ_CHECK(Within(list.tenant(), body));
  FUZZ_CHECK(list.size() == want.size());

  const size_t slice = 1 + size % 5;
  std::vector<limits::StreamUpdate> buffer;
  Streams got;
  list.ForEachSlice(slice, &buffer, [&](std::span<const limits::StreamUpdate> part) {
    FUZZ_CHECK(!part.empty() && part.size() <= slice);
    for (const limits::StreamUpdate& s : part) {
      FUZZ_CHECK(Within(s.policy, body));
      got.emplace_back(s.stream_hash, s.bytes, std::string(s.policy));
    }
    return true;
  });
  FUZZ_CHECK(got == want);

  int calls = 0;
  list.ForEachSlice(slice, &buffer, [&](std::span<const limits::StreamUpdate>) {
    ++calls;
    return false;
  });
  FUZZ_CHECK(calls == (want.empty() ? 0 : 1));
  return 0;
}
