# Compiles through ccache when it is installed, so that a second build of the same sources
# (npm ci in a checkout, then `npm install` of the packed package in test/package, or a
# reinstall) takes its objects from the cache instead of recompiling libtorch's headers.
#
# ccache keys a compile on its command line, and the two builds run in different folders:
# CCACHE_BASEDIR (this source folder) makes ccache rewrite the paths under it to paths relative
# to the build folder, which are the same in both. The N-API bindings' include folders, in the
# installing project's node_modules, are copied under the build folder for the same reason
# (swerl_cacheable_includes below).
#
# -DSWERL_CCACHE=OFF (npx cmake-js compile --CDSWERL_CCACHE=OFF) builds without it; a launcher
# given by the user (CMAKE_CXX_COMPILER_LAUNCHER, as a variable or in the environment) wins.
option(SWERL_CCACHE "Compile through ccache when it is installed" ON)
set(SWERL_CCACHE_ACTIVE OFF)
if(SWERL_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER AND NOT DEFINED ENV{CMAKE_CXX_COMPILER_LAUNCHER})
  find_program(SWERL_CCACHE_PROGRAM ccache)
  if(SWERL_CCACHE_PROGRAM)
    set(_swerl_ccache_basedir "${CMAKE_CURRENT_SOURCE_DIR}")
    if(DEFINED ENV{CCACHE_BASEDIR})
      set(_swerl_ccache_basedir "$ENV{CCACHE_BASEDIR}")
    endif()
    set(_swerl_launcher ${CMAKE_COMMAND} -E env "CCACHE_BASEDIR=${_swerl_ccache_basedir}" ${SWERL_CCACHE_PROGRAM})
    set(CMAKE_CXX_COMPILER_LAUNCHER ${_swerl_launcher})
    set(CMAKE_CUDA_COMPILER_LAUNCHER ${_swerl_launcher})
    set(SWERL_CCACHE_ACTIVE ON)
    message(STATUS "swerl: compiling through ${SWERL_CCACHE_PROGRAM} (base dir ${_swerl_ccache_basedir})")
  endif()
endif()

# swerl_cacheable_includes(<out> <dir>...): with ccache, the headers of these include folders
# copied under the build folder, so that the commands and the preprocessed text ccache keys on
# do not name the folders themselves. For cmake-js's node-api-headers and node-addon-api, which
# live in the installing project's node_modules (outside this source folder when swerl is a
# dependency), that lets the N-API bindings hit the cache too. configure_file re-copies a
# header that changes (CMake re-runs) and leaves an unchanged one alone. Without ccache:
# the folders as given.
function(swerl_cacheable_includes out)
  if(NOT SWERL_CCACHE_ACTIVE)
    set(${out} ${ARGN} PARENT_SCOPE)
    return()
  endif()
  set(result "")
  set(index 0)
  foreach(dir IN LISTS ARGN)
    set(copy "${CMAKE_BINARY_DIR}/swerl-includes/${index}")
    file(GLOB_RECURSE headers RELATIVE "${dir}" "${dir}/*.h" "${dir}/*.hh" "${dir}/*.hpp")
    foreach(header IN LISTS headers)
      configure_file("${dir}/${header}" "${copy}/${header}" COPYONLY)
    endforeach()
    list(APPEND result "${copy}")
    math(EXPR index "${index} + 1")
  endforeach()
  set(${out} ${result} PARENT_SCOPE)
endfunction()
