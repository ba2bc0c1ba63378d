#include "config/load_config.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <set>
#include <sstream>
#include <stdexcept>
#include <toml.hpp>
#include <unordered_map>
#include <vector>

#include <arpa/inet.h>

#include "common/utf8.h"
#include "common/listen_address.h"
#include "common/log.h"
#include "config/loki_overrides.h"
#include "config/units.h"
#include "ring/etcd_endpoint.h"

namespace limits::config {
namespace {

// The arrays of parsed TOML. Debian's toml11 3.7.1 calls back() on an array a dotted key or
// a table header goes through, without checking that it has an element: `k = []` then
// `k.x = 1` or `[k.x]` read before the array (found by tests/fuzz/toml_config_fuzz). An array
// whose back() throws when empty makes that the error it is in TOML.
template <typename T>
class CheckedArray : public std::vector<T> {
 public:
  using std::vector<T>::vector;
  T& back() {
    if (this->empty()) throw std::out_of_range(kExtendsEmptyArray);
    return std::vector<T>::back();
  }
  const T& back() const {
    if (this->empty()) throw std::out_of_range(kExtendsEmptyArray);
    return std::vector<T>::back();
  }

 private:
  static constexpr const char* kExtendsEmptyArray =
      "a dotted key or table header goes through a key that holds an empty array ([]); an array holds no keys";
};

using TomlValue = toml::basic_value<toml::discard_comments, std::unordered_map, CheckedArray>;

// --- paths ------------------------------------------------------------------------------

bool IsBareKey(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
  });
}

std::string JoinPath(const std::string& parent, std::string_view key) {
  std::string seg = IsBareKey(key) ? std::string(key) : "\"" + std::string(key) + "\"";
  return parent.empty() ? seg : parent + "." + seg;
}

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

// --- diagnostics ------------------------------------------------------------------------

struct Diagnostics {
  std::vector<std::string> errors;
  std::set<std::string> from_set;  // paths whose value came from --set, as raw text

  void Add(const std::string& path, const std::string& problem, const TomlValue* where) {
    std::string msg = path + ": " + problem;
    if (from_set.count(path)) {
      msg += " (from --set)";
    } else if (where != nullptr && where->location().file_name() != "unknown file") {
      msg += " (" + where->location().file_name() + ":" + std::to_string(where->location().line()) + ")";
    }
    errors.push_back(std::move(msg));
  }

  Status ToStatus() const {
    if (errors.empty()) return Status::OK();
    std::string joined;
    for (const auto& e : errors) joined += (joined.empty() ? "" : "\n") + e;
    return Status::InvalidArgument(joined);
  }
};

std::string TypeName(const TomlValue& v) {
  switch (v.type()) {
    case toml::value_t::boolean: return "a boolean";
    case toml::value_t::integer: return "an integer";
    case toml::value_t::floating: return "a float";
    case toml::value_t::string: return "a string";
    case toml::value_t::array: return "an array";
    case toml::value_t::table: return "a table";
    default: return "a date/time";
  }
}

// --- reader -----------------------------------------------------------------------------

// Reads one TOML table against a schema: each getter names a known key, leaves the default
// when the key is absent, and records a precise error when it has the wrong type or value.
// Finish() reports every key no getter asked for.
class Reader {
 public:
  Reader(const TomlValue* table, std::string path, Diagnostics* diag)
      : table_(table), path_(std::move(path)), diag_(diag) {}

  void String(std::string_view key, std::string* out) {
    const TomlValue* v = Find(key);
    if (v == nullptr) return;
    if (!v->is_string()) return Wrong(key, v, "a string");
    *out = v->as_string().str;
  }

  // Integers; a value from --set arrives as text and is parsed here.
  void Integer(std::string_view key, int64_t min, int64_t max, int64_t* out) {
    const TomlValue* v = Find(key);
    if (v == nullptr) return;
    int64_t n = 0;
    if (v->is_integer()) {
      n = v->as_integer();
    } else if (!(FromSetText(key, v) && ParseInt(v->as_string().str, &n))) {
      return Wrong(key, v, "an integer");
    }
    if (n < min || n > max) {
      return diag_->Add(Path(key), "must be between " + std::to_string(min) + " and " + std::to_string(max) +
                                       ", got " + std::to_string(n), v);
    }
    *out = n;
  }

  // A boolean; from --set, the text "true" or "false".
  void Bool(std::string_view key, bool* out) {
    const TomlValue* v = Find(key);
    if (v == nullptr) return;
    if (v->is_boolean()) {
      *out = v->as_boolean();
    } else if (FromSetText(key, v) && (v->as_string().str == "true" || v->as_string().str == "false")) {
      *out = v->as_string().str == "true";
    } else {
      Wrong(key, v, "true or false");
    }
  }

  // An array of strings; from --set, comma-separated text ("h1:2379,h2:2379").
  void StringList(std::string_view key, std::vector<std::string>* out) {
    const TomlValue* v = Find(key);
    if (v == nullptr) return;
    std::vector<std::string> items;
    if (FromSetText(key, v)) {
      std::string_view text = v->as_string().str;
      while (!text.empty()) {
        const size_t comma = text.find(',');
        std::string_view item = text.substr(0, comma);
        while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
        while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
        if (!item.empty()) items.emplace_back(item);
        if (comma == std::string_view::npos) break;
        text.remove_prefix(comma + 1);
      }
    } else if (v->is_array()) {
      for (const TomlValue& item : v->as_array()) {
        if (!item.is_string()) return Wrong(key, v, "an array of strings");
        items.push_back(item.as_string().str);
      }
    } else {
      return Wrong(key, v, "an array of strings like [\"etcd-0:2379\"]");
    }
    *out = std::move(items);
  }

  void Count(std::string_view key, uint64_t* out) {
    int64_t n = static_cast<int64_t>(*out);
    Integer(key, 0, std::numeric_limits<int64_t>::max(), &n);
    *out = static_cast<uint64_t>(n);
  }

  void NonNegativeFloat(std::string_view key, double* out) {
    const TomlValue* v = Find(key);
    if (v == nullptr) return;
    double d = 0;
    int64_t n = 0;
    if (v->is_floating()) d = v->as_floating();
    else if (v->is_integer()) d = static_cast<double>(v->as_integer());
    else if (FromSetText(key, v) && ParseInt(v->as_string().str, &n)) d = static_cast<double>(n);
    else if (!(FromSetText(key, v) && ParseFloat(v->as_string().str, &d))) return Wrong(key, v, "a number");
    if (!std::isfinite(d) || d < 0) return diag_->Add(Path(key), "must be a finite number >= 0", v);
    *out = d;
  }

  void Duration(std::string_view key, Millis* out) {
    const TomlValue* v = Find(key);
    if (v == nullptr) return;
    if (!v->is_string()) return Wrong(key, v, "a duration string like \"30s\", \"5m\" or \"2h\"");
    Result<Millis> d = ParseDuration(v->as_string().str);
    if (!d.ok()) return diag_->Add(Path(key), d.status().message(), v);
    if (*d > kMaxDuration) {
      return diag_->Add(Path(key), "must be at most " + FormatDuration(kMaxDuration) +
                                       " (2^32 - 1 seconds, what the node keeps), got \"" + v->as_string().str + "\"",
                        v);
    }
    *out = *d;
  }

