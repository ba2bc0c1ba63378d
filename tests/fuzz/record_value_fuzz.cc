// Feeds: any bytes as a Kafka record value on the metadata topic (a StreamMetadataRecord, as
// Loki's distributors produce it), to kafka::DecodeRecordValue — the consumer decodes every
// record it replays, whoever produced it.
// Checks: the verdict and every field agree with protobuf's parser of limits.proto's
// StreamMetadataRecord (tenant and metadata required, strings valid UTF-8); the views lie
// inside the input; EncodeRecordValue of the decoded fields decodes to the same fields.
#include <cstdint>
#include <string>

#include "fuzz_check.h"
#include "kafka/record_codec.h"
#include "proto/limits.pb.h"

using limits::fuzz::Within;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  limits::fuzz::QuietLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view value = limits::fuzz::AsView(data, size);
  limits::kafka::RecordView ours;
  const bool ok = limits::kafka::DecodeRecordValue(value, &ours);

  ::proto::StreamMetadataRecord theirs;
  const bool parsed = theirs.ParseFromArray(value.data(), static_cast<int>(value.size()));
  const bool want = parsed && !theirs.tenant().empty() && theirs.has_metadata();
  FUZZ_CHECK(ok == want);
  if (!ok) return 0;

  FUZZ_CHECK(ours.zone == theirs.zone());
  FUZZ_CHECK(ours.tenant == theirs.tenant());
  FUZZ_CHECK(ours.stream_hash == theirs.metadata().streamhash());
  FUZZ_CHECK(ours.total_size == theirs.metadata().totalsize());
  FUZZ_CHECK(ours.policy == theirs.metadata().ingestionpolicy());
  FUZZ_CHECK(Within(ours.zone, value) && Within(ours.tenant, value) && Within(ours.policy, value));
  FUZZ_CHECK(!ours.instance.has_value());

  const std::string again = limits::kafka::EncodeRecordValue(std::string(ours.zone), std::string(ours.tenant),
                                                             ours.stream_hash, ours.total_size, std::string(ours.policy));
  limits::kafka::RecordView round;
  FUZZ_CHECK(limits::kafka::DecodeRecordValue(again, &round));
  FUZZ_CHECK(round.zone == ours.zone && round.tenant == ours.tenant && round.policy == ours.policy);
  FUZZ_CHECK(round.stream_hash == ours.stream_hash && round.total_size == ours.total_size);
  return 0;
}
