// rpc/limits_server.proto must read exactly what proto/limits.proto writes (issue 8 item 23).
#include <gtest/gtest.h>

#include "proto/limits.pb.h"
#include "rpc/limits_server.pb.h"

namespace limits::rpc {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;

// Same fields, numbers, labels and types, except that the server reads strings as bytes.
void ExpectWireCompatible(const Descriptor* client, const Descriptor* server) {
  ASSERT_EQ(client->field_count(), server->field_count()) << client->full_name();
  for (int i = 0; i < client->field_count(); ++i) {
    const FieldDescriptor* c = client->field(i);
    const FieldDescriptor* s = server->FindFieldByNumber(c->number());
    ASSERT_NE(s, nullptr) << c->full_name();
    EXPECT_EQ(s->name(), c->name()) << c->full_name();
    EXPECT_EQ(s->is_repeated(), c->is_repeated()) << c->full_name();
    if (c->type() == FieldDescriptor::TYPE_STRING) {
      EXPECT_EQ(s->type(), FieldDescriptor::TYPE_BYTES) << c->full_name() << ": the server reads strings as bytes";
    } else {
      EXPECT_EQ(s->type(), c->type()) << c->full_name();
    }
    if (c->type() == FieldDescriptor::TYPE_MESSAGE) ExpectWireCompatible(c->message_type(), s->message_type());
  }
}

TEST(WireTest, ServerRequestsAreWireCompatibleWithLokisMessages) {
  ExpectWireCompatible(proto::ExceedsLimitsRequest::descriptor(), proto::server::ExceedsLimitsRequest::descriptor());
  ExpectWireCompatible(proto::UpdateRatesRequest::descriptor(), proto::server::UpdateRatesRequest::descriptor());
  ExpectWireCompatible(proto::GetAssignedPartitionsRequest::descriptor(),
                       proto::server::GetAssignedPartitionsRequest::descriptor());
  // And the bytes round-trip.
  proto::ExceedsLimitsRequest r;
  r.set_tenant("t\xC3\xA9");
  auto* s = r.add_streams();
  s->set_streamhash(42);
  s->set_totalsize(7);
  s->set_ingestionpolicy("gold");
  proto::server::ExceedsLimitsRequest read;
  ASSERT_TRUE(read.ParseFromString(r.SerializeAsString()));
  EXPECT_EQ(read.tenant(), "t\xC3\xA9");
  EXPECT_EQ(read.streams(0).streamhash(), 42u);
  EXPECT_EQ(read.streams(0).totalsize(), 7u);
  EXPECT_EQ(read.streams(0).ingestionpolicy(), "gold");
}

}  // namespace
}  // namespace limits::rpc
