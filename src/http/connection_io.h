// ConnectionIo: the byte stream of one accepted HTTP connection, as the event loop uses it —
// non-blocking reads and writes that say what to wait for. Plain TCP, or TLS over OpenSSL,
// where a read may need the socket writable (kWantWrite) and a write readable (kWantRead)
// — the handshake runs inside the first reads — and the loop waits for whichever is asked.
// One instance per connection, used only by the loop thread; it does not own the socket.
#pragma once

#include <openssl/ssl.h>

#include <cstddef>
#include <memory>

namespace limits::http {

enum class IoStatus {
  kOk,         // `bytes` moved (at least one)
  kEof,        // the client closed its side (reads only)
  kWantRead,   // nothing moved; call again once the socket is readable
  kWantWrite,  // nothing moved; call again once the socket is writable
  kError,      // the connection is broken: close it
};

struct IoResult {
  IoStatus status = IoStatus::kError;
  size_t bytes = 0;
};

class ConnectionIo {
 public:
  virtual ~ConnectionIo() = default;
  virtual IoResult Read(char* buf, size_t size) = 0;
  virtual IoResult Write(const char* data, size_t size) = 0;
  // The response is complete: nothing more goes to the client (a TCP FIN; TLS sends its
  // close_notify first). Reads stay possible, so the loop can drain what the client still sends.
  virtual void ShutdownWrite() = 0;
};

// Plain TCP on a non-blocking socket.
std::unique_ptr<ConnectionIo> MakePlainIo(int fd);
// TLS on a non-blocking socket, through `ssl` (accepting side; owned: freed with the Io).
std::unique_ptr<ConnectionIo> MakeTlsIo(int fd, SSL* ssl);

}  // namespace limits::http
