# check_golden.cmake - compiles one example and compares the output with its
# golden file byte for byte. Run by CTest (see cmake/sbpl_golden.cmake):
#   cmake -DCAGEC=... -DSRC_DIR=... -DPOLICY=examples/x.cage -DGOLDEN=... -DOUT=...
#         -DDEFINE=workspace=/Users/alice/src/app
#         -DARGS="--emit;sbpl;--home;/Users/alice" -P check_golden.cmake
# With the environment variable CAGE_UPDATE_GOLDEN=1 it rewrites the golden
# file instead (review the diff before committing it).
foreach(v CAGEC SRC_DIR POLICY GOLDEN OUT DEFINE ARGS)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "check_golden.cmake: ${v} is not set")
  endif()
endforeach()
# Run from the source tree with a relative policy path and a fixed home (in
# ARGS), so the comments naming rule locations are the same on every machine.
execute_process(
  COMMAND ${CAGEC} ${POLICY} -D ${DEFINE} ${ARGS} -o ${OUT}
  WORKING_DIRECTORY ${SRC_DIR}
  RESULT_VARIABLE rc
  ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cagec failed (${rc}) on ${POLICY}:\n${err}")
endif()
if("$ENV{CAGE_UPDATE_GOLDEN}" STREQUAL "1")
  file(COPY_FILE ${OUT} ${GOLDEN})
  message(STATUS "updated ${GOLDEN}")
  return()
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${OUT} ${GOLDEN} RESULT_VARIABLE same)
if(NOT same EQUAL 0)
  message(FATAL_ERROR "${OUT} differs from ${GOLDEN}\n"
    "  diff -u ${GOLDEN} ${OUT}\n"
    "If the change is intended: CAGE_UPDATE_GOLDEN=1 ctest -R golden/ and review the diff.")
endif()
