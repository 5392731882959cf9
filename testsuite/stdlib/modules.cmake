# modules.cmake - the standard library's module names, for the test
# fragments that check every module (cmake/stdlib.cmake, proxy_table.cmake).
# A name such as "std/base" is portable (stdlib/std/base.cage) or a platform
# module (stdlib/linux/std/base.cage and stdlib/macos/std/base.cage);
# either way it is imported the same way on both platforms.
include_guard(GLOBAL)

# cage_stdlib_modules(OUT): every module name, sorted, each once.
function(cage_stdlib_modules out)
  set(names)
  foreach(tree "" "linux/" "macos/")
    file(GLOB_RECURSE mods CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/stdlib/${tree}std/*.cage)
    foreach(mod ${mods})
      file(RELATIVE_PATH rel ${CMAKE_SOURCE_DIR}/stdlib/${tree} ${mod})
      string(REGEX REPLACE "\\.cage$" "" name "${rel}")
      list(APPEND names ${name})
    endforeach()
  endforeach()
  list(REMOVE_DUPLICATES names)
  list(SORT names)
  set(${out} ${names} PARENT_SCOPE)
endfunction()
