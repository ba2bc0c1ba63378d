#include "tls/reloading_context.h"

#include <openssl/err.h>
#include <sys/stat.h>

#include "common/log.h"

namespace limits::tls {

std::string OpenSslError() {
  std::string out;
  while (unsigned long e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof buf);
    if (!out.empty()) out += "; ";
    out += buf;
  }
  return out.empty() ? "unknown error" : out;
}

Status UseCertificate(SSL_CTX* ctx, const std::string& cert_file, const std::string& key_file) {
  if (SSL_CTX_use_certificate_chain_file(ctx, cert_file.c_str()) != 1 ||
      SSL_CTX_use_PrivateKey_file(ctx, key_file.c_str(), SSL_FILETYPE_PEM) != 1 || SSL_CTX_check_private_key(ctx) != 1) {
    return Status::InvalidArgument("certificate " + cert_file + " / key " + key_file + ": " + OpenSslError());
  }
  return Status::OK();
}

Result<SSL*> NewSsl(SSL_CTX* ctx, int fd) {
  SSL* ssl = SSL_new(ctx);
  if (ssl == nullptr || SSL_set_fd(ssl, fd) != 1) {
    if (ssl) SSL_free(ssl);
    return Status::Internal("SSL_new: " + OpenSslError());
  }
  return ssl;
}

Result<std::unique_ptr<ReloadingContext>> ReloadingContext::Create(std::vector<std::string> files,
                                                                   std::chrono::seconds interval, Builder build) {
  std::unique_ptr<ReloadingContext> r(new ReloadingContext(std::move(files), interval, std::move(build)));
  r->stamp_ = r->Stamp();
  ASSIGN_OR_RETURN(r->ctx_, r->build_());
  r->next_check_ = std::chrono::steady_clock::now() + interval;
  return r;
}

std::string ReloadingContext::Stamp() const {
  std::string s;
  for (const std::string& f : files_) {
    struct stat st {};
    if (!f.empty() && ::stat(f.c_str(), &st) == 0) {
      s += std::to_string(st.st_size) + ":" + std::to_string(st.st_mtim.tv_sec) + "." +
           std::to_string(st.st_mtim.tv_nsec) + ";";
    } else {
      s += "-;";
    }
  }
  return s;
}

std::shared_ptr<SSL_CTX> ReloadingContext::Current() {
  std::lock_guard lock(mu_);
  const auto now = std::chrono::steady_clock::now();
  if (now < next_check_) return ctx_;
  next_check_ = now + interval_;
  std::string stamp = Stamp();
  if (stamp == stamp_) return ctx_;
  Result<std::shared_ptr<SSL_CTX>> built = build_();
  if (!built.ok()) {
    // Half-way through a rotation, or a bad file: keep serving with the last good pair.
    log::Warn("tls", "certificate files changed but do not load; keeping the previous ones")
        .Kv("file", files_.empty() ? "" : files_.front())
        .Kv("error", built.status().message());
    return ctx_;
  }
  log::Info("tls", "certificate files reloaded").Kv("file", files_.empty() ? "" : files_.front());
  stamp_ = std::move(stamp);
  ctx_ = std::move(*built);
  return ctx_;
}

}  // namespace limits::tls
