# Built-in kernels compiled ahead of time by the vendor's compiler and embedded in a plugin, so
# they run without a run-time compiler and without a first-use compile. Each entry of
# GPUPORT_BUILTIN_KERNELS is "path/in/project.gp|-DNAME=VALUE -DOTHER" (options may be empty;
# "a.gp+b.gp" joins files into one source); the plugin hands out the binary when a program's
# source, composed as core composes it (the options as #define lines after the prelude),
# matches an entry exactly.
#
# gpuport_prebuilt(OUT_C PRELUDE KIND COMPILER FLAGS... [ALSO KIND COMPILER FLAGS...]): KIND is
# CUDA (nvcc --fatbin), HIP (hipcc --genco) or HIP_NVIDIA (nvcc --fatbin with
# kernels/hip_nvidia.h first: HIP's NVIDIA platform); PRELUDE the list of prelude files, joined
# in order as the plugin joins them; ALSO adds a second compiler's binaries to the same table
# (the plugin takes the first that loads). With no COMPILER a set adds nothing; with none at all
# the table is empty and everything is compiled at run time.
function(gpuport_prebuilt out_c prelude)
  set(dir ${CMAKE_CURRENT_BINARY_DIR}/prebuilt)
  set(manifest "")
  set(bins "")
  set(i 0)
  set(sets "")
  set(current "")
  foreach(a IN LISTS ARGN)
    if(a STREQUAL "ALSO")
      list(APPEND sets "${current}")
      set(current "")
    else()
      string(APPEND current "${a}|")
    endif()
  endforeach()
  list(APPEND sets "${current}")
  foreach(set_args IN LISTS sets)
    string(REPLACE "|" ";" set_args "${set_args}")
    list(POP_FRONT set_args kind compiler)
    if(NOT compiler)
      continue()
    endif()
    if(kind STREQUAL "HIP")
      set(code_kind 3) # GP__CH_CODE_HIP
    else()
      set(code_kind 4) # GP__CH_CODE_FATBIN
    endif()
    foreach(entry IN LISTS GPUPORT_BUILTIN_KERNELS)
      string(FIND "${entry}" "|" bar)
      string(SUBSTRING "${entry}" 0 ${bar} file)
      math(EXPR after "${bar} + 1")
      string(SUBSTRING "${entry}" ${after} -1 opts)
      string(STRIP "${opts}" opts)
      string(REGEX REPLACE " +" " " opts "${opts}")
      # The options become #defines after the prelude: on the command line they would reach
      # the vendor's own headers too (a -DT=float breaks HIP's templates).
      set(wrapper "")
      foreach(p IN LISTS prelude)
        string(APPEND wrapper "#include \"${p}\"\n")
      endforeach()
      set(defines "")
      separate_arguments(words UNIX_COMMAND "${opts}")
      foreach(w IN LISTS words)
        string(REGEX REPLACE "^-D([^=]+)=?(.*)$" "\\1;\\2" nv "${w}")
        list(GET nv 0 name)
        list(GET nv 1 value)
        if(value STREQUAL "")
          set(value 1)
        endif()
        string(APPEND defines "#define ${name} ${value}\n")
      endforeach()
      string(APPEND wrapper "${defines}")
      string(REPLACE "+" ";" parts "${file}")
      set(paths "")
      foreach(part IN LISTS parts)
        string(APPEND wrapper "#include \"${PROJECT_SOURCE_DIR}/${part}\"\n")
        list(APPEND paths ${PROJECT_SOURCE_DIR}/${part})
      endforeach()
      file(GENERATE OUTPUT ${dir}/${i}.cu CONTENT "${wrapper}")
      set(extra "")
      set(include_flags "")
      if(kind STREQUAL "HIP_NVIDIA")
        set(extra ${PROJECT_SOURCE_DIR}/kernels/hip_nvidia.h)
        set(include_flags -include ${extra})
      endif()
      if(kind STREQUAL "HIP")
        set(cmd ${compiler} -x hip --genco ${set_args} -o ${dir}/${i}.bin ${dir}/${i}.cu)
      else()
        set(cmd ${compiler} -x cu --fatbin ${set_args} ${include_flags} -o ${dir}/${i}.bin ${dir}/${i}.cu)
      endif()
      add_custom_command(OUTPUT ${dir}/${i}.bin COMMAND ${cmd}
        DEPENDS ${paths} ${prelude} ${extra} ${dir}/${i}.cu
        COMMENT "Prebuilding ${file} ${opts} for ${kind}" VERBATIM)
      string(APPEND manifest "set(SOURCES_${i} \"${paths}\")\nset(KIND_${i} ${code_kind})\n"
                             "set(HEAD_${i} \"${defines}\")\nlist(APPEND BINS \"${dir}/${i}.bin\")\n")
      list(APPEND bins ${dir}/${i}.bin)
      math(EXPR i "${i} + 1")
    endforeach()
  endforeach()
  file(GENERATE OUTPUT ${dir}/manifest.cmake CONTENT "${manifest}")
  add_custom_command(OUTPUT ${out_c}
    COMMAND ${CMAKE_COMMAND} -DMANIFEST=${dir}/manifest.cmake -DOUT=${out_c}
            -P ${PROJECT_SOURCE_DIR}/cmake/prebuilt_table.cmake
    DEPENDS ${bins} ${dir}/manifest.cmake ${PROJECT_SOURCE_DIR}/cmake/prebuilt_table.cmake
    COMMENT "Embedding ${i} prebuilt kernels" VERBATIM)
endfunction()
