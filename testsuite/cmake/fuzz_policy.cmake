# libFuzzer target for the front end (lexer, parser, resolver, backends),
# built only with -DCAGE_FUZZ=ON and clang. Run it from an empty directory:
#   mkdir -p /tmp/fz && cd /tmp/fz && cp .../testsuite/corpus/*/*.cage seeds/ &&
#   .../build-fuzz/testsuite/fuzz_policy -max_total_time=300 -max_len=4096 seeds
if(CAGE_FUZZ)
  add_executable(fuzz_policy ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/fuzz_policy.c)
  target_link_libraries(fuzz_policy PRIVATE cage)
  target_compile_options(fuzz_policy PRIVATE -fsanitize=fuzzer)
  target_link_options(fuzz_policy PRIVATE -fsanitize=fuzzer)
endif()
