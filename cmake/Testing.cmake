# GoogleTest from Debian's libgtest-dev/libgmock-dev; one test binary per directory.
find_package(GTest REQUIRED CONFIG)
include(GoogleTest)
enable_testing()

# Under LIMITSD_TSAN every test, and every program a test starts, writes its ThreadSanitizer
# reports into one directory; tsan_reports_check, which runs after all of them, fails on any
# and prints them (a child's report does not fail the test that started it).
# LIMITS_TEST_TIMEOUT_FACTOR and LIMITS_TEST_ENVIRONMENT are what every discovered test needs
# beyond its own properties (the memberlist interop tests use them too): under TSAN a longer
# timeout and the reports' environment.
if(LIMITSD_TSAN)
  set(LIMITS_TSAN_REPORTS ${PROJECT_BINARY_DIR}/tsan-reports)
  set(LIMITS_TSAN_ENV
      "TSAN_OPTIONS=suppressions=${PROJECT_SOURCE_DIR}/tests/tsan/tsan.supp:log_path=${LIMITS_TSAN_REPORTS}/report:exitcode=66:second_deadlock_stack=1:detect_deadlocks=0")
  add_test(NAME tsan_reports_clear COMMAND ${CMAKE_COMMAND} -DDIR=${LIMITS_TSAN_REPORTS} -DMODE=clear
           -P ${PROJECT_SOURCE_DIR}/cmake/TsanReports.cmake)
  add_test(NAME tsan_reports_check COMMAND ${CMAKE_COMMAND} -DDIR=${LIMITS_TSAN_REPORTS} -DMODE=check
           -P ${PROJECT_SOURCE_DIR}/cmake/TsanReports.cmake)
  set_tests_properties(tsan_reports_clear PROPERTIES FIXTURES_SETUP tsan LABELS "unit;integration")
  set_tests_properties(tsan_reports_check PROPERTIES FIXTURES_CLEANUP tsan LABELS "unit;integration")
  set(LIMITS_TEST_TIMEOUT_FACTOR 3)
  set(LIMITS_TEST_ENVIRONMENT ENVIRONMENT "${LIMITS_TSAN_ENV}")
else()
  set(LIMITS_TEST_TIMEOUT_FACTOR 1)
  set(LIMITS_TEST_ENVIRONMENT)
endif()

# limits_add_test(NAME <target> LABEL unit|integration [TIMEOUT s] SOURCES ... LIBS ...
#                 [TSAN_EXCLUDE <gtest pattern> ...])
# Builds one GoogleTest binary and registers each of its tests with ctest, labelled. Under
# LIMITSD_TSAN the tests matching TSAN_EXCLUDE are not registered (tests/tsan/README.md says
# why for each) and the timeout is tripled.
function(limits_add_test)
  cmake_parse_arguments(T "" "NAME;LABEL;TIMEOUT" "SOURCES;LIBS;TSAN_EXCLUDE" ${ARGN})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 120)
  endif()
  add_executable(${T_NAME} ${T_SOURCES})
  target_link_libraries(${T_NAME} PRIVATE ${T_LIBS} limits::testing GTest::gmock GTest::gtest_main
                                          limits::warnings)
  math(EXPR T_TIMEOUT "${T_TIMEOUT} * ${LIMITS_TEST_TIMEOUT_FACTOR}")
  set(filter "*")
  set(fixtures)
  if(LIMITSD_TSAN)
    set(fixtures FIXTURES_REQUIRED tsan)
    if(T_TSAN_EXCLUDE)
      list(JOIN T_TSAN_EXCLUDE ":" excluded)
      set(filter "*-${excluded}")
    endif()
  endif()
  gtest_discover_tests(${T_NAME} DISCOVERY_MODE PRE_TEST TEST_FILTER "${filter}"
                       PROPERTIES LABELS ${T_LABEL} TIMEOUT ${T_TIMEOUT} ${fixtures} ${LIMITS_TEST_ENVIRONMENT})
endfunction()
