#include "testing/prometheus_parser.h"

#include <cmath>
#include <cstdlib>
#include <regex>
#include <set>
#include <sstream>

namespace limits::testing {
namespace {

const std::regex kName("[a-zA-Z_:][a-zA-Z0-9_:]*");
const std::regex kLabelName("[a-zA-Z_][a-zA-Z0-9_]*");

bool ParseValue(const std::string& s, double* out) {
  if (s == "+Inf") return *out = INFINITY, true;
  if (s == "-Inf") return *out = -INFINITY, true;
  if (s == "NaN") return *out = NAN, true;
  char* end = nullptr;
  *out = std::strtod(s.c_str(), &end);
  return !s.empty() && end == s.c_str() + s.size();
}

// The family a sample belongs to: histogram samples carry _bucket/_sum/_count suffixes.
std::string FamilyOf(const std::string& name, const std::map<std::string, std::string>& types) {
  for (const char* suffix : {"_bucket", "_sum", "_count"}) {
    const std::string sfx = suffix;
    if (name.size() > sfx.size() && name.compare(name.size() - sfx.size(), sfx.size(), sfx) == 0) {
      const std::string base = name.substr(0, name.size() - sfx.size());
      auto it = types.find(base);
      if (it != types.end() && (it->second == "histogram" || it->second == "summary")) return base;
    }
  }
  return name;
}

}  // namespace

double ParsedMetrics::Value(const std::string& name, const std::map<std::string, std::string>& labels) const {
  for (const Sample& s : samples) {
    if (s.name != name) continue;
    bool match = true;
    for (const auto& [k, v] : labels) {
      auto it = s.labels.find(k);
      match = match && it != s.labels.end() && it->second == v;
    }
    if (match) return s.value;
  }
  return NAN;
}

ParsedMetrics ParsePrometheusText(const std::string& text) {
  ParsedMetrics out;
  std::set<std::string> helped, sampled_families;
  std::map<std::string, std::vector<std::pair<double, double>>> buckets;  // histogram series -> (le, count)
  std::istringstream in(text);
  std::string line;
  int n = 0;
  auto problem = [&](const std::string& what) { out.problems.push_back("line " + std::to_string(n) + ": " + what + ": " + line); };
  while (std::getline(in, line)) {
    ++n;
    if (line.empty()) continue;
    if (line.rfind("# HELP ", 0) == 0 || line.rfind("# TYPE ", 0) == 0) {
      std::istringstream l(line.substr(7));
      std::string name, rest;
      l >> name;
      std::getline(l, rest);
      if (!std::regex_match(name, kName)) problem("bad metric name");
      if (line[2] == 'H') {
        if (!helped.insert(name).second) problem("second HELP");
      } else {
        const std::string type = rest.empty() ? "" : rest.substr(1);
        static const std::set<std::string> kTypes = {"counter", "gauge", "histogram", "summary", "untyped"};
        if (!kTypes.count(type)) problem("unknown type");
        if (out.types.count(name)) problem("second TYPE");
        if (sampled_families.count(name)) problem("TYPE after samples");
        out.types[name] = type;
      }
      continue;
    }
    if (line[0] == '#') continue;  // a comment
    Sample s;
    size_t i = 0;
    while (i < line.size() && line[i] != '{' && line[i] != ' ') ++i;
    s.name = line.substr(0, i);
    if (!std::regex_match(s.name, kName)) problem("bad sample name");
    if (i < line.size() && line[i] == '{') {
      ++i;
      while (i < line.size() && line[i] != '}') {
        size_t eq = line.find('=', i);
        if (eq == std::string::npos || eq + 1 >= line.size() || line[eq + 1] != '"') {
          problem("bad label");
          break;
        }
        const std::string key = line.substr(i, eq - i);
        if (!std::regex_match(key, kLabelName)) problem("bad label name");
        std::string value;
        size_t j = eq + 2;
        for (; j < line.size() && line[j] != '"'; ++j) {
          if (line[j] == '\\') {
            if (j + 1 >= line.size() || (line[j + 1] != '\\' && line[j + 1] != '"' && line[j + 1] != 'n')) {
              problem("bad escape");
            }
            value += line[++j] == 'n' ? '\n' : line[j];
          } else {
            value += line[j];
          }
        }
        if (j >= line.size()) {
          problem("unterminated label value");
          break;
        }
        if (s.labels.count(key)) problem("repeated label");
        s.labels[key] = value;
        i = j + 1;
        if (i < line.size() && line[i] == ',') ++i;
      }
      if (i >= line.size()) {
        problem("unterminated labels");
        continue;
      }
      ++i;  // '}'
    }
    if (i >= line.size() || line[i] != ' ') {
      problem("no value");
      continue;
    }
    std::istringstream rest(line.substr(i + 1));
    std::string value, timestamp, extra;
    rest >> value >> timestamp >> extra;
    if (!ParseValue(value, &s.value)) problem("bad value");
    if (!timestamp.empty() && timestamp.find_first_not_of("-0123456789") != std::string::npos) problem("bad timestamp");
    if (!extra.empty()) problem("trailing text");
    const std::string family = FamilyOf(s.name, out.types);
    if (!out.types.count(family)) problem("sample without TYPE");
    sampled_families.insert(family);
    if (out.types[family] == "counter" && (s.value < 0 || std::isnan(s.value))) problem("negative counter");
    if (out.types[family] == "histogram" && s.name == family + "_bucket") {
      auto le = s.labels.find("le");
      double bound = 0;
      if (le == s.labels.end() || !ParseValue(le->second, &bound)) {
        problem("bucket without le");
      } else {
        std::map<std::string, std::string> series = s.labels;
        series.erase("le");
        std::string key = family;
        for (const auto& [k, v] : series) key += "," + k + "=" + v;
        auto& b = buckets[key];
        if (!b.empty() && (bound <= b.back().first || s.value < b.back().second)) problem("buckets out of order");
        b.emplace_back(bound, s.value);
      }
    }
    out.samples.push_back(std::move(s));
  }
  for (const auto& [series, b] : buckets) {
    if (b.empty() || !std::isinf(b.back().first)) out.problems.push_back(series + ": no +Inf bucket");
  }
  for (const auto& [family, type] : out.types) {
    if (type != "histogram") continue;
    bool sum = false, count = false;
    for (const Sample& s : out.samples) {
      sum = sum || s.name == family + "_sum";
      count = count || s.name == family + "_count";
    }
    if (sampled_families.count(family) && (!sum || !count)) out.problems.push_back(family + ": no _sum or _count");
  }
  return out;
}

}  // namespace limits::testing
