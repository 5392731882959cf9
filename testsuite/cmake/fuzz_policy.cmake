# libFuzzer target for the front end (lexer, parser, resolver, backends),
# built only with -DCAGE_FUZZ=ON and clang.
cage_fuzz_target(fuzz_policy SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/fuzz_policy.c
  SEEDS ${CMAKE_CURRENT_SOURCE_DIR}/corpus/ok ${CMAKE_CURRENT_SOURCE_DIR}/corpus/bad
  OPTIONS -max_len=4096)
