# GoogleTest from Debian's libgtest-dev/libgmock-dev; one test binary per directory.
find_package(GTest REQUIRED CONFIG)
include(GoogleTest)
enable_testing()

# limits_add_test(NAME <target> LABEL unit|integration SOURCES ... LIBS ...)
# Builds one GoogleTest binary and registers each of its tests with ctest, labelled.
function(limits_add_test)
  cmake_parse_arguments(T "" "NAME;LABEL;TIMEOUT" "SOURCES;LIBS" ${ARGN})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 120)
  endif()
  add_executable(${T_NAME} ${T_SOURCES})
  target_link_libraries(${T_NAME} PRIVATE ${T_LIBS} limits::testing GTest::gmock GTest::gtest_main
                                          limits::warnings)
  gtest_discover_tests(${T_NAME} DISCOVERY_MODE PRE_TEST
                       PROPERTIES LABELS ${T_LABEL} TIMEOUT ${T_TIMEOUT})
endfunction()
