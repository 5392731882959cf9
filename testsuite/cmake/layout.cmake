# The stage layout (docs/architecture.md): what the launcher links.
# Include paths already make an upward include fail to compile; this checks
# the link, which they do not: cagerun must not pull in the authoring tools.
find_program(CAGE_NM nm)
if(TARGET cagerun AND CAGE_NM AND NOT APPLE)
  add_test(NAME layout/thin-cagerun
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/layout/thin.sh $<TARGET_FILE:cagec> $<TARGET_FILE:cagerun>)
endif()
