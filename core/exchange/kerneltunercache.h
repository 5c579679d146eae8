#pragma once

// Kernel Tuner cache files in and out. In: the schemas kernel_tuner/schema/cache/1.0.0, 1.0.1 and
// 1.1.0 and the unversioned caches before them, including caches a killed Kernel Tuner left
// unclosed. Out: a cache that Kernel Tuner's simulation mode replays, with Tilescope's own
// fields riding along so that it imports back to the same results.

#include "model/records.h"

#include <string>

namespace tilescope {

/// Parses a Kernel Tuner cache file. Throws InputError with the file and the place: bad or
/// truncated JSON (line and column), an unknown schema_version (naming the versions this build
/// reads), a missing required field.
SessionData parseKernelTunerCache(const std::string& text, const std::string& fileName);

/// One session as a Kernel Tuner cache file, laid out as Kernel Tuner 1.x writes them (no
/// schema_version, one entry a line) so that its simulation mode replays it: device_name,
/// kernel_name, problem_size (the session's, else its shape's dims), tune_params_keys,
/// tune_params (the problem's value lists when the session carries its problem, else the values
/// the results took), objective "time", and per config under the key Kernel Tuner makes (Python's
/// str() of the values joined by commas) the parameters, "time" (the median, ms), "times",
/// compile_time, verification_time, benchmark_time, strategy_time, framework_time (ms),
/// timestamp, the objective and the metrics by name. A config without a time carries Kernel
/// Tuner's marker in "time" and "__error__": CompilationFailedConfig, RuntimeFailedConfig
/// (launch error, wrong result, crash, timeout) or InvalidConfig (pruned, skipped). Exact values
/// ride along in a "tilescope" object per entry and in the header, so the file imports back to the
/// same results.
std::string writeKernelTunerCache(const SessionData& session);

} // namespace tilescope
