# nodetopo_grpc_library(<target> ROOT <dir> PROTOS <file>...)
#
# Generates the protobuf and gRPC C++ code of the .proto files (paths relative to ROOT, which is
# also protoc's import path) at build time with Debian's protoc and grpc_cpp_plugin, into
# ${CMAKE_CURRENT_BINARY_DIR}/generated/, and compiles it into the static library <target>.
# Generated code is never committed. The target does not link nodetopo_options, so -Werror and
# the project's warnings never apply to code we did not write; its include folder is SYSTEM for
# the same reason.
find_package(Protobuf REQUIRED)
find_package(gRPC CONFIG REQUIRED)
find_program(NODETOPO_PROTOC protoc REQUIRED)
find_program(NODETOPO_GRPC_CPP_PLUGIN grpc_cpp_plugin REQUIRED)

function(nodetopo_grpc_library target)
  cmake_parse_arguments(ARG "" "ROOT" "PROTOS" ${ARGN})
  set(out "${CMAKE_CURRENT_BINARY_DIR}/generated")
  file(MAKE_DIRECTORY "${out}")
  set(sources)
  foreach(proto IN LISTS ARG_PROTOS)
    string(REGEX REPLACE "\\.proto$" "" stem "${proto}")
    set(gen "${out}/${stem}.pb.cc" "${out}/${stem}.pb.h" "${out}/${stem}.grpc.pb.cc"
            "${out}/${stem}.grpc.pb.h")
    add_custom_command(
      OUTPUT ${gen}
      COMMAND "${NODETOPO_PROTOC}" "--proto_path=${ARG_ROOT}" "--cpp_out=${out}"
              "--grpc_out=${out}" "--plugin=protoc-gen-grpc=${NODETOPO_GRPC_CPP_PLUGIN}"
              "${ARG_ROOT}/${proto}"
      DEPENDS "${ARG_ROOT}/${proto}"
      COMMENT "protoc ${proto}"
      VERBATIM)
    list(APPEND sources "${out}/${stem}.pb.cc" "${out}/${stem}.grpc.pb.cc")
  endforeach()
  add_library(${target} STATIC ${sources})
  target_include_directories(${target} SYSTEM PUBLIC "${out}")
  target_link_libraries(${target} PUBLIC gRPC::grpc++ protobuf::libprotobuf)
  # Generated code: no project warnings, and none of the compiler's either.
  target_compile_options(${target} PRIVATE -w)
endfunction()
