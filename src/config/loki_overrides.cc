#include "config/loki_overrides.h"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <optional>
#include <vector>

#include "config/config.h"

namespace limits::config {
namespace {

class Problems {
 public:
  explicit Problems(std::string source) : source_(std::move(source)) {}

  void Add(const std::string& path, const std::string& problem, const YAML::Node& where) {
    std::string msg = path + ": " + problem;
    if (where.IsDefined() && where.Mark().line >= 0) {
      msg += " (" + source_ + ":" + std::to_string(where.Mark().line + 1) + ")";
    }
    errors_.push_back(std::move(msg));
  }

  Status ToStatus() const {
    if (errors_.empty()) return Status::OK();
    std::string joined;
    for (const std::string& e : errors_) joined += (joined.empty() ? "" : "\n") + e;
    return Status::InvalidArgument(joined);
  }

 private:
  std::string source_;
  std::vector<std::string> errors_;
};

// YAML keys may be written unquoted with dots or spaces; the path quotes such segments.
std::string Join(const std::string& parent, const std::string& key) {
  bool bare = !key.empty();
  for (char c : key) bare = bare && (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-');
  return parent + "." + (bare ? key : "\"" + key + "\"");
}

std::string Describe(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Map: return "a map";
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Null: return "null";
    default: break;
  }
  if (n.Tag() == "!") return "a string \"" + n.Scalar() + "\"";  // quoted: a string in YAML, as Go reads it
  return "\"" + n.Scalar() + "\"";
}

// Plain (unquoted) scalars only: Loki (Go's yaml) refuses "5" for an int, so must we.
bool Plain(const YAML::Node& n) { return n.IsScalar() && n.Tag() != "!"; }

bool ReadCount(const YAML::Node& n, const std::string& path, Problems& p, uint64_t* out) {
  int64_t v = 0;
  if (!Plain(n) || !YAML::convert<int64_t>::decode(n, v)) {
    p.Add(path, "expected an integer, got " + Describe(n), n);
    return false;
  }
  if (v < 0) {
    p.Add(path, "must be >= 0 (0 = unlimited), got " + std::to_string(v), n);
    return false;
  }
  *out = static_cast<uint64_t>(v);
  return true;
}

bool ReadMegabytes(const YAML::Node& n, const std::string& path, Problems& p, double* out) {
  double v = 0;
  if (!Plain(n) || !YAML::convert<double>::decode(n, v)) {
    p.Add(path, "expected a number, got " + Describe(n), n);
    return false;
  }
  if (!std::isfinite(v) || v < 0) {
    p.Add(path, "must be a finite number >= 0, got " + n.Scalar(), n);
    return false;
  }
  *out = v;
  return true;
}

bool ValidName(const std::string& name, const char* what, const std::string& path, const YAML::Node& where,
               Problems& p) {
  if (!name.empty() && name.size() <= kMaxLimitsNameBytes) return true;
  p.Add(path, std::string("a ") + what + " name must be 1 to " + std::to_string(kMaxLimitsNameBytes) +
                  " bytes, got " + std::to_string(name.size()),
        where);
  return false;
}

// `limits[key]` when set and not null; an undefined node otherwise.
YAML::Node Field(const YAML::Node& limits, const char* key) {
  YAML::Node n = limits[key];
  return n.IsDefined() && !n.IsNull() ? n : YAML::Node(YAML::NodeType::Undefined);
}

// The figures a tenant and a policy share: the keys present become values.
void ReadFigures(const YAML::Node& limits, const std::string& path, Problems& p, std::optional<uint64_t>* streams,
                 std::optional<double>* rate, std::optional<double>* burst) {
  uint64_t count = 0;
  double mb = 0;
  if (YAML::Node n = Field(limits, "max_global_streams_per_user"); n.IsDefined()) {
    if (ReadCount(n, path + ".max_global_streams_per_user", p, &count)) *streams = count;
  }
  if (YAML::Node n = Field(limits, "ingestion_rate_mb"); n.IsDefined()) {
    if (ReadMegabytes(n, path + ".ingestion_rate_mb", p, &mb)) *rate = mb;
  }
  if (YAML::Node n = Field(limits, "ingestion_burst_size_mb"); n.IsDefined()) {
    if (ReadMegabytes(n, path + ".ingestion_burst_size_mb", p, &mb)) *burst = mb;
  }
}

// Loki's `inherit_limits: true` (and Go's yaml reads only true/false for a bool).
bool ReadBool(const YAML::Node& n, const std::string& path, Problems& p, bool* out) {
  if (Plain(n) && (n.Scalar() == "true" || n.Scalar() == "false")) {
    *out = n.Scalar() == "true";
    return true;
  }
  p.Add(path, "expected true or false, got " + Describe(n), n);
  return false;
}

// policy_override_limits.<policy>: the fields limitsd enforces; Loki's others (local and
// per-stream limits, shard_streams) are the distributor's and ingesters' business.
void ReadPolicies(const YAML::Node& policies, const std::string& path, Problems& p,
                  std::map<std::string, PolicyLimits>* out) {
  for (const auto& entry : policies) {
    const std::string policy = entry.first.Scalar();
    const std::string policy_path = Join(path, policy);
    if (!ValidName(policy, "policy", policy_path, entry.first, p)) continue;
    const YAML::Node& limits = entry.second;
    PolicyLimits& out_policy = (*out)[policy];
    if (limits.IsNull()) continue;  // nothing overridden: the policy counts as the tenant's
    if (!limits.IsMap()) {
      p.Add(policy_path, "expected a map of limits, got " + Describe(limits), limits);
      continue;
    }
    ReadFigures(limits, policy_path, p, &out_policy.max_global_streams_per_user, &out_policy.ingestion_rate_mb,
                &out_policy.ingestion_burst_size_mb);
    if (YAML::Node n = Field(limits, "inherit_limits"); n.IsDefined()) {
      ReadBool(n, policy_path + ".inherit_limits", p, &out_policy.inherit_limits);
    }
  }
}

void ReadTenant(const YAML::Node& limits, const std::string& path, Problems& p, TenantOverrides* out) {
  ReadFigures(limits, path, p, &out->max_global_streams_per_user, &out->ingestion_rate_mb, &out->ingestion_burst_size_mb);
  if (YAML::Node n = Field(limits, "policy_override_limits"); n.IsDefined()) {
    if (!n.IsMap()) {
      p.Add(path + ".policy_override_limits", "expected a map of policy -> limits, got " + Describe(n), n);
    } else {
      std::map<std::string, PolicyLimits> policies;
      ReadPolicies(n, path + ".policy_override_limits", p, &policies);
      out->policy_override_limits = std::move(policies);
    }
  }
}

Result<YAML::Node> LoadYaml(std::string_view yaml, const std::string& source_name) {
  try {
    return YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(source_name + ":" + std::to_string(e.mark.line + 1) + ": syntax error: " + e.msg);
  }
}

Result<std::map<std::string, TenantOverrides>> OverridesOf(const YAML::Node& doc, const std::string& source_name) {
  Problems p(source_name);
  std::map<std::string, TenantOverrides> out;
  try {
    if (doc.IsNull()) return out;  // an empty file: no overrides
    if (!doc.IsMap()) {
      p.Add("(document)", "expected a map with an \"overrides\" key, got " + Describe(doc), doc);
      return p.ToStatus();
    }
    const YAML::Node overrides = doc["overrides"];
    if (!overrides.IsDefined() || overrides.IsNull()) return out;
    if (!overrides.IsMap()) {
      p.Add("overrides", "expected a map of tenant -> limits, got " + Describe(overrides), overrides);
      return p.ToStatus();
    }
    for (const auto& entry : overrides) {
      const std::string tenant = entry.first.Scalar();
      const std::string path = Join("overrides", tenant);
      if (!ValidName(tenant, "tenant", path, entry.first, p)) continue;
      const YAML::Node& limits = entry.second;
      TenantOverrides& o = out[tenant];
      if (limits.IsNull()) continue;  // Loki: the defaults
      if (!limits.IsMap()) {
        p.Add(path, "expected a map of limits, got " + Describe(limits), limits);
        continue;
      }
      ReadTenant(limits, path, p, &o);
    }
  } catch (const YAML::Exception& e) {  // yaml-cpp throws on misuse; report rather than escape
    return Status::InvalidArgument(source_name + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
  RETURN_IF_ERROR(p.ToStatus());
  return out;
}

// dskit's mergeConfigMaps: `from` into `into`, maps key by key, the rest replaced whole. A
// null next to a map is an empty map.
Status MergeInto(YAML::Node& into, const YAML::Node& from, const std::string& path) {
  for (const auto& entry : from) {
    const std::string key = entry.first.Scalar();
    const std::string at = path.empty() ? key : Join(path, key);
    YAML::Node mine = into[key];
    const YAML::Node& theirs = entry.second;
    if (!mine.IsDefined() || mine.IsNull()) {
      into[key] = YAML::Clone(theirs);
    } else if (mine.IsMap() && theirs.IsMap()) {
      RETURN_IF_ERROR(MergeInto(mine, theirs, at));
    } else if (mine.IsMap() && theirs.IsNull()) {
      // an empty map merged in: nothing changes
    } else if (mine.IsMap() || theirs.IsMap()) {
      return Status::InvalidArgument(at + ": conflicting types: a map in one runtime-config file, " +
                                     Describe(mine.IsMap() ? theirs : mine) + " in another");
    } else {
      into[key] = YAML::Clone(theirs);
    }
  }
  return Status::OK();
}

}  // namespace

Result<std::map<std::string, TenantOverrides>> ParseLokiOverrides(std::string_view yaml, const std::string& source_name) {
  ASSIGN_OR_RETURN(YAML::Node doc, LoadYaml(yaml, source_name));
  return OverridesOf(doc, source_name);
}

Result<std::map<std::string, TenantOverrides>> ParseMergedLokiOverrides(const std::vector<NamedText>& files) {
  if (files.size() == 1) return ParseLokiOverrides(files[0].text, files[0].name);
  YAML::Node merged(YAML::NodeType::Map);
  std::string names;
  try {
    for (const NamedText& f : files) {
      ASSIGN_OR_RETURN(YAML::Node doc, LoadYaml(f.text, f.name));
      RETURN_IF_ERROR(OverridesOf(doc, f.name).status());  // its own problems, with its lines
      names += (names.empty() ? "" : ", ") + f.name;
      if (doc.IsNull()) continue;
      RETURN_IF_ERROR(MergeInto(merged, doc, "").Prefixed(f.name));
    }
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument("merging " + names + ": " + e.msg);
  }
  return OverridesOf(merged, "merged runtime config (" + names + ")");
}

Result<LokiMainConfig> ParseLokiMainConfig(std::string_view yaml, const std::string& source_name) {
  ASSIGN_OR_RETURN(YAML::Node doc, LoadYaml(yaml, source_name));
  Problems p(source_name);
  LokiMainConfig out;
  try {
    if (!doc.IsMap()) {
      p.Add("(document)", "expected Loki's configuration (a map), got " + Describe(doc), doc);
      return p.ToStatus();
    }
    if (const YAML::Node limits = doc["limits_config"]; limits.IsDefined() && !limits.IsNull()) {
      if (!limits.IsMap()) {
        p.Add("limits_config", "expected a map of limits, got " + Describe(limits), limits);
      } else {
        ReadTenant(limits, "limits_config", p, &out.limits_config);
      }
    }
    if (const YAML::Node rc = doc["runtime_config"]; rc.IsDefined() && !rc.IsNull()) {
      const YAML::Node file = rc.IsMap() ? rc["file"] : YAML::Node();
      if (!rc.IsMap()) {
        p.Add("runtime_config", "expected a map, got " + Describe(rc), rc);
      } else if (file.IsDefined() && !file.IsNull()) {
        if (!file.IsScalar()) {
          p.Add("runtime_config.file", "expected a comma-separated list of paths, got " + Describe(file), file);
        } else {
          // dskit's StringSliceCSV.
          std::string item;
          for (char ch : file.Scalar() + ",") {
            if (ch != ',') {
              item.push_back(ch);
            } else if (!item.empty()) {
              out.runtime_config_files.push_back(item);
              item.clear();
            }
          }
        }
      }
    }
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(source_name + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
  RETURN_IF_ERROR(p.ToStatus());
  return out;
}

}  // namespace limits::config