  void Size(std::string_view key, uint64_t* out) {
    const TomlValue* v = Find(key);
    if (v == nullptr) return;
    if (v->is_integer() && v->as_integer() >= 0) {
      *out = static_cast<uint64_t>(v->as_integer());  // at most 2^63 - 1: kMaxSizeBytes
      return;
    }
    if (!v->is_string()) return Wrong(key, v, "a size like \"256MiB\"");
    Result<uint64_t> s = ParseSize(v->as_string().str);
    if (!s.ok()) return diag_->Add(Path(key), s.status().message(), v);
    if (*s > kMaxSizeBytes) {
      return diag_->Add(Path(key), "must be at most " + std::to_string(kMaxSizeBytes) + " bytes (2^63 - 1), got \"" +
                                       v->as_string().str + "\"",
                        v);
    }
    *out = *s;
  }

  // A table of scalars, rendered as text (for librdkafka properties).
  void StringMap(std::string_view key, std::map<std::string, std::string>* out) {
    Reader sub = Sub(key);
    if (sub.table_ == nullptr) return;
    for (const auto& [k, v] : sub.table_->as_table()) {
      sub.known_.insert(k);
      if (v.is_string()) (*out)[k] = v.as_string().str;
      else if (v.is_integer()) (*out)[k] = std::to_string(v.as_integer());
      else if (v.is_boolean()) (*out)[k] = v.as_boolean() ? "true" : "false";
      else if (v.is_floating()) (*out)[k] = toml::format(v);
      else sub.Wrong(k, &v, "a string, number or boolean");
    }
  }

  // A table of name -> non-negative integer (policy_max_streams). Replaces *out when present.
  void CountMap(std::string_view key, std::map<std::string, uint64_t>* out) {
    Reader sub = Sub(key);
    if (sub.table_ == nullptr) return;
    std::map<std::string, uint64_t> result;
    for (const auto& [k, v] : sub.table_->as_table()) {
      uint64_t n = 0;
      const size_t errors_before = diag_->errors.size();
      sub.Count(k, &n);
      if (diag_->errors.size() == errors_before) result[k] = n;
    }
    *out = std::move(result);
  }

  // Declares `key` part of the schema without reading it.
  void Known(std::string_view key) { known_.insert(std::string(key)); }

  bool Has(std::string_view key) const {
    return table_ != nullptr && table_->as_table().count(std::string(key)) > 0;
  }

  // The sub-table `key`; a reader of nothing when absent, an error when not a table.
  Reader Sub(std::string_view key) {
    const TomlValue* v = Find(key);
    if (v != nullptr && !v->is_table()) {
      Wrong(key, v, "a table");
      v = nullptr;
    }
    return Reader(v, Path(key), diag_);
  }

  // Calls fn(name, reader) for each sub-table of this table (e.g. each tenant).
  template <typename Fn>
  void ForEachTable(Fn fn) {
    if (table_ == nullptr) return;
    for (const std::string& k : SortedKeys()) {
      Reader sub = Sub(k);
      if (sub.table_ != nullptr) fn(k, sub);
    }
  }

  void Finish() {
    if (table_ == nullptr) return;
    for (const std::string& k : SortedKeys()) {
      if (known_.count(k)) continue;
      std::string problem = "unknown key";
      for (const std::string& candidate : known_) {
        if (EditDistance(k, candidate) <= 2) {
          problem += "; did you mean \"" + candidate + "\"?";
          break;
        }
      }
      diag_->Add(Path(k), problem, &table_->as_table().at(k));
    }
  }

  const std::string& path() const { return path_; }

  // Records a problem with `key` (known to be present) that no getter checks.
  void Problem(std::string_view key, const std::string& problem) {
    const TomlValue* v = Find(key);
    diag_->Add(Path(key), problem, v);
  }

 private:
  const TomlValue* Find(std::string_view key) {
    known_.insert(std::string(key));
    if (table_ == nullptr) return nullptr;
    const auto& t = table_->as_table();
    auto it = t.find(std::string(key));
    return it == t.end() ? nullptr : &it->second;
  }

  std::vector<std::string> SortedKeys() const {
    std::vector<std::string> keys;
    for (const auto& [k, v] : table_->as_table()) keys.push_back(k);
    std::sort(keys.begin(), keys.end());
    return keys;
  }

  std::string Path(std::string_view key) const { return JoinPath(path_, key); }

  bool FromSetText(std::string_view key, const TomlValue* v) const {
    return v->is_string() && diag_->from_set.count(Path(key)) > 0;
  }

  void Wrong(std::string_view key, const TomlValue* v, const std::string& expected) {
    std::string got = TypeName(*v);
    if (v->is_string()) got += " \"" + v->as_string().str + "\"";
    diag_->Add(Path(key), "expected " + expected + ", got " + got, v);
  }

  static bool ParseInt(const std::string& s, int64_t* out) {
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
    return ec == std::errc() && end == s.data() + s.size();
  }

  static bool ParseFloat(const std::string& s, double* out) {
    char* end = nullptr;
    *out = std::strtod(s.c_str(), &end);
    return !s.empty() && end == s.c_str() + s.size();
  }

  const TomlValue* table_;
  std::string path_;
  Diagnostics* diag_;
  std::set<std::string> known_;
};

// --- --set ------------------------------------------------------------------------------

// Splits "a.b.\"c.d\".e" into segments, honouring double quotes.
bool SplitKeyPath(std::string_view key, std::vector<std::string>* out) {
  std::string cur;
  bool quoted = false, was_quoted = false;
  for (char c : key) {
    if (c == '"') {
      quoted = !quoted;
      was_quoted = true;
    } else if (c == '.' && !quoted) {
      if (cur.empty() && !was_quoted) return false;
      out->push_back(std::move(cur));
      cur.clear();
      was_quoted = false;
    } else {
      cur.push_back(c);
    }
  }
  if (quoted || (cur.empty() && !was_quoted)) return false;
  out->push_back(std::move(cur));
  return true;
}

// Applies "key=value" to the parsed document. The value is kept as text; the schema-aware
// reader converts it to the key's type, so `--set kafka.brokers=host:9092` and
// `--set kafka.num_partitions=32` both work without quoting.
void ApplySet(TomlValue* root, const std::string& assignment, Diagnostics* diag) {
  const size_t eq = assignment.find('=');
  std::vector<std::string> segs;
  if (eq == std::string::npos || !SplitKeyPath(std::string_view(assignment).substr(0, eq), &segs)) {
    diag->errors.push_back("--set " + assignment + ": expected key=value with a dotted key, e.g. kafka.brokers=host:9092");
    return;
  }
  // Everything after kafka.properties (or consumer_/producer_properties) is one librdkafka
  // property name, dots included.
  if (segs.size() > 3 && segs[0] == "kafka" &&
      (segs[1] == "properties" || segs[1] == "consumer_properties" || segs[1] == "producer_properties")) {
    std::string name = segs[2];
    for (size_t i = 3; i < segs.size(); ++i) name += "." + segs[i];
    segs.resize(2);
    segs.push_back(name);
  }
  TomlValue* cur = root;
  std::string path;
  for (size_t i = 0; i + 1 < segs.size(); ++i) {
    path = JoinPath(path, segs[i]);
    auto& table = cur->as_table();
    auto it = table.find(segs[i]);
    if (it == table.end()) it = table.emplace(segs[i], TomlValue(toml::table{})).first;
    if (!it->second.is_table()) {
      diag->errors.push_back("--set " + assignment + ": " + path + " is not a table");
      return;
    }
    cur = &it->second;
  }
  cur->as_table()[segs.back()] = TomlValue(assignment.substr(eq + 1));
  diag->from_set.insert(JoinPath(path, segs.back()));
}

