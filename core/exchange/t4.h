#pragma once

// T4, the community autotuning results format (schema kernel_tuner/schema/T4/1.0.0/
// results-schema.json), in and out. Tilescope's own fields ride along in a "tilescope" object per
// result and in "metadata", so our T4 imports back to the same results.

#include "model/records.h"

#include <string>

namespace tilescope {

/// Parses a T4 results file. Throws InputError with the file and the place: bad or truncated
/// JSON (line and column), an unknown schema version, a missing required field
/// ("/results/12: missing required field 'invalidity'").
SessionData parseT4(const std::string& text, const std::string& fileName);

/// T4 JSON of one session (2-space indent, one result a line).
std::string writeT4(const SessionData& session);

} // namespace tilescope
