// Which allocator serves this process is known only at run time (see allocator.h).
#include "common/allocator.h"

#include <dlfcn.h>
#include <malloc.h>

#include <cstddef>

namespace limits::allocator {
namespace {

using MallctlFn = int (*)(const char*, void*, size_t*, void*, size_t);

// jemalloc's control call when jemalloc is loaded (a preloaded library's symbols are found
// first), else null. Looked up once.
MallctlFn Mallctl() {
  static const MallctlFn fn = reinterpret_cast<MallctlFn>(dlsym(RTLD_DEFAULT, "mallctl"));
  return fn;
}

}  // namespace

void TrimArenas() {
  if (Mallctl() != nullptr) return;
#ifdef __GLIBC__
  malloc_trim(0);
#endif
}

void ReleaseFreeMemory() {
  if (MallctlFn mallctl = Mallctl()) {
    // 4096 is MALLCTL_ARENAS_ALL: every arena.
    mallctl("arena.4096.purge", nullptr, nullptr, nullptr, 0);
    return;
  }
  TrimArenas();
}

const char* Name() { return Mallctl() != nullptr ? "jemalloc" : "glibc"; }

}  // namespace limits::allocator
