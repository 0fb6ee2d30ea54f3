# Runs at install time (install(SCRIPT) in CMakeLists.txt): writes dtcast.pc from
# packaging/dtcast.pc.in for the prefix of this install (cmake --install --prefix P), the paths
# as the Makefile's install rule writes them.
# Set before it: DTCAST_SOURCE_DIR, DTCAST_PC_OUT (the file to write), DTCAST_LIBDIR and
# DTCAST_INCDIR (relative to the prefix, or absolute), VERSION.
set(PREFIX "${CMAKE_INSTALL_PREFIX}")
foreach(dir LIBDIR INCDIR)
  if(IS_ABSOLUTE "${DTCAST_${dir}}")
    set(${dir} "${DTCAST_${dir}}")
  else()
    set(${dir} "${CMAKE_INSTALL_PREFIX}/${DTCAST_${dir}}")
  endif()
endforeach()
configure_file("${DTCAST_SOURCE_DIR}/packaging/dtcast.pc.in" "${DTCAST_PC_OUT}" @ONLY)
