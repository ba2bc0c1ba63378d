# Compiler warnings and sanitizers, applied through one INTERFACE target that every
# project target links PRIVATE, so dependency headers are never compiled with our flags.
add_library(limits_warnings INTERFACE)
add_library(limits::warnings ALIAS limits_warnings)
target_compile_options(limits_warnings INTERFACE -Wall -Wextra -Wpedantic -Wshadow=local
                       -Wnon-virtual-dtor -Wimplicit-fallthrough)

if(LIMITSD_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()

# ThreadSanitizer (tests/tsan/README.md). -O1 keeps the tests' timing near a release build's
# at a fraction of -O3's compile time; -g1 gives the reports' stacks their lines. Debian's
# librdkafka uses C11 threads, which libtsan does not intercept: every program links the shim
# that routes them through pthreads (-fsanitize links without --as-needed, so it stays).
if(LIMITSD_TSAN)
  if(LIMITSD_SANITIZE)
    message(FATAL_ERROR "LIMITSD_TSAN and LIMITSD_SANITIZE cannot be combined (one sanitizer runtime per program)")
  endif()
  add_compile_options(-fsanitize=thread -O1 -g1)
  add_link_options(-fsanitize=thread)
  # An executable exports the instances of std:: and grpc:: templates it compiled (instrumented)
  # that a shared library also uses, and the dynamic linker then binds the library's calls to
  # them: Debian's uninstrumented gRPC and RocksDB would run our instrumented std::string and
  # gRPC callback code on their own threads, whose hand-overs TSAN cannot see. Exporting
  # nothing keeps each library on its own (uninstrumented) copies.
  add_link_options($<$<STREQUAL:$<TARGET_PROPERTY:TYPE>,EXECUTABLE>:-Wl,--version-script=${PROJECT_SOURCE_DIR}/tests/tsan/executable.map>)
  add_library(limits_tsan_c11_threads SHARED ${PROJECT_SOURCE_DIR}/tests/tsan/c11_threads.cc)
  target_link_libraries(limits_warnings INTERFACE limits_tsan_c11_threads)
endif()
