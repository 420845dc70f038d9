# epic_pic_clone(TARGET OUT_VAR): a position-independent copy of the static library TARGET and
# of every static library of the project it links, transitively, for linking into a shared
# object. The copy `<TARGET>_pic` has the original's sources (its per-source COMPILE_OPTIONS and
# COMPILE_DEFINITIONS included), include directories, definitions, options and usage
# requirements; imported and interface libraries are linked as they are. OUT_VAR names the copy.
# The copies are EXCLUDE_FROM_ALL: built only when something links them.
function(epic_pic_clone target out_var)
  set(clone ${target}_pic)
  set(${out_var} ${clone} PARENT_SCOPE)
  if(TARGET ${clone})
    return()
  endif()
  get_target_property(type ${target} TYPE)
  if(NOT type STREQUAL "STATIC_LIBRARY")
    message(FATAL_ERROR "epic_pic_clone: ${target} is a ${type}, expected a static library")
  endif()
  get_target_property(src_dir ${target} SOURCE_DIR)
  get_target_property(sources ${target} SOURCES)
  set(copied "")
  set(generated FALSE)
  foreach(s IN LISTS sources)
    if(NOT s MATCHES "\\.(c|cc|cpp|cxx)$")
      continue()  # headers, .proto files (their generated code is listed too)
    endif()
    if(IS_ABSOLUTE "${s}")
      set(path "${s}")
    else()
      set(path "${src_dir}/${s}")
    endif()
    get_source_file_property(is_generated "${path}" DIRECTORY "${src_dir}" GENERATED)
    if(is_generated)
      set(generated TRUE)
    endif()
    foreach(prop COMPILE_OPTIONS COMPILE_DEFINITIONS)
      get_source_file_property(value "${path}" DIRECTORY "${src_dir}" ${prop})
      if(value)
        set_source_files_properties("${path}" DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}"
                                    PROPERTIES ${prop} "${value}")
      endif()
    endforeach()
    list(APPEND copied "${path}")
  endforeach()

  add_library(${clone} STATIC EXCLUDE_FROM_ALL ${copied})
  set_target_properties(${clone} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  foreach(prop INCLUDE_DIRECTORIES COMPILE_DEFINITIONS COMPILE_OPTIONS COMPILE_FEATURES
               INTERFACE_INCLUDE_DIRECTORIES INTERFACE_SYSTEM_INCLUDE_DIRECTORIES
               INTERFACE_COMPILE_DEFINITIONS INTERFACE_COMPILE_OPTIONS
               INTERFACE_COMPILE_FEATURES)
    get_target_property(value ${target} ${prop})
    if(value)
      set_property(TARGET ${clone} PROPERTY ${prop} "${value}")
    endif()
  endforeach()
  if(generated)
    add_dependencies(${clone} ${target})  # its generated sources (protoc) come from there
  endif()

  # Every dependency is PUBLIC on the copy: a static library's private dependencies are the
  # shared object's to link anyway.
  get_target_property(links ${target} LINK_LIBRARIES)
  set(mapped "")
  foreach(dep IN LISTS links)
    if(dep STREQUAL "epic_lsan_known_leaks" OR NOT dep)
      continue()  # the sanitizer build's suppressions: not position-independent, not ours
    endif()
    if(TARGET ${dep})
      get_target_property(dep_type ${dep} TYPE)
      get_target_property(dep_imported ${dep} IMPORTED)
      if(dep_type STREQUAL "STATIC_LIBRARY" AND NOT dep_imported)
        epic_pic_clone(${dep} dep_clone)
        list(APPEND mapped ${dep_clone})
        continue()
      endif()
    endif()
    list(APPEND mapped ${dep})
  endforeach()
  target_link_libraries(${clone} PUBLIC ${mapped})
endfunction()
