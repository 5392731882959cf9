# libFuzzer target for the Linux plan builder (testsuite/fuzz/fuzz_lplan.c),
# built only with -DCAGE_FUZZ=ON and clang.
cage_fuzz_target(fuzz_lplan SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/fuzz_lplan.c
  SEEDS ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/seeds/lplan OPTIONS -max_len=4096)
