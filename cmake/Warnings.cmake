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
