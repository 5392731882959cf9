# sbpl_bench.cmake - the in-process SBPL emitter benchmark (not a test; run
# by testsuite/bench/sbpl_emit.sh, results in docs/benchmarks.md).
add_executable(bench_sbpl_emit ${CMAKE_CURRENT_SOURCE_DIR}/bench/bench_sbpl_emit.c)
target_link_libraries(bench_sbpl_emit PRIVATE cage)
set_target_properties(bench_sbpl_emit PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})
