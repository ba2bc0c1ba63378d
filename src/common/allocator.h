// The process's allocator, whichever it is: glibc's malloc (the default) or jemalloc loaded
// by the operator (LD_PRELOAD; ARCHITECTURE.md, "The allocator", says when and with which settings).
#pragma once

namespace limits::allocator {

// Returns freed memory to the OS now (glibc: malloc_trim; jemalloc: a purge of every arena).
// Called once after a replay: glibc keeps freed pages mapped and jemalloc returns them only
// after its decay, so the node's RSS would otherwise stay at its replay's peak for a while.
void ReleaseFreeMemory();

// Returns the free pages glibc's arenas hold (malloc_trim) while memory churns, as in a
// replay: each thread allocates from its own arena, so pages one thread freed (librdkafka's
// fetched records, flushed memtables) are not reused by another's growth and stay resident.
// Nothing under jemalloc, which returns its free pages on its own decay schedule.
void TrimArenas();

// "jemalloc" when jemalloc serves malloc in this process, else "glibc".
const char* Name();

}  // namespace limits::allocator
