# NODETOPO_ORDER_TEXT: topo linked with the functions that `topo dump` runs placed next to each
# other (docs/performance.md, round 18).
#
# A run executes about 600 of topo's functions, spread over 4 MiB of text; each page fault maps
# the 64 KiB around it, so a run faults on about 30 windows of text, a fixed cost of every run.
# cmake/text_order.py records which functions run (callgrind, on a twin of topo linked the usual
# way, dumping two mock hosts) and lld lays them out first, in one stretch. Only the layout
# changes: the same objects, the same code.
#
# It needs lld (`-fuse-ld=lld`, for --symbol-ordering-file; GNU ld 2.40 has no such option) and
# valgrind; scripts/install-deps.sh installs both. Without them, or with the option off, topo is
# linked as before, and configure says so.
option(NODETOPO_ORDER_TEXT
  "Link topo with the functions topo dump runs placed together (lld and valgrind)" OFF)
# The linker orders sections, so each function needs one of its own (the release preset's flags
# have it already; the CI build's would otherwise order whole files). Included before the
# targets are defined, this reaches every object.
if(NODETOPO_ORDER_TEXT)
  add_compile_options(-ffunction-sections)
endif()

# nodetopo_order_text(TARGET TWIN): TARGET is linked in the order recorded on TWIN, an executable
# built from the same sources and libraries but linked without an order.
function(nodetopo_order_text target twin)
  if(NOT NODETOPO_ORDER_TEXT)
    return()
  endif()
  find_program(NODETOPO_VALGRIND valgrind)
  find_package(Python3 COMPONENTS Interpreter)
  include(CheckLinkerFlag)
  check_linker_flag(CXX "-fuse-ld=lld" NODETOPO_HAVE_LLD)
  if(NOT NODETOPO_VALGRIND OR NOT NODETOPO_HAVE_LLD OR NOT Python3_Interpreter_FOUND)
    message(WARNING "NODETOPO_ORDER_TEXT is on but lld, valgrind or python3 is missing "
                    "(scripts/install-deps.sh installs them): ${target} is linked without an order")
    return()
  endif()

  set(order "${CMAKE_CURRENT_BINARY_DIR}/${target}.text-order")
  add_custom_command(
    OUTPUT "${order}"
    COMMAND Python3::Interpreter "${PROJECT_SOURCE_DIR}/cmake/text_order.py"
            --valgrind "${NODETOPO_VALGRIND}" "$<TARGET_FILE:${twin}>" "${order}"
    DEPENDS ${twin} "${PROJECT_SOURCE_DIR}/cmake/text_order.py"
    COMMENT "Recording the functions ${target} dump runs, for its link order (callgrind)"
    VERBATIM)
  add_custom_target(${target}-text-order DEPENDS "${order}")
  add_dependencies(${target} ${target}-text-order)
  # --no-mmap-output-file: lld otherwise writes the executable through a shared mapping, which
  # leaves it in the page cache as 4 KiB pages; written with write(), as a package manager or an
  # image layer writes it, it lies in large folios. Until the cache drops it, each run of the
  # freshly linked topo then paid more per page fault: about 2 % of the dump of a small capture
  # (docs/performance.md, round 23), charged to the build, not to the code.
  target_link_options(${target} PRIVATE -fuse-ld=lld "LINKER:--symbol-ordering-file=${order}"
                      "LINKER:--no-warn-symbol-ordering" "LINKER:--no-mmap-output-file")
  set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS "${order}")
  set_property(TARGET ${target} PROPERTY NODETOPO_TEXT_ORDER "${order}")
endfunction()
