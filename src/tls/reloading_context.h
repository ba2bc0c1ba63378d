// ReloadingContext: an OpenSSL context rebuilt when one of its files changes on disk (size or
// modification time, looked at no more often than the interval), so certificates rotate
// without a restart. Files that do not build leave the last good context in place, logged.
// Thread-safe; a connection keeps the context it started with.
#pragma once

#include <openssl/ssl.h>

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/result.h"

namespace limits::tls {

class ReloadingContext {
 public:
  using Builder = std::function<Result<std::shared_ptr<SSL_CTX>>()>;
  // Builds the first context now: an error here is the caller's start-up error.
  static Result<std::unique_ptr<ReloadingContext>> Create(std::vector<std::string> files,
                                                         std::chrono::seconds interval, Builder build);
  std::shared_ptr<SSL_CTX> Current();

 private:
  ReloadingContext(std::vector<std::string> files, std::chrono::seconds interval, Builder build)
      : files_(std::move(files)), interval_(interval), build_(std::move(build)) {}
  std::string Stamp() const;

  const std::vector<std::string> files_;
  const std::chrono::seconds interval_;
  const Builder build_;
  std::mutex mu_;
  std::shared_ptr<SSL_CTX> ctx_;  // guarded by mu_
  std::chrono::steady_clock::time_point next_check_;
  std::string stamp_;
};

// OpenSSL's queued errors as one line (and the queue cleared).
std::string OpenSslError();
// Loads a PEM certificate chain and its key into `ctx`; InvalidArgument naming both when
// either does not load or they do not match.
Status UseCertificate(SSL_CTX* ctx, const std::string& cert_file, const std::string& key_file);
// A new SSL object of `ctx` on `fd` (it holds its own reference to the context).
Result<SSL*> NewSsl(SSL_CTX* ctx, int fd);

}  // namespace limits::tls
