// TempDir: a fresh directory under $TMPDIR (or /tmp) for one test, removed with it.
#pragma once

#include <filesystem>
#include <string>

namespace limits::testing {

class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string Sub(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace limits::testing
