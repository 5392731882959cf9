# libFuzzer target for the formatter, built only with -DCAGE_FUZZ=ON and clang.
cage_fuzz_target(fuzz_fmt SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/fuzz_fmt.c
  SEEDS ${CMAKE_CURRENT_SOURCE_DIR}/corpus/ok OPTIONS -max_len=4096)
