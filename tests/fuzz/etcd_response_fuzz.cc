// Feeds: any bytes as etcd's reply to the ring's Range call (etcdserverpb.RangeResponse, the
// message gRPC hands EtcdKv::GetRaw) and to its Txn (TxnResponse). The parsing itself is
// protobuf's generated code; what is ours is what EtcdKv does with the message: more than
// one key/value is an error, the one value is decoded with ring::DecodeDesc (as Get and Cas
// do), its version kept for the CAS.
// Checks: nothing crashes or leaks; a value that decodes round-trips through EncodeDesc.
#include <google/protobuf/util/message_differencer.h>

#include <cstdint>
#include <string>

#include "fuzz_check.h"
#include "proto/etcd_kv.pb.h"
#include "ring/ring_codec.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  limits::fuzz::QuietLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes = limits::fuzz::AsView(data, size);
  etcdserverpb::TxnResponse txn;
  if (txn.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) (void)txn.succeeded();

  etcdserverpb::RangeResponse resp;
  if (!resp.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) return 0;
  if (resp.kvs_size() != 1) return 0;  // none: the key is absent; more: EtcdKv's Internal error
  const etcdserverpb::KeyValue& kv = resp.kvs(0);
  (void)kv.version();
  limits::Result<::ring::Desc> desc = limits::ring::DecodeDesc(kv.value());
  if (!desc.ok()) return 0;  // Get and Cas return kCorruption, Cas never overwrites it
  limits::Result<::ring::Desc> again = limits::ring::DecodeDesc(limits::ring::EncodeDesc(*desc));
  FUZZ_CHECK(again.ok() && google::protobuf::util::MessageDifferencer::Equals(*desc, *again));
  return 0;
}