// --- parse ------------------------------------------------------------------------------

Result<TomlValue> ParseToml(std::string_view text, const std::string& source_name) {
  // TOML is UTF-8, and Debian's toml11 3.7.1 reads out of bounds on a literal string ('...')
  // that is not (found by tests/fuzz/toml_config_fuzz): refuse such text before it parses.
  if (!IsValidUtf8(text)) {
    return Status::InvalidArgument(source_name + ": not UTF-8 (byte " + std::to_string(FirstInvalidUtf8(text)) +
                                   " of " + std::to_string(text.size()) + "); TOML must be UTF-8");
  }
  try {
    std::istringstream in{std::string(text)};
    return toml::parse<toml::discard_comments, std::unordered_map, CheckedArray>(in, source_name);
  } catch (const toml::exception& e) {
    std::string what = e.what();
    what = what.substr(0, what.find('\n'));
    if (what.rfind("[error] ", 0) == 0) what.erase(0, 8);
    return Status::InvalidArgument(source_name + ":" + std::to_string(e.location().line()) +
                                   ": syntax error: " + what);
  } catch (const std::exception& e) {
    return Status::InvalidArgument(source_name + ": " + e.what());
  }
}

Result<std::string> ReadFile(const std::string& path) {
  // A directory opens as a stream that reads nothing: it would pass for an empty file.
  struct stat st {};
  if (stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    return Status::InvalidArgument("cannot read " + path + ": " +
                                   (S_ISDIR(st.st_mode) ? "is a directory" : "not a regular file"));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound("cannot open " + path + ": " + std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return Status::IOError("cannot read " + path + ": " + std::strerror(errno));
  return ss.str();
}

// dskit's server TLS block: grpc_tls_config and http_tls_config share it.
void ReadServerTls(Reader& r, tls::ServerTls* t) {
  r.String("cert_file", &t->cert_file);
  r.String("key_file", &t->key_file);
  r.String("client_ca_file", &t->client_ca_file);
  r.String("client_auth_type", &t->client_auth_type);
  r.Finish();
}

// One policy's overrides (policy_override_limits.<policy>): only the keys present are set.
void ReadPolicyLimits(Reader& r, PolicyLimits* out) {
  auto present = [&r](const char* key) {
    r.Known(key);
    return r.Has(key);
  };
  if (present("max_global_streams_per_user")) {
    uint64_t v = 0;
    r.Count("max_global_streams_per_user", &v);
    out->max_global_streams_per_user = v;
  }
  if (present("ingestion_rate_mb")) {
    double v = 0;
    r.NonNegativeFloat("ingestion_rate_mb", &v);
    out->ingestion_rate_mb = v;
  }
  if (present("ingestion_burst_size_mb")) {
    double v = 0;
    r.NonNegativeFloat("ingestion_burst_size_mb", &v);
    out->ingestion_burst_size_mb = v;
  }
  r.Bool("inherit_limits", &out->inherit_limits);
  r.Finish();
}

// Loki's policy_override_limits table and limitsd's shorthand policy_max_streams
// ({policy = N} is policy_override_limits.<policy>.max_global_streams_per_user = N). Present:
// true when either key is.
bool ReadPolicies(Reader& r, std::map<std::string, PolicyLimits>* out) {
  r.Known("policy_override_limits");
  r.Known("policy_max_streams");
  if (!r.Has("policy_override_limits") && !r.Has("policy_max_streams")) return false;
  std::map<std::string, PolicyLimits> policies;
  Reader full = r.Sub("policy_override_limits");
  full.ForEachTable([&](const std::string& policy, Reader& pr) { ReadPolicyLimits(pr, &policies[policy]); });
  full.Finish();
  std::map<std::string, uint64_t> shorthand;
  r.CountMap("policy_max_streams", &shorthand);
  for (const auto& [policy, n] : shorthand) {
    PolicyLimits& p = policies[policy];
    if (p.max_global_streams_per_user) {
      r.Problem("policy_max_streams", "policy \"" + policy + "\" also has policy_override_limits." + policy +
                                          ".max_global_streams_per_user; set it in one place");
      continue;
    }
    p.max_global_streams_per_user = n;
  }
  *out = std::move(policies);
  return true;
}

// Only the keys present become overrides.
void ReadOverrides(Reader& r, TenantOverrides* out) {
  TenantLimits v;
  auto present = [&r](const char* key) {
    r.Known(key);
    return r.Has(key);
  };
  if (present("max_global_streams_per_user")) {
    r.Count("max_global_streams_per_user", &v.max_global_streams_per_user);
    out->max_global_streams_per_user = v.max_global_streams_per_user;
  }
  if (present("ingestion_rate_mb")) {
    r.NonNegativeFloat("ingestion_rate_mb", &v.ingestion_rate_mb);
    out->ingestion_rate_mb = v.ingestion_rate_mb;
  }
  if (present("ingestion_burst_size_mb")) {
    r.NonNegativeFloat("ingestion_burst_size_mb", &v.ingestion_burst_size_mb);
    out->ingestion_burst_size_mb = v.ingestion_burst_size_mb;
  }
  if (ReadPolicies(r, &v.policy_override_limits)) out->policy_override_limits = v.policy_override_limits;
  r.Finish();
}

void ReadTenants(Reader& r, std::map<std::string, TenantOverrides>* out) {
  r.ForEachTable([&](const std::string& tenant, Reader& t) { ReadOverrides(t, &(*out)[tenant]); });
  r.Finish();
}

// [ring] memberlist_* keys.
void ReadMemberlist(Reader& ring, RingConfig* r) {
  auto int32 = [&](std::string_view key, int64_t min, int64_t max, int32_t* out) {
    int64_t v = *out;
    ring.Integer(key, min, max, &v);
    *out = static_cast<int32_t>(v);
  };
  ring.StringList("memberlist_join", &r->memberlist_join);
  ring.String("memberlist_bind_addr", &r->memberlist_bind_addr);
  int32("memberlist_bind_port", 0, 65535, &r->memberlist_bind_port);
  ring.String("memberlist_advertise_addr", &r->memberlist_advertise_addr);
  int32("memberlist_advertise_port", 0, 65535, &r->memberlist_advertise_port);
  ring.String("memberlist_node_name", &r->memberlist_node_name);
  ring.Bool("memberlist_randomize_node_name", &r->memberlist_randomize_node_name);
  ring.String("memberlist_cluster_label", &r->memberlist_cluster_label);
  ring.Bool("memberlist_cluster_label_verification_disabled", &r->memberlist_cluster_label_verification_disabled);
  ring.Duration("memberlist_gossip_interval", &r->memberlist_gossip_interval);
  int32("memberlist_gossip_nodes", 1, 1000, &r->memberlist_gossip_nodes);
  ring.Duration("memberlist_pullpush_interval", &r->memberlist_pullpush_interval);
  ring.Duration("memberlist_gossip_to_dead_nodes_time", &r->memberlist_gossip_to_dead_nodes_time);
  ring.Duration("memberlist_dead_node_reclaim_time", &r->memberlist_dead_node_reclaim_time);
  int32("memberlist_retransmit_factor", 1, 100, &r->memberlist_retransmit_factor);
  ring.Duration("memberlist_stream_timeout", &r->memberlist_stream_timeout);
  ring.Duration("memberlist_probe_interval", &r->memberlist_probe_interval);
  ring.Duration("memberlist_probe_timeout", &r->memberlist_probe_timeout);
  ring.Duration("memberlist_left_ingesters_timeout", &r->memberlist_left_ingesters_timeout);
  ring.Duration("memberlist_leave_timeout", &r->memberlist_leave_timeout);
  ring.Duration("memberlist_min_join_backoff", &r->memberlist_min_join_backoff);
  ring.Duration("memberlist_max_join_backoff", &r->memberlist_max_join_backoff);
  ring.Duration("memberlist_rejoin_interval", &r->memberlist_rejoin_interval);
}

void ReadConfig(Reader& root, Config* c) {
  Reader node = root.Sub("node");
  node.String("zone", &c->node.zone);
  node.String("instance_id", &c->node.instance_id);
  node.Finish();

  Reader kafka = root.Sub("kafka");
  kafka.String("brokers", &c->kafka.brokers);
  kafka.String("topic", &c->kafka.topic);
  int64_t partitions = c->kafka.num_partitions;
  kafka.Integer("num_partitions", 1, kMaxNumPartitions, &partitions);
  c->kafka.num_partitions = static_cast<int32_t>(partitions);
  kafka.Bool("create_topic", &c->kafka.create_topic);
  int64_t replication = c->kafka.create_topic_replication_factor;
  kafka.Integer("create_topic_replication_factor", -1, kMaxReplicationFactor, &replication);
  c->kafka.create_topic_replication_factor = static_cast<int32_t>(replication);
  kafka.Duration("create_topic_retention", &c->kafka.create_topic_retention);
  kafka.String("consumer_group", &c->kafka.consumer_group);
  kafka.Bool("static_membership", &c->kafka.static_membership);
  kafka.Duration("stall_timeout", &c->kafka.stall_timeout);
  int64_t restarts = c->kafka.max_consumer_restarts;
  kafka.Integer("max_consumer_restarts", 0, kMaxConsumerRestarts, &restarts);
  c->kafka.max_consumer_restarts = static_cast<int32_t>(restarts);
  kafka.Duration("consumer_restart_window", &c->kafka.consumer_restart_window);
  kafka.StringMap("properties", &c->kafka.properties);
  kafka.StringMap("consumer_properties", &c->kafka.consumer_properties);
  kafka.StringMap("producer_properties", &c->kafka.producer_properties);
  kafka.Finish();

  Reader store = root.Sub("store");
  store.String("path", &c->store.path);
  store.Size("block_cache", &c->store.block_cache_bytes);
  store.Size("write_buffer", &c->store.write_buffer_bytes);
  store.Duration("failure_grace", &c->store.failure_grace);
  store.Finish();

  Reader w = root.Sub("windows");
  w.Duration("active", &c->windows.active);
  w.Duration("rate", &c->windows.rate);
  w.Duration("bucket", &c->windows.bucket);
  w.Duration("eviction_interval", &c->windows.eviction_interval);
  w.Duration("revoked_retention", &c->windows.revoked_retention);
  w.Duration("produce_interval", &c->windows.produce_interval);
  w.Duration("wait_assign", &c->windows.wait_assign);
  w.Duration("lookup_give_up", &c->windows.lookup_give_up);
  w.Finish();

  Reader server = root.Sub("server");
  server.String("grpc_listen", &c->server.grpc_listen);
  server.String("http_listen", &c->server.http_listen);
  server.String("operator_http_listen", &c->server.operator_http_listen);
  server.Bool("latch_readiness", &c->server.latch_readiness);
  Reader grpc_tls = server.Sub("grpc_tls_config");
  ReadServerTls(grpc_tls, &c->server.grpc_tls);
  Reader http_tls = server.Sub("http_tls_config");
  ReadServerTls(http_tls, &c->server.http_tls);
  Reader operator_http_tls = server.Sub("operator_http_tls_config");
  ReadServerTls(operator_http_tls, &c->server.operator_http_tls);
  server.String("tls_min_version", &c->server.tls_min_version);
  server.String("tls_cipher_suites", &c->server.tls_cipher_suites);
  server.Duration("tls_reload_interval", &c->server.tls_reload_interval);
  server.Finish();

  Reader log = root.Sub("log");
  log.String("level", &c->log.level);
  log.String("format", &c->log.format);
  log.Finish();

  Reader limits = root.Sub("limits");
  limits.String("overrides_file", &c->limits.overrides_file);
  limits.String("overrides_format", &c->limits.overrides_format);
  limits.String("loki_config_file", &c->limits.loki_config_file);
  Reader defaults = limits.Sub("defaults");
  ReadOverrides(defaults, &c->limits.defaults_set);
  c->limits.defaults = ApplyOverrides(TenantLimits{}, c->limits.defaults_set);
  Reader tenants = limits.Sub("tenants");
  ReadTenants(tenants, &c->limits.tenants);
  limits.Integer("max_policies_per_tenant", 1, 65535, &c->limits.max_policies_per_tenant);
  limits.Integer("max_tenants", 1, 1 << 24, &c->limits.max_tenants);
  limits.Integer("max_rate_keys_per_tenant", 1, UINT32_MAX, &c->limits.max_rate_keys_per_tenant);
  limits.Integer("max_rate_keys", 1, INT64_MAX, &c->limits.max_rate_keys);
  limits.Bool("enforce_rate", &c->limits.enforce_rate);
  limits.Finish();

  Reader metrics = root.Sub("metrics");
  metrics.Integer("max_tenant_series", 1, 1'000'000, &c->metrics.max_tenant_series);
  metrics.Finish();

  Reader ring = root.Sub("ring");
  ring.String("store", &c->ring.store);
  ring.StringList("etcd_endpoints", &c->ring.etcd_endpoints);
  ring.Duration("etcd_dial_timeout", &c->ring.etcd_dial_timeout);
  ring.Bool("etcd_tls_enabled", &c->ring.etcd_tls_enabled);
  ring.String("etcd_tls_cert_path", &c->ring.etcd_tls_cert_path);
  ring.String("etcd_tls_key_path", &c->ring.etcd_tls_key_path);
  ring.String("etcd_tls_ca_path", &c->ring.etcd_tls_ca_path);
  ring.String("etcd_tls_server_name", &c->ring.etcd_tls_server_name);
  ring.Bool("etcd_tls_insecure_skip_verify", &c->ring.etcd_tls_insecure_skip_verify);
  ring.String("etcd_username", &c->ring.etcd_username);
  ring.String("etcd_password", &c->ring.etcd_password);
  ring.Bool("memberlist_tls_enabled", &c->ring.memberlist_tls_enabled);
  ring.String("memberlist_tls_cert_path", &c->ring.memberlist_tls_cert_path);
  ring.String("memberlist_tls_key_path", &c->ring.memberlist_tls_key_path);
  ring.String("memberlist_tls_ca_path", &c->ring.memberlist_tls_ca_path);
  ring.String("memberlist_tls_server_name", &c->ring.memberlist_tls_server_name);
  ring.Bool("memberlist_tls_insecure_skip_verify", &c->ring.memberlist_tls_insecure_skip_verify);
  ring.String("prefix", &c->ring.prefix);
  ring.String("key", &c->ring.key);
  ring.String("instance_addr", &c->ring.instance_addr);
  int64_t port = c->ring.instance_port;
  ring.Integer("instance_port", 0, 65535, &port);
  c->ring.instance_port = static_cast<int32_t>(port);
  int64_t tokens = c->ring.num_tokens;
  ring.Integer("num_tokens", 1, kMaxNumTokens, &tokens);
  c->ring.num_tokens = static_cast<int32_t>(tokens);
  ring.Duration("heartbeat_period", &c->ring.heartbeat_period);
  ring.Duration("heartbeat_timeout", &c->ring.heartbeat_timeout);
  ring.Bool("unregister_on_shutdown", &c->ring.unregister_on_shutdown);
  ReadMemberlist(ring, &c->ring);
  ring.Finish();

  Reader zone = root.Sub("zone");
  zone.Bool("enabled", &c->zone.enabled);
  zone.Duration("exchange_interval", &c->zone.exchange_interval);
  zone.Duration("lease", &c->zone.lease);
  zone.Duration("call_timeout", &c->zone.call_timeout);
  zone.Bool("tls_enabled", &c->zone.tls_enabled);
  zone.String("tls_cert_path", &c->zone.tls_cert_path);
  zone.String("tls_key_path", &c->zone.tls_key_path);
  zone.String("tls_ca_path", &c->zone.tls_ca_path);
  zone.String("tls_server_name", &c->zone.tls_server_name);
  zone.Bool("tls_insecure_skip_verify", &c->zone.tls_insecure_skip_verify);
  zone.Finish();

  root.Finish();
}

// host[:port] with a numeric port in 1..65535 (IPv6 hosts in brackets when a port follows).
bool ValidJoinEntry(const std::string& e) {
  if (e.empty() || e.find_first_of(" \t/,") != std::string::npos) return false;
  std::string_view host = e;
  std::string_view port;
  if (e.front() == '[') {
    const size_t close = e.find(']');
    if (close == std::string::npos || close == 1) return false;
    if (close + 1 < e.size()) {
      if (e[close + 1] != ':') return false;
      port = std::string_view(e).substr(close + 2);
      if (port.empty()) return false;
    }
  } else if (std::count(e.begin(), e.end(), ':') == 1) {
    const size_t colon = e.find(':');
    host = std::string_view(e).substr(0, colon);
    port = std::string_view(e).substr(colon + 1);
    if (host.empty() || port.empty()) return false;
  }
  if (port.empty()) return true;
  if (port.size() > 5 || port.find_first_not_of("0123456789") != std::string_view::npos) return false;
  const int n = std::stoi(std::string(port));
  return n >= 1 && n <= 65535;
}

void ValidateMemberlist(const RingConfig& r, const std::function<void(const std::string&, const std::string&)>& err) {
  for (const std::string& e : r.memberlist_join) {
    if (!ValidJoinEntry(e)) err("ring.memberlist_join", "expected host or host:port entries, got \"" + e + "\"");
  }
  auto is_ip = [](const std::string& a) {
    in_addr v4;
    in6_addr v6;
    return inet_pton(AF_INET, a.c_str(), &v4) == 1 || inet_pton(AF_INET6, a.c_str(), &v6) == 1;
  };
  if (!is_ip(r.memberlist_bind_addr)) {
    err("ring.memberlist_bind_addr", "expected an IP address to listen on (0.0.0.0 for all), got \"" +
                                         r.memberlist_bind_addr + "\"");
  }
  if (!r.memberlist_advertise_addr.empty() && !is_ip(r.memberlist_advertise_addr)) {
    err("ring.memberlist_advertise_addr", "expected an IP address, got \"" + r.memberlist_advertise_addr + "\"");
  }
  if (r.memberlist_cluster_label.size() > 255) {
    err("ring.memberlist_cluster_label", "must be at most 255 bytes, got " + std::to_string(r.memberlist_cluster_label.size()));
  }
  const std::pair<const char*, Millis> positive[] = {
      {"ring.memberlist_gossip_interval", r.memberlist_gossip_interval},
      {"ring.memberlist_pullpush_interval", r.memberlist_pullpush_interval},
      {"ring.memberlist_stream_timeout", r.memberlist_stream_timeout},
      {"ring.memberlist_probe_interval", r.memberlist_probe_interval},
      {"ring.memberlist_probe_timeout", r.memberlist_probe_timeout},
      {"ring.memberlist_leave_timeout", r.memberlist_leave_timeout},
      {"ring.memberlist_min_join_backoff", r.memberlist_min_join_backoff},
      {"ring.memberlist_max_join_backoff", r.memberlist_max_join_backoff},
  };
  for (const auto& [key, d] : positive) {
    if (d.count() <= 0) err(key, "must be positive, got " + FormatDuration(d));
  }
  const std::pair<const char*, Millis> non_negative[] = {
      {"ring.memberlist_gossip_to_dead_nodes_time", r.memberlist_gossip_to_dead_nodes_time},
      {"ring.memberlist_dead_node_reclaim_time", r.memberlist_dead_node_reclaim_time},
      {"ring.memberlist_left_ingesters_timeout", r.memberlist_left_ingesters_timeout},
      {"ring.memberlist_rejoin_interval", r.memberlist_rejoin_interval},
  };
  for (const auto& [key, d] : non_negative) {
    if (d.count() < 0) err(key, "must not be negative, got " + FormatDuration(d));
  }
  if (r.memberlist_probe_timeout.count() > 0 && r.memberlist_probe_timeout >= r.memberlist_probe_interval) {
    err("ring.memberlist_probe_timeout", "must be shorter than ring.memberlist_probe_interval (" +
                                             FormatDuration(r.memberlist_probe_interval) + "), got " +
                                             FormatDuration(r.memberlist_probe_timeout));
  }
  if (r.memberlist_min_join_backoff > r.memberlist_max_join_backoff) {
    err("ring.memberlist_min_join_backoff", "must not exceed ring.memberlist_max_join_backoff (" +
                                                FormatDuration(r.memberlist_max_join_backoff) + ")");
  }
}

// Two listeners on one port collide unless both name different specific addresses.
void ValidateListeners(const ServerConfig& s, const std::function<void(const std::string&, const std::string&)>& err) {
  struct Named {
    const char* key;
    const std::string* value;
    Result<ListenAddress> address;
  };
  std::vector<Named> listeners;
  listeners.push_back({"server.grpc_listen", &s.grpc_listen, ParseListenAddress(s.grpc_listen)});
  listeners.push_back({"server.http_listen", &s.http_listen, ParseListenAddress(s.http_listen)});
  if (!s.operator_http_listen.empty()) {
    listeners.push_back(
        {"server.operator_http_listen", &s.operator_http_listen, ParseListenAddress(s.operator_http_listen)});
  }
  for (const Named& l : listeners) {
    if (!l.address.ok()) err(l.key, l.address.status().message());
  }
  for (size_t i = 0; i < listeners.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      const Named& a = listeners[j];
      const Named& b = listeners[i];
      if (!a.address.ok() || !b.address.ok() || a.address->port == 0 || a.address->port != b.address->port) continue;
      if (a.address->wildcard() || b.address->wildcard() || a.address->host == b.address->host) {
        err(b.key, "port " + std::to_string(b.address->port) + " is also " + a.key + "'s (\"" + *a.value +
                       "\"); the servers need different ports");
      }
    }
  }
}

void ValidateTls(const ServerConfig& s, const std::function<void(const std::string&, const std::string&)>& err) {
  tls::CheckServerTls(s.grpc_tls, "server.grpc_tls_config", err);
  tls::CheckServerTls(s.http_tls, "server.http_tls_config", err);
  tls::CheckServerTls(s.operator_http_tls, "server.operator_http_tls_config", err);
  if (s.operator_http_tls.enabled() && s.operator_http_listen.empty()) {
    err("server.operator_http_tls_config", "set, but server.operator_http_listen is empty: the operator documents are "
                                           "served on server.http_listen, under server.http_tls_config");
  }
  if (!tls::ValidMinVersion(s.tls_min_version)) {
    err("server.tls_min_version", "one of VersionTLS10, VersionTLS11, VersionTLS12, VersionTLS13; got \"" +
                                      s.tls_min_version + "\"");
  } else if (s.tls_min_version == "VersionTLS13" && s.grpc_tls.enabled()) {
    err("server.tls_min_version", "VersionTLS13 cannot be enforced on the gRPC listener: this build's gRPC (1.51) "
                                  "always accepts TLS 1.2 and 1.3; leave it unset or VersionTLS12");
  }
  if (Result<std::string> list = tls::OpenSslCipherList(s.tls_cipher_suites); !list.ok()) {
    err("server.tls_cipher_suites", list.status().message());
  }
  if (s.tls_reload_interval < std::chrono::seconds(1)) err("server.tls_reload_interval", "must be at least 1s");
}

// Tenant and policy names the node can hold: 1 to kMaxLimitsNameBytes bytes, as requests
// and records must be (a longer one could never match a stream).
void ValidateNames(const std::string& where, const std::map<std::string, PolicyLimits>& policies,
                   const std::function<void(const std::string&, const std::string&)>& err) {
  for (const auto& [policy, n] : policies) {
    if (policy.empty() || policy.size() > kMaxLimitsNameBytes) {
      err(JoinPath(where, policy), "an ingestion policy name must be 1 to " + std::to_string(kMaxLimitsNameBytes) +
                                       " bytes, got " + std::to_string(policy.size()));
    }
  }
}

void ValidateLimitNames(const LimitsConfig& l, const std::function<void(const std::string&, const std::string&)>& err) {
  ValidateNames("limits.defaults.policy_override_limits", l.defaults.policy_override_limits, err);
  for (const auto& [tenant, o] : l.tenants) {
    const std::string path = JoinPath("limits.tenants", tenant);
    if (tenant.empty() || tenant.size() > kMaxLimitsNameBytes) {
      err(path, "a tenant name must be 1 to " + std::to_string(kMaxLimitsNameBytes) + " bytes, got " +
                    std::to_string(tenant.size()));
    }
    if (o.policy_override_limits) ValidateNames(path + ".policy_override_limits", *o.policy_override_limits, err);
  }
}

// Several overrides files are merged as Loki's runtime config: YAML only.
void ValidateOverridesFiles(const LimitsConfig& l, const std::function<void(const std::string&, const std::string&)>& err) {
  const std::vector<std::string> files = OverridesFiles(l.overrides_file);
  if (files.size() < 2) return;
  for (const std::string& f : files) {
    if (!IsLokiOverrides(f, l.overrides_format)) {
      err("limits.overrides_file", "several files are merged as Loki's runtime config (YAML), but \"" + f +
                                       "\" is read as TOML: list one TOML file, or Loki YAML files only");
    }
  }
}

void ValidateZone(const ZoneConfig& z, const RingConfig& r,
                  const std::function<void(const std::string&, const std::string&)>& err) {
  if (z.enabled && r.store.empty()) err("zone.enabled", "the zone's nodes find each other in the ring: set ring.store");
  for (const auto& [key, value] : {std::pair<const char*, Millis>{"zone.exchange_interval", z.exchange_interval},
                                   {"zone.lease", z.lease},
                                   {"zone.call_timeout", z.call_timeout}}) {
    if (value.count() <= 0) err(key, "must be positive, got " + FormatDuration(value));
  }
  if (z.lease < 3 * z.exchange_interval) {
    err("zone.lease", "must be at least 3 exchange intervals (" + FormatDuration(3 * z.exchange_interval) +
                          "), got " + FormatDuration(z.lease) + ": a lease must outlive a lost exchange or two");
  }
  if (z.tls_enabled) {
    tls::CheckClientFiles(z.tls_cert_path, z.tls_key_path, z.tls_ca_path,
                          {.cert = "zone.tls_cert_path", .key = "zone.tls_key_path", .ca = "zone.tls_ca_path"}, err);
  } else {
    for (const auto& [key, value] : {std::pair<const char*, const std::string*>{"zone.tls_cert_path", &z.tls_cert_path},
                                     {"zone.tls_key_path", &z.tls_key_path},
                                     {"zone.tls_ca_path", &z.tls_ca_path},
                                     {"zone.tls_server_name", &z.tls_server_name}}) {
      if (!value->empty()) err(key, "set zone.tls_enabled = true to use it");
    }
  }
}

void ValidateRing(const RingConfig& r, const std::function<void(const std::string&, const std::string&)>& err) {
  if (r.store != "" && r.store != "etcd" && r.store != "memberlist") {
    err("ring.store", "expected \"\" (no ring), \"etcd\" or \"memberlist\", got \"" + r.store + "\"");
  }
  if (r.store == "etcd" && r.etcd_endpoints.empty()) {
    err("ring.etcd_endpoints", "must list at least one host:port when ring.store = \"etcd\"");
  }
  if (r.etcd_tls_enabled) {
    tls::CheckClientFiles(r.etcd_tls_cert_path, r.etcd_tls_key_path, r.etcd_tls_ca_path,
                          {.cert = "ring.etcd_tls_cert_path", .key = "ring.etcd_tls_key_path", .ca = "ring.etcd_tls_ca_path"},
                          err);
  } else {
    for (const auto& [key, value] : {std::pair<const char*, const std::string*>{"ring.etcd_tls_cert_path", &r.etcd_tls_cert_path},
                                     {"ring.etcd_tls_key_path", &r.etcd_tls_key_path},
                                     {"ring.etcd_tls_ca_path", &r.etcd_tls_ca_path},
                                     {"ring.etcd_tls_server_name", &r.etcd_tls_server_name}}) {
      if (!value->empty()) err(key, "set ring.etcd_tls_enabled = true to use it");
    }
    for (const std::string& e : r.etcd_endpoints) {
      if (e.rfind("https://", 0) == 0) err("ring.etcd_endpoints", "\"" + e + "\" is https: set ring.etcd_tls_enabled = true");
    }
  }
  if (r.memberlist_tls_enabled) {
    // Every member listens too: a certificate and key are required, not optional.
    if (r.memberlist_tls_cert_path.empty()) err("ring.memberlist_tls_cert_path", "required with ring.memberlist_tls_enabled");
    if (r.memberlist_tls_key_path.empty()) err("ring.memberlist_tls_key_path", "required with ring.memberlist_tls_enabled");
    tls::CheckClientFiles(r.memberlist_tls_cert_path, r.memberlist_tls_key_path, r.memberlist_tls_ca_path,
                          {.cert = "ring.memberlist_tls_cert_path",
                           .key = "ring.memberlist_tls_key_path",
                           .ca = "ring.memberlist_tls_ca_path"},
                          err);
  } else {
    for (const auto& [key, value] :
         {std::pair<const char*, const std::string*>{"ring.memberlist_tls_cert_path", &r.memberlist_tls_cert_path},
          {"ring.memberlist_tls_key_path", &r.memberlist_tls_key_path},
          {"ring.memberlist_tls_ca_path", &r.memberlist_tls_ca_path},
          {"ring.memberlist_tls_server_name", &r.memberlist_tls_server_name}}) {
      if (!value->empty()) err(key, "set ring.memberlist_tls_enabled = true to use it");
    }
  }
  if (r.etcd_username.empty() != r.etcd_password.empty()) {
    err(r.etcd_username.empty() ? "ring.etcd_username" : "ring.etcd_password", "etcd_username and etcd_password go together");
  }
  for (const std::string& e : r.etcd_endpoints) {
    Result<std::string> parsed = ring::ParseEtcdEndpoint(e);
    if (!parsed.ok()) err("ring.etcd_endpoints", parsed.status().message());
  }
  if (r.etcd_dial_timeout.count() <= 0) err("ring.etcd_dial_timeout", "must be positive, got " + FormatDuration(r.etcd_dial_timeout));
  if (r.key.empty()) err("ring.key", "must not be empty");
  if (!r.instance_addr.empty()) {
    in6_addr v6;
    const bool has_colon = r.instance_addr.find(':') != std::string::npos;
    if (r.instance_addr.find_first_of(" \t/[]") != std::string::npos ||
        (has_colon && inet_pton(AF_INET6, r.instance_addr.c_str(), &v6) != 1)) {
      err("ring.instance_addr", "expected a host name or IP address without a port (see ring.instance_port), got \"" +
                                    r.instance_addr + "\"");
    }
  }
  const bool period_ok = r.heartbeat_period.count() > 0;
  if (!period_ok) err("ring.heartbeat_period", "must be positive, got " + FormatDuration(r.heartbeat_period));
  if (period_ok && r.heartbeat_timeout <= r.heartbeat_period) {
    err("ring.heartbeat_timeout", "must be longer than ring.heartbeat_period (" + FormatDuration(r.heartbeat_period) +
                                      "), got " + FormatDuration(r.heartbeat_timeout));
  }
  ValidateMemberlist(r, err);
}

void Validate(const Config& c, Diagnostics* d) {
  auto err = [d](const std::string& key, const std::string& problem) { d->Add(key, problem, nullptr); };
  if (c.node.zone.empty()) err("node.zone", "must not be empty");
  if (c.kafka.topic.empty()) err("kafka.topic", "must not be empty");
  if (c.kafka.stall_timeout < std::chrono::seconds(1)) {
    err("kafka.stall_timeout", "must be at least 1s, got " + FormatDuration(c.kafka.stall_timeout));
  }
  if (c.kafka.consumer_restart_window.count() <= 0) {
    err("kafka.consumer_restart_window", "must be positive, got " + FormatDuration(c.kafka.consumer_restart_window));
  }
  if (c.kafka.create_topic_replication_factor == 0) {
    err("kafka.create_topic_replication_factor", "must be -1 (the broker's default) or at least 1, got 0");
  }
  if (c.kafka.create_topic_retention.count() > 0 && c.kafka.create_topic_retention < c.windows.active) {
    err("kafka.create_topic_retention",
        "must be 0 (the broker's default) or at least windows.active (" + FormatDuration(c.windows.active) +
            "): a replay reads the whole active window; got " + FormatDuration(c.kafka.create_topic_retention));
  }
  if (c.store.path.empty()) err("store.path", "must not be empty");
  if (c.store.block_cache_bytes < (1u << 20)) err("store.block_cache", "must be at least 1MiB");
  if (c.store.write_buffer_bytes < (1u << 20)) err("store.write_buffer", "must be at least 1MiB");

  const std::pair<const char*, Millis> windows[] = {
      {"windows.active", c.windows.active},
      {"windows.rate", c.windows.rate},
      {"windows.bucket", c.windows.bucket},
      {"windows.eviction_interval", c.windows.eviction_interval},
      {"windows.revoked_retention", c.windows.revoked_retention},
      {"windows.produce_interval", c.windows.produce_interval},
      {"windows.wait_assign", c.windows.wait_assign},
      {"windows.lookup_give_up", c.windows.lookup_give_up},
      {"store.failure_grace", c.store.failure_grace},
  };
  bool windows_positive = true;
  for (const auto& [key, value] : windows) {
    if (value.count() <= 0) {
      err(key, "must be positive, got " + FormatDuration(value));
      windows_positive = false;
    }
  }
  // The usage store keeps times in whole seconds.
  for (const auto& [key, value] : {windows[0], windows[1], windows[2], windows[5]}) {
    if (value.count() > 0 && value.count() % 1000 != 0) {
      err(key, "must be a whole number of seconds, got " + FormatDuration(value));
      windows_positive = false;
    }
  }
  if (windows_positive) {
    if (c.windows.rate.count() % c.windows.bucket.count() != 0) {
      err("windows.rate", "must be a whole multiple of windows.bucket (" + FormatDuration(c.windows.bucket) +
                              "), got " + FormatDuration(c.windows.rate));
    } else if (c.windows.rate / c.windows.bucket > kMaxRateBuckets) {
      err("windows.bucket", "too small: windows.rate / windows.bucket must be at most " +
                                std::to_string(kMaxRateBuckets));
    }
    if (c.windows.rate > c.windows.active) {
      err("windows.rate", "must not exceed windows.active (" + FormatDuration(c.windows.active) + ")");
    }
  }
  ValidateListeners(c.server, err);
  ValidateTls(c.server, err);
  ValidateLimitNames(c.limits, err);
  if (c.limits.overrides_format != "" && c.limits.overrides_format != "toml" && c.limits.overrides_format != "loki") {
    err("limits.overrides_format", "expected \"\" (by the file's extension), \"toml\" or \"loki\", got \"" +
                                       c.limits.overrides_format + "\"");
  }
  ValidateOverridesFiles(c.limits, err);
  log::Level level;
  if (!log::ParseLevel(c.log.level, &level)) err("log.level", "expected debug, info, warn or error, got \"" + c.log.level + "\"");
  log::Format format;
  if (!log::ParseFormat(c.log.format, &format)) err("log.format", "expected json or logfmt, got \"" + c.log.format + "\"");
  ValidateRing(c.ring, err);
  ValidateZone(c.zone, c.ring, err);
}

}  // namespace

