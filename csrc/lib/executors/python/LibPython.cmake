# libpython of the interpreter xacc is built for (Python3_EXECUTABLE), as the
# imported target xacc_libpython: the embedded interpreter must be the one
# whose site-packages hold torch and matplotlib, not whichever libpython the
# system search finds first. Not defined when that interpreter has no shared
# libpython (then the python executors are not built).
if(NOT TARGET xacc_libpython)
  execute_process(
    COMMAND ${Python3_EXECUTABLE} -c
      "import sysconfig, os; d = sysconfig.get_config_var('LIBDIR') or ''; n = sysconfig.get_config_var('LDLIBRARY') or ''; print(os.path.join(d, n) if sysconfig.get_config_var('Py_ENABLE_SHARED') else '')"
    OUTPUT_VARIABLE XACC_LIBPYTHON OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(XACC_LIBPYTHON AND EXISTS "${XACC_LIBPYTHON}")
    add_library(xacc_libpython SHARED IMPORTED GLOBAL)
    set_target_properties(xacc_libpython PROPERTIES IMPORTED_LOCATION "${XACC_LIBPYTHON}")
    message(STATUS "xacc: embedding ${XACC_LIBPYTHON} in the python executors")
  else()
    message(STATUS "xacc: ${Python3_EXECUTABLE} has no shared libpython: not building the python executors")
  endif()
endif()
