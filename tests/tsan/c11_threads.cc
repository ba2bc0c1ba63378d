// ThreadSanitizer builds only (LIMITSD_TSAN): C11 <threads.h> routed through pthreads.
//
// Debian's librdkafka makes its threads, locks and condition variables with glibc's C11 threads
// (thrd_create, mtx_lock, cnd_wait, ...). glibc implements them by calling its pthread internals
// directly, and GCC 12's libtsan intercepts none of them, so TSAN would see neither librdkafka's
// threads start nor its locks taken: every callback it runs on our code (rebalance, delivery
// reports, logs) would race with everything. This shared library, linked into every program of a
// TSAN build ahead of libc, defines those functions over the pthread ones TSAN does intercept.
// glibc's C11 types are layout-compatible with the pthread ones they wrap (threads.h).
#include <pthread.h>
#include <sanitizer/tsan_interface.h>
#include <threads.h>

#include <cerrno>
#include <cstdint>
#include <ctime>
#include <new>

namespace {

pthread_mutex_t* M(mtx_t* m) { return reinterpret_cast<pthread_mutex_t*>(m); }
pthread_cond_t* C(cnd_t* c) { return reinterpret_cast<pthread_cond_t*>(c); }
// The synchronisation object that orders an initialisation before the uses (mtx_init).
void* InitSync(void* object) { return static_cast<char*>(object) + 1; }

int FromErrno(int e) {
  switch (e) {
    case 0: return thrd_success;
    case EBUSY: return thrd_busy;
    case ETIMEDOUT: return thrd_timedout;
    case ENOMEM: return thrd_nomem;
    default: return thrd_error;
  }
}

struct Start {
  thrd_start_t fn;
  void* arg;
};

void* Trampoline(void* p) {
  Start s = *static_cast<Start*>(p);
  delete static_cast<Start*>(p);
  return reinterpret_cast<void*>(static_cast<intptr_t>(s.fn(s.arg)));
}

static_assert(sizeof(mtx_t) == sizeof(pthread_mutex_t));
static_assert(sizeof(cnd_t) == sizeof(pthread_cond_t));
static_assert(sizeof(thrd_t) == sizeof(pthread_t));
static_assert(sizeof(once_flag) == sizeof(pthread_once_t));

}  // namespace

extern "C" {

int thrd_create(thrd_t* thr, thrd_start_t fn, void* arg) {
  auto* s = new (std::nothrow) Start{fn, arg};
  if (s == nullptr) return thrd_nomem;
  int e = pthread_create(thr, nullptr, Trampoline, s);
  if (e != 0) delete s;
  return FromErrno(e);
}

int thrd_join(thrd_t thr, int* res) {
  void* r = nullptr;
  int e = pthread_join(thr, &r);
  if (e == 0 && res != nullptr) *res = static_cast<int>(reinterpret_cast<intptr_t>(r));
  return FromErrno(e);
}

int thrd_detach(thrd_t thr) { return FromErrno(pthread_detach(thr)); }
thrd_t thrd_current(void) { return pthread_self(); }
int thrd_equal(thrd_t a, thrd_t b) { return pthread_equal(a, b); }

int mtx_init(mtx_t* m, int type) {
  pthread_mutexattr_t attr;
  pthread_mutexattr_init(&attr);
  if (type & mtx_recursive) pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
  int e = pthread_mutex_init(M(m), &attr);
  pthread_mutexattr_destroy(&attr);
  // librdkafka initialises a mutex on one thread and hands the object it lives in to another
  // through its own uninstrumented atomics; TSAN would report the first lock there as racing
  // with the initialisation. What librdkafka guarantees, said to TSAN: the initialisation (and
  // what its thread did before it) happens before every lock. On an address of its own, one
  // past the mutex's, so that a failed trylock gains no edge from the last unlock.
  __tsan_release(InitSync(m));
  return FromErrno(e);
}
int mtx_lock(mtx_t* m) {
  __tsan_acquire(InitSync(m));
  return FromErrno(pthread_mutex_lock(M(m)));
}
int mtx_trylock(mtx_t* m) {
  __tsan_acquire(InitSync(m));
  return FromErrno(pthread_mutex_trylock(M(m)));
}
int mtx_timedlock(mtx_t* __restrict m, const struct timespec* __restrict until) {
  __tsan_acquire(InitSync(m));
  return FromErrno(pthread_mutex_timedlock(M(m), until));
}
int mtx_unlock(mtx_t* m) { return FromErrno(pthread_mutex_unlock(M(m))); }
void mtx_destroy(mtx_t* m) { pthread_mutex_destroy(M(m)); }

// The same for condition variables: initialised on one thread, used on others.
int cnd_init(cnd_t* c) {
  int e = pthread_cond_init(C(c), nullptr);
  __tsan_release(InitSync(c));
  return FromErrno(e);
}
int cnd_signal(cnd_t* c) {
  __tsan_acquire(InitSync(c));
  return FromErrno(pthread_cond_signal(C(c)));
}
int cnd_broadcast(cnd_t* c) {
  __tsan_acquire(InitSync(c));
  return FromErrno(pthread_cond_broadcast(C(c)));
}
int cnd_wait(cnd_t* c, mtx_t* m) {
  __tsan_acquire(InitSync(c));
  return FromErrno(pthread_cond_wait(C(c), M(m)));
}
int cnd_timedwait(cnd_t* __restrict c, mtx_t* __restrict m, const struct timespec* __restrict until) {
  __tsan_acquire(InitSync(c));
  return FromErrno(pthread_cond_timedwait(C(c), M(m), until));
}
void cnd_destroy(cnd_t* c) { pthread_cond_destroy(C(c)); }

void call_once(once_flag* flag, void (*fn)(void)) {
  pthread_once(reinterpret_cast<pthread_once_t*>(flag), fn);
}

}  // extern "C"
