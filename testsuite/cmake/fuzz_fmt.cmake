# libFuzzer target for the formatter, built only with -DCAGE_FUZZ=ON and clang:
#   mkdir -p /tmp/fzf/seeds && cp .../testsuite/corpus/*/*.cage /tmp/fzf/seeds/ &&
#   .../build-fuzz/testsuite/fuzz_fmt -max_total_time=300 -max_len=4096 /tmp/fzf/seeds
if(CAGE_FUZZ)
  add_executable(fuzz_fmt ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/fuzz_fmt.c)
  target_link_libraries(fuzz_fmt PRIVATE cage)
  target_compile_options(fuzz_fmt PRIVATE -fsanitize=fuzzer)
  target_link_options(fuzz_fmt PRIVATE -fsanitize=fuzzer)
endif()
