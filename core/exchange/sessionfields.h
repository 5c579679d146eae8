#pragma once

// Tilescope's own fields in the formats of other tools, shared by the T4 and Kernel Tuner cache
// units: the session's metadata (a "tilescope" object in T4's "metadata" and in a cache's header)
// and each result's extension object (its exact values and what the format has no field for),
// written and read back, so that our files import back to the same results. Internal to
// core/exchange/.
//
// Units: Tilescope keeps times in ms and costs (compile, benchmark) in seconds; T4 and Kernel
// Tuner caches carry everything in ms, as Kernel Tuner writes them.

#include "base/jsonreader.h"
#include "model/records.h"

#include <nlohmann/json_fwd.hpp>

#include <string>
#include <vector>

namespace tilescope::exchange {

/// A number as JSON writes it, but NaN and infinities as null.
nlohmann::ordered_json jsonNumber(double v);
/// The member `key` of `object` when it is a number, else `fallback`.
double numberOr(const nlohmann::ordered_json& object, const char* key, double fallback);
/// The numbers of a JSON array (other items and other values skipped).
std::vector<double> jsonNumbers(const nlohmann::ordered_json& array);
/// Median, min, max and sample stdev of runtimes in ms.
TimingStats timingStatsOf(const std::vector<double>& runtimes);

/// The session's fields as Tilescope's metadata object.
nlohmann::ordered_json sessionMetadata(const SessionInfo& info);
/// Reads them back into `info` (fields of the wrong type are skipped; integers out of range throw
/// InputError at their place).
void readSessionMetadata(const JsonNode& meta, SessionInfo& info);

/// A result's exact values and what the format has no field for. `withMetrics`: also the
/// metrics (for formats that have no place of their own for them).
nlohmann::ordered_json resultExtension(const ResultRecord& r, bool withMetrics);
/// Reads them back into `r`, over what the format's own fields said, its status and times as
/// every recording's are read (exchange/recordcheck.h: an unknown status, a negative time are
/// refused). `timeField`, when given, becomes the pointer of the median time where the object
/// has one.
void readResultExtension(const JsonNode& ext, ResultRecord& r, std::string* timeField = nullptr);

/// What every recording read goes through: messages without NUL or control bytes, and the times
/// that cannot be right made implausible (analysis/plausibility.h), the session's message saying
/// what was checked.
SessionData finishRecording(SessionData data);

} // namespace tilescope::exchange
