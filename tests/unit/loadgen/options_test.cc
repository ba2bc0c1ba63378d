#include "loadgen/options.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace limits::loadgen {
namespace {

using ::testing::HasSubstr;
using Flags = std::map<std::string, std::string>;

std::string Error(const Flags& flags, const config::Config* config = nullptr) {
  Result<LoadgenOptions> o = ParseLoadgenOptions(flags, config);
  EXPECT_FALSE(o.ok());
  return o.ok() ? "" : o.status().message();
}

TEST(LoadgenOptionsTest, GrpcAloneDrivesExceedsLimitsWithDefaults) {
  Result<LoadgenOptions> o = ParseLoadgenOptions({{"grpc", "127.0.0.1:9095"}}, nullptr);
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_FALSE(o->produce);
  ASSERT_TRUE(o->exceeds);
  EXPECT_EQ(o->exceeds->target, "127.0.0.1:9095");
  EXPECT_EQ(o->exceeds->rate, 100);
  EXPECT_EQ(o->exceeds->streams_per_request, 100u);
  EXPECT_EQ(o->exceeds->new_fraction, 0.1);
  EXPECT_EQ(o->exceeds->concurrency, 4u);
  EXPECT_EQ(o->exceeds->update_rate, 0);
  EXPECT_FALSE(o->duration);
  EXPECT_EQ(o->universe.tenants, 1u);
  EXPECT_EQ(o->universe.streams_per_tenant, 1000u);
}

TEST(LoadgenOptionsTest, EveryValueParsed) {
  Result<LoadgenOptions> o = ParseLoadgenOptions(
      {{"brokers", "b:9092"}, {"grpc", "n:9095"}, {"duration", "1m30s"}, {"tenants", "100"}, {"tenant-prefix", "t"},
       {"streams", "10000"}, {"policies", ",gold"}, {"bytes", "2048"}, {"seed", "42"}, {"topic", "x"},
       {"partitions", "8"}, {"produce-rate", "0"}, {"records", "4000000"}, {"zone", "z"}, {"spread", "90m"},
       {"batch-size", "1MiB"}, {"linger", "2s"}, {"compression", "zstd"}, {"request-rate", "12.5"},
       {"streams-per-request", "500"}, {"new-fraction", "0.01"}, {"concurrency", "16"}, {"update-rate", "5"},
       {"timeout", "250ms"}},
      nullptr);
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ(*o->duration, std::chrono::seconds(90));
  EXPECT_EQ(o->universe.tenants, 100u);
  EXPECT_EQ(o->universe.tenant_prefix, "t");
  EXPECT_EQ(o->universe.policies, (std::vector<std::string>{"", "gold"}));
  EXPECT_EQ(o->universe.bytes_per_stream, 2048u);
  EXPECT_EQ(o->universe.seed, 42u);
  const ProduceOptions& p = *o->produce;
  EXPECT_EQ(p.brokers, "b:9092");
  EXPECT_EQ(p.topic, "x");
  EXPECT_EQ(p.partitions, 8);
  EXPECT_EQ(p.rate, 0);
  EXPECT_EQ(p.records, 4'000'000u);
  EXPECT_EQ(p.zone, "z");
  EXPECT_EQ(p.spread, std::chrono::minutes(90));
  EXPECT_EQ(*p.batch_size, 1u << 20);
  EXPECT_EQ(*p.linger, std::chrono::seconds(2));
  EXPECT_EQ(*p.compression, "zstd");
  const ExceedsOptions& e = *o->exceeds;
  EXPECT_EQ(e.rate, 12.5);
  EXPECT_EQ(e.streams_per_request, 500u);
  EXPECT_EQ(e.new_fraction, 0.01);
  EXPECT_EQ(e.concurrency, 16u);
  EXPECT_EQ(e.update_rate, 5);
  EXPECT_EQ(e.timeout, std::chrono::milliseconds(250));
}

TEST(LoadgenOptionsTest, BadValuesNameTheFlag) {
  const Flags g = {{"grpc", "n:1"}};
  auto with = [&](std::string k, std::string v) {
    Flags f = g;
    f[k] = v;
    return Error(f);
  };
  EXPECT_THAT(with("tenants", "0"), HasSubstr("--tenants: expected a whole number 1..1048576, got \"0\""));
  EXPECT_THAT(with("tenants", "1e3"), HasSubstr("--tenants"));
  EXPECT_THAT(with("streams", "-5"), HasSubstr("--streams"));
  EXPECT_THAT(with("streams-per-request", "100001"), HasSubstr("--streams-per-request"));
  EXPECT_THAT(with("new-fraction", "1.5"), HasSubstr("--new-fraction: expected a fraction 0..1"));
  EXPECT_THAT(with("new-fraction", "nan"), HasSubstr("--new-fraction"));
  EXPECT_THAT(with("request-rate", "fast"), HasSubstr("--request-rate"));
  EXPECT_THAT(with("concurrency", ""), HasSubstr("--concurrency"));
  EXPECT_THAT(with("duration", "10"), HasSubstr("--duration: expected a positive duration"));
  EXPECT_THAT(with("duration", "0s"), HasSubstr("--duration"));
  EXPECT_THAT(with("timeout", "soon"), HasSubstr("--timeout"));
  EXPECT_THAT(with("mode", "all"), HasSubstr("--mode: expected produce, exceeds or both"));
  const Flags b = {{"brokers", "b:1"}};
  auto produce = [&](std::string k, std::string v) {
    Flags f = b;
    f[k] = v;
    return Error(f);
  };
  EXPECT_THAT(produce("compression", "brotli"), HasSubstr("--compression: expected none, gzip, snappy, lz4 or zstd"));
  EXPECT_THAT(produce("batch-size", "big"), HasSubstr("--batch-size"));
  EXPECT_THAT(produce("linger", "1h"), HasSubstr("--linger: expected at most 15m"));
  EXPECT_THAT(produce("partitions", "0"), HasSubstr("--partitions"));
  EXPECT_THAT(produce("topic", ""), HasSubstr("--topic"));
  EXPECT_THAT(produce("spread", "90m"), HasSubstr("--spread: needs --records or --duration"));
}

TEST(LoadgenOptionsTest, ModesAndTheirFlags) {
  EXPECT_THAT(Error({}), HasSubstr("nothing to do: give --brokers"));
  EXPECT_THAT(Error({{"tenants", "3"}}), HasSubstr("nothing to do"));
  EXPECT_THAT(Error({{"grpc", "n:1"}, {"produce-rate", "5"}}), HasSubstr("--produce-rate: only for the produce load"));
  EXPECT_THAT(Error({{"brokers", "b:1"}, {"new-fraction", "0.5"}}),
              HasSubstr("--new-fraction: only for the ExceedsLimits load"));
  EXPECT_THAT(Error({{"mode", "both"}, {"grpc", "n:1"}}), HasSubstr("needs --brokers"));
  EXPECT_THAT(Error({{"mode", "exceeds"}, {"brokers", "b:1"}, {"grpc", "n:1"}}),
              HasSubstr("--brokers: --mode exceeds"));
  EXPECT_THAT(Error({{"brokers", ""}}), HasSubstr("--brokers: the produce load needs the brokers"));
  Result<LoadgenOptions> both = ParseLoadgenOptions({{"brokers", "b:1"}, {"grpc", "n:1"}}, nullptr);
  ASSERT_TRUE(both.ok());
  EXPECT_TRUE(both->produce && both->exceeds);
}

TEST(LoadgenOptionsTest, TheNodesConfigurationSuppliesKafkaAndGrpc) {
  config::Config c;
  c.kafka.brokers = "kafka:9092";
  c.kafka.topic = "limits";
  c.kafka.num_partitions = 16;
  c.kafka.properties = {{"security.protocol", "SASL_SSL"}};
  c.kafka.producer_properties = {{"linger.ms", "7"}};
  c.server.grpc_listen = "0.0.0.0:9999";
  Result<LoadgenOptions> o = ParseLoadgenOptions({{"mode", "both"}}, &c);
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ(o->produce->brokers, "kafka:9092");
  EXPECT_EQ(o->produce->topic, "limits");
  EXPECT_EQ(o->produce->partitions, 16);
  EXPECT_EQ(o->produce->shared_properties.at("security.protocol"), "SASL_SSL");
  EXPECT_EQ(o->produce->producer_properties.at("linger.ms"), "7");
  EXPECT_EQ(o->exceeds->target, "127.0.0.1:9999");
  // Flags win over the configuration.
  o = ParseLoadgenOptions({{"brokers", "other:1"}, {"topic", "t2"}, {"partitions", "4"}}, &c);
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->produce->brokers, "other:1");
  EXPECT_EQ(o->produce->topic, "t2");
  EXPECT_EQ(o->produce->partitions, 4);
  // The embedded default has no brokers to take.
  c.kafka.brokers = "";
  EXPECT_THAT(Error({{"mode", "produce"}}, &c), HasSubstr("--brokers"));
}

TEST(LoadgenOptionsTest, DialAddressOfAListenAddress) {
  EXPECT_EQ(DialAddressOf("0.0.0.0:9095"), "127.0.0.1:9095");
  EXPECT_EQ(DialAddressOf(":9095"), "127.0.0.1:9095");
  EXPECT_EQ(DialAddressOf("[::]:9095"), "127.0.0.1:9095");
  EXPECT_EQ(DialAddressOf("10.0.0.7:9095"), "10.0.0.7:9095");
}

TEST(LoadgenOptionsTest, FlagListCoversEveryOption) {
  const auto& flags = LoadgenFlags();
  for (const char* f : {"mode", "duration", "brokers", "grpc", "spread", "update-rate", "timeout", "compression"}) {
    EXPECT_NE(std::find(flags.begin(), flags.end(), f), flags.end()) << f;
  }
  EXPECT_EQ(flags.size(), 25u);
}

}  // namespace
}  // namespace limits::loadgen
