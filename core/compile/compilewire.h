#pragma once

// A compile request and its result as they travel to another process and back: to an NVRTC
// helper of this machine (compile/nvrtchelper.h) and to the ranks of an MPI job
// (measure/clusterprotocol.h). A JSON object for the fields, the bytes (the source, the cubin)
// beside it in a blob: JSON text holds UTF-8 only, and a source's bytes are part of its key.

#include "compile/compiler.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>
#include <vector>

namespace tilescope {

/// The request's fields; its source goes in the blob ("source_bytes" says how long it is).
nlohmann::json compileRequestJson(const CompileRequest& request);
/// The request compileRequestJson() describes, with `source` as its source. Throws
/// std::runtime_error (and nlohmann's exceptions) for an object that is not one, or a source of
/// another size than it says.
CompileRequest compileRequestOf(const nlohmann::json& j, std::string source);

/// The result's fields, its cubin's size in place of the cubin (which goes in the blob); the log
/// and whether the failure is transient only `withLog`.
nlohmann::json compileResultJson(const CompileResult& result, bool withLog);
/// The result compileResultJson() describes, its cubin read from `blob` at `offset` (moved past
/// it). Throws std::runtime_error for a cubin shorter than its size says.
CompileResult compileResultOf(const nlohmann::json& j, const std::vector<char>& blob, std::size_t& offset);

/// What ptxas reported, as JSON ("registers", "spill_stores", ...), and back; fields missing from
/// `j` keep their defaults.
nlohmann::json staticInfoJson(const StaticInfo& info);
StaticInfo staticInfoOf(const nlohmann::json& j);

} // namespace tilescope
