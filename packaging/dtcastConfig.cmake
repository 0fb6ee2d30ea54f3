# CMake package file for dtcast: find_package(dtcast) gives the imported target dtcast::dtcast
# (the shared library) and dtcast::dtcast_static.
get_filename_component(_dtcast_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)

find_library(DTCAST_SHARED_LIBRARY NAMES dtcast PATHS "${_dtcast_prefix}/lib" NO_DEFAULT_PATH)
find_library(DTCAST_STATIC_LIBRARY NAMES libdtcast.a PATHS "${_dtcast_prefix}/lib" NO_DEFAULT_PATH)
find_path(DTCAST_INCLUDE_DIR dtcast.h PATHS "${_dtcast_prefix}/include" NO_DEFAULT_PATH)

include(CMakeFindDependencyMacro)
find_dependency(Threads)

if(DTCAST_SHARED_LIBRARY AND NOT TARGET dtcast::dtcast)
  add_library(dtcast::dtcast SHARED IMPORTED)
  set_target_properties(dtcast::dtcast PROPERTIES
    IMPORTED_LOCATION "${DTCAST_SHARED_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${DTCAST_INCLUDE_DIR}")
endif()
if(DTCAST_STATIC_LIBRARY AND NOT TARGET dtcast::dtcast_static)
  add_library(dtcast::dtcast_static STATIC IMPORTED)
  set_target_properties(dtcast::dtcast_static PROPERTIES
    IMPORTED_LOCATION "${DTCAST_STATIC_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${DTCAST_INCLUDE_DIR}"
    INTERFACE_LINK_LIBRARIES "m;Threads::Threads")
endif()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(dtcast REQUIRED_VARS DTCAST_INCLUDE_DIR DTCAST_SHARED_LIBRARY)
unset(_dtcast_prefix)
