# libFuzzer target for the checker and pat_rel (see testsuite/fuzz/fuzz_lint.c),
# built only with -DCAGE_FUZZ=ON and clang. Run it from an empty directory:
#   mkdir -p /tmp/fl/seeds && cp .../testsuite/corpus/lint/*/*.cage /tmp/fl/seeds/ &&
#   cd /tmp/fl && .../build-fuzz/testsuite/fuzz_lint -max_total_time=300 seeds
if(CAGE_FUZZ)
  add_executable(fuzz_lint ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/fuzz_lint.c)
  target_link_libraries(fuzz_lint PRIVATE cage)
  target_compile_options(fuzz_lint PRIVATE -fsanitize=fuzzer)
  target_link_options(fuzz_lint PRIVATE -fsanitize=fuzzer)
endif()
