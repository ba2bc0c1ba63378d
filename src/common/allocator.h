// The process's allocator, whichever it is: glibc's malloc (the default) or jemalloc loaded
// by the operator (LD_PRELOAD; ARCHITECTURE.md, "The allocator", says when and with which settings).
#pragma once

namespace limits::allocator {

// Returns freed memory to the OS now (glibc: malloc_trim; jemalloc: a purge of every arena).
// Called once after a replay: glibc keeps freed pages mapped and jemalloc returns them only
// after its decay, so the node's RSS would otherwise stay at its replay's peak for a while.
void ReleaseFreeMemory();

// "jemalloc" when jemalloc serves malloc in this process, else "glibc".
const char* Name();

}  // namespace limits::allocator
