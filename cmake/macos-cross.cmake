# macos-cross.cmake - CMake toolchain for building cage for macOS on Linux,
# with clang and ld64.lld from Debian, against the open-source libc headers
# and libSystem link stub that zig ships for its own cross-compiling (no
# part of Apple's SDK). .ci/macos-cross fetches those and calls:
#
#   cmake -S . -B build-macos-arm64 -DCMAKE_TOOLCHAIN_FILE=cmake/macos-cross.cmake \
#     -DCAGE_MACOS_ARCH=arm64 -DCAGE_MACOS_LIBC=.../zig/lib/libc -DCAGE_MACOS_DEPS=DIR
#
# CAGE_MACOS_ARCH   arm64 or x86_64; the deployment target is macOS 11.
# CAGE_MACOS_LIBC   zig's lib/libc (include/*-macos*, darwin/libSystem.*.tbd).
# CAGE_MACOS_DEPS   a prefix for xxHash and Criterion as a Mac would have
#                   them: lib/pkgconfig/*.pc, include/, lib/*.tbd.
# What this proves and what it does not: docs/install.md.
set(CAGE_MACOS_ARCH "arm64" CACHE STRING "macOS architecture: arm64 or x86_64")
set(CAGE_MACOS_LIBC "" CACHE PATH "zig's lib/libc directory")
set(CAGE_MACOS_DEPS "" CACHE PATH "prefix with pkg-config files for the macOS build")
# try_compile re-reads this file in a fresh project: hand the settings on.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES CAGE_MACOS_ARCH CAGE_MACOS_LIBC CAGE_MACOS_DEPS)

if(CAGE_MACOS_ARCH STREQUAL "arm64")
  set(cage_zig_arch aarch64)
elseif(CAGE_MACOS_ARCH STREQUAL "x86_64")
  set(cage_zig_arch x86_64)
else()
  message(FATAL_ERROR "CAGE_MACOS_ARCH must be arm64 or x86_64, not '${CAGE_MACOS_ARCH}'")
endif()
set(cage_macos_version 11)
# Headers of the deployment target (an API newer than macOS 11 is not
# declared); the link stub of a newer libSystem, as a Mac's newer SDK
# would be, so that .ci/macos-imports, checking against macOS 11's, is
# what catches a symbol that came later.
set(cage_macos_link_version 13)
foreach(dir include/${cage_zig_arch}-macos.${cage_macos_version}-none
    include/any-macos.${cage_macos_version}-any include/any-macos-any
    darwin/libSystem.${cage_macos_link_version}.tbd)
  if(NOT EXISTS ${CAGE_MACOS_LIBC}/${dir})
    message(FATAL_ERROR "CAGE_MACOS_LIBC=${CAGE_MACOS_LIBC}: no ${dir}")
  endif()
endforeach()
if(NOT EXISTS ${CAGE_MACOS_DEPS}/lib/pkgconfig)
  message(FATAL_ERROR "CAGE_MACOS_DEPS=${CAGE_MACOS_DEPS}: no lib/pkgconfig")
endif()

set(CMAKE_SYSTEM_NAME Darwin)
# Darwin 20 is macOS 11.
set(CMAKE_SYSTEM_VERSION 20)
set(CMAKE_SYSTEM_PROCESSOR ${CAGE_MACOS_ARCH})
set(CMAKE_C_COMPILER clang)
set(CMAKE_C_COMPILER_TARGET ${CAGE_MACOS_ARCH}-apple-macos${cage_macos_version})
# The system root holds only usr/lib/libSystem.tbd (a link to zig's stub),
# so nothing of the Linux host is ever searched for a library.
set(cage_sysroot ${CAGE_MACOS_DEPS}/sysroot)
file(MAKE_DIRECTORY ${cage_sysroot}/usr/lib)
file(CREATE_LINK ${CAGE_MACOS_LIBC}/darwin/libSystem.${cage_macos_link_version}.tbd
  ${cage_sysroot}/usr/lib/libSystem.tbd SYMBOLIC)
set(CMAKE_OSX_SYSROOT ${cage_sysroot})
set(CMAKE_OSX_ARCHITECTURES "")

find_program(CAGE_LD64_LLD NAMES ld64.lld ld64.lld-19 ld64.lld-18 ld64.lld-17 ld64.lld-16
  ld64.lld-15 ld64.lld-14 PATHS /usr/lib/llvm-19/bin /usr/lib/llvm-18/bin /usr/lib/llvm-17/bin
  /usr/lib/llvm-16/bin /usr/lib/llvm-15/bin /usr/lib/llvm-14/bin REQUIRED)
# Only the macOS headers, never the host's /usr/include; clang's own
# (stddef.h, stdarg.h, ...) stay.
set(CMAKE_C_FLAGS_INIT "-nostdlibinc -isystem ${CAGE_MACOS_LIBC}/include/${cage_zig_arch}-macos.${cage_macos_version}-none -isystem ${CAGE_MACOS_LIBC}/include/any-macos.${cage_macos_version}-any -isystem ${CAGE_MACOS_LIBC}/include/any-macos-any")
# ld64.lld wants -platform_version, which clang passes only to a linker it
# believes new enough.
set(cage_ld "--ld-path=${CAGE_LD64_LLD} -mlinker-version=711 -Wno-unused-command-line-argument")
set(CMAKE_EXE_LINKER_FLAGS_INIT "${cage_ld}")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "${cage_ld}")
set(CMAKE_MODULE_LINKER_FLAGS_INIT "${cage_ld}")

# xxHash and Criterion as pkg-config finds them on a Mac, from the prefix.
set(ENV{PKG_CONFIG_LIBDIR} ${CAGE_MACOS_DEPS}/lib/pkgconfig)
set(ENV{PKG_CONFIG_PATH} "")
set(CMAKE_FIND_ROOT_PATH ${CAGE_MACOS_DEPS})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
