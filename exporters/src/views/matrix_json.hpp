// The device matrix as JSON, written into a document under construction (topo matrix, and the
// "relations" member of the dump model).
#pragma once

#include <nodetopo/exporters/matrix.hpp>

#include "views/json_writer.hpp"

namespace nodetopo::exporters {

void write_matrix_json(detail::JsonWriter& j, const DeviceMatrix& matrix);

}  // namespace nodetopo::exporters
