# The layering of src/limits/: usage <- lifecycle <- zone <- decision. A room includes only its own
# headers and those of the rooms below it; every source file lives in a room.
#   cmake -DLIMITS_DIR=<repo>/src/limits -P layering_check.cmake
# Fails naming each file and include that breaks the rule (ctest unit_limits_layering).
cmake_minimum_required(VERSION 3.25)

if(NOT LIMITS_DIR OR NOT IS_DIRECTORY "${LIMITS_DIR}")
  message(FATAL_ERROR "layering_check: set LIMITS_DIR to src/limits (got '${LIMITS_DIR}')")
endif()

# room -> the rooms it must not include (those above it).
set(above_usage lifecycle zone decision)
set(above_lifecycle zone decision)
set(above_zone decision)
set(above_decision)
set(rooms usage lifecycle zone decision)

set(violations 0)
set(checked 0)
foreach(room IN LISTS rooms)
  if(NOT IS_DIRECTORY "${LIMITS_DIR}/${room}")
    message(SEND_ERROR "layering_check: ${LIMITS_DIR}/${room} is missing")
    math(EXPR violations "${violations} + 1")
    continue()
  endif()
  file(GLOB_RECURSE sources RELATIVE "${LIMITS_DIR}" "${LIMITS_DIR}/${room}/*.h" "${LIMITS_DIR}/${room}/*.cc")
  foreach(source IN LISTS sources)
    math(EXPR checked "${checked} + 1")
    file(STRINGS "${LIMITS_DIR}/${source}" includes REGEX "^[ \t]*#[ \t]*include[ \t]*[\"<]limits/")
    foreach(line IN LISTS includes)
      string(REGEX MATCH "limits/([a-z_]+)/" _ "${line}")
      set(target "${CMAKE_MATCH_1}")
      if(target AND target IN_LIST above_${room})
        string(STRIP "${line}" line)
        message(SEND_ERROR "src/limits/${source}: ${room}/ may not include ${target}/: ${line}")
        math(EXPR violations "${violations} + 1")
      endif()
    endforeach()
  endforeach()
endforeach()

# Nothing outside the rooms (a flat file would escape the rule).
file(GLOB loose RELATIVE "${LIMITS_DIR}" "${LIMITS_DIR}/*.h" "${LIMITS_DIR}/*.cc")
foreach(source IN LISTS loose)
  message(SEND_ERROR "src/limits/${source}: not in a room (usage/, lifecycle/, zone/ or decision/)")
  math(EXPR violations "${violations} + 1")
endforeach()

if(violations GREATER 0)
  message(FATAL_ERROR "layering_check: ${violations} violation(s) of usage <- lifecycle <- zone <- decision")
endif()
message(STATUS "layering_check: ${checked} files, includes run down only")