std::string Hostname() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0 || buf[0] == '\0') return "limitsd";
  return buf;
}

Result<Config> ParseConfig(std::string_view text, const std::string& source_name, const std::vector<std::string>& sets) {
  ASSIGN_OR_RETURN(TomlValue doc, ParseToml(text, source_name));
  Diagnostics diag;
  for (const std::string& s : sets) ApplySet(&doc, s, &diag);
  Config c;
  Reader root(&doc, "", &diag);
  ReadConfig(root, &c);
  if (c.node.instance_id.empty()) c.node.instance_id = Hostname();
  if (c.kafka.consumer_group.empty()) c.kafka.consumer_group = "limitsd-" + c.node.zone;
  if (diag.errors.empty()) Validate(c, &diag);
  RETURN_IF_ERROR(diag.ToStatus());
  return c;
}

Result<Config> LoadConfig(const std::string& path, const std::vector<std::string>& sets) {
  std::string text;
  if (!path.empty()) {
    ASSIGN_OR_RETURN(text, ReadFile(path));
  }
  ASSIGN_OR_RETURN(Config c, ParseConfig(text, path.empty() ? "defaults" : path, sets));
  RETURN_IF_ERROR(ApplyLokiMainConfig(&c));
  return c;
}

Result<std::map<std::string, TenantOverrides>> ParseOverrides(std::string_view text, const std::string& source_name) {
  ASSIGN_OR_RETURN(TomlValue doc, ParseToml(text, source_name));
  Diagnostics diag;
  std::map<std::string, TenantOverrides> out;
  Reader root(&doc, "", &diag);
  Reader tenants = root.Sub("tenants");
  ReadTenants(tenants, &out);
  root.Finish();
  if (diag.errors.empty()) {
    LimitsConfig names;
    names.tenants = out;
    ValidateLimitNames(names, [&](const std::string& key, const std::string& problem) {
      diag.Add(key.substr(std::string_view("limits.").size()), problem, nullptr);  // "tenants.<t>..." here
    });
  }
  RETURN_IF_ERROR(diag.ToStatus());
  return out;
}

