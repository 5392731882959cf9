# The ok/bad policy corpus: one CTest test per policy file.
file(GLOB CAGE_CORPUS_CASES CONFIGURE_DEPENDS
  ${CMAKE_CURRENT_SOURCE_DIR}/corpus/ok/*.cage
  ${CMAKE_CURRENT_SOURCE_DIR}/corpus/bad/*.cage)
foreach(case ${CAGE_CORPUS_CASES})
  get_filename_component(name ${case} NAME_WE)
  get_filename_component(dir ${case} DIRECTORY)
  get_filename_component(kind ${dir} NAME)
  add_test(NAME corpus/${kind}/${name}
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/corpus/run.sh $<TARGET_FILE:cagec> ${case})
  set_tests_properties(corpus/${kind}/${name} PROPERTIES TIMEOUT 60)
endforeach()