bool IsLokiOverrides(const std::string& path, const std::string& format) {
  if (!format.empty()) return format == "loki";
  auto ends_with = [&path](std::string_view suffix) {
    return path.size() >= suffix.size() && path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  return ends_with(".yaml") || ends_with(".yml");
}

Result<std::map<std::string, TenantOverrides>> LoadOverridesFile(const std::string& path, const std::string& format) {
  ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return IsLokiOverrides(path, format) ? ParseLokiOverrides(text, path) : ParseOverrides(text, path);
}

std::vector<std::string> OverridesFiles(std::string_view csv) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= csv.size()) {
    const size_t comma = std::min(csv.find(',', start), csv.size());
    if (comma > start) out.emplace_back(csv.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

Result<std::map<std::string, TenantOverrides>> LoadOverridesFiles(const std::vector<std::string>& paths,
                                                                  const std::string& format,
                                                                  std::vector<std::string>* present) {
  std::vector<NamedText> files;
  for (const std::string& path : paths) {
    struct stat st {};
    if (stat(path.c_str(), &st) != 0 && errno == ENOENT) continue;
    ASSIGN_OR_RETURN(std::string text, ReadFile(path));
    files.push_back({path, std::move(text)});
  }
  if (present) {
    present->clear();
    for (const NamedText& f : files) present->push_back(f.name);
  }
  if (files.empty()) return std::map<std::string, TenantOverrides>{};
  if (files.size() == 1) {
    return IsLokiOverrides(files[0].name, format) ? ParseLokiOverrides(files[0].text, files[0].name)
                                                  : ParseOverrides(files[0].text, files[0].name);
  }
  return ParseMergedLokiOverrides(files);
}

Status ApplyLokiMainConfig(Config* c) {
  LimitsConfig& l = c->limits;
  if (l.loki_config_file.empty()) return Status::OK();
  const std::string& path = l.loki_config_file;
  Result<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status().Prefixed("limits.loki_config_file");
  Result<LokiMainConfig> loki = ParseLokiMainConfig(*text, path);
  if (!loki.ok()) return loki.status().Prefixed("limits.loki_config_file");
  // One place per limit: a key both set would leave the operator guessing which one holds.
  std::vector<std::string> twice;
  const TenantOverrides& mine = l.defaults_set;
  const TenantOverrides& theirs = loki->limits_config;
  if (mine.max_global_streams_per_user && theirs.max_global_streams_per_user) twice.push_back("max_global_streams_per_user");
  if (mine.ingestion_rate_mb && theirs.ingestion_rate_mb) twice.push_back("ingestion_rate_mb");
  if (mine.ingestion_burst_size_mb && theirs.ingestion_burst_size_mb) twice.push_back("ingestion_burst_size_mb");
  if (mine.policy_override_limits && theirs.policy_override_limits) {
    for (const auto& [policy, limits] : *mine.policy_override_limits) {
      if (theirs.policy_override_limits->contains(policy)) twice.push_back("policy_override_limits." + policy);
    }
  }
  if (!twice.empty()) {
    std::string msg;
    for (const std::string& key : twice) {
      msg += (msg.empty() ? "" : "\n") + std::string("limits.defaults.") + key + ": also set by limits_config in " +
             path + " (limits.loki_config_file); set each limit in one place";
    }
    return Status::InvalidArgument(msg);
  }
  l.defaults = ApplyOverrides(ApplyOverrides(TenantLimits{}, theirs), mine);
  if (l.overrides_file.empty() && !loki->runtime_config_files.empty()) {
    for (const std::string& f : loki->runtime_config_files) l.overrides_file += (l.overrides_file.empty() ? "" : ",") + f;
    l.overrides_format = "loki";
  }
  return Status::OK();
}

}  // namespace limits::config
