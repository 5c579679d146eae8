#pragma once

// What every reader of recorded results refuses, whatever the format (T4, Kernel Tuner caches,
// Tilescope databases, and so imports, replays, the lab and exports): a time that no kernel can
// take (negative, zero for an Ok result, not finite), a status this build does not know, a
// configuration that names no parameter, a parameter value that is an integer beyond 64 bits.
// A recording is data from other tools and other hands; read leniently, such a result would be
// crowned (a time of -5 ms ranks first) or become another (an unknown status read as ok). Each
// refusal is an InputError naming the file, the entry and the field.

#include "base/jsonreader.h"
#include "model/records.h"

#include <string>

namespace tilescope {

/// How the readers of recordings parse their JSON: integers beyond 64 bits refused (a parameter
/// value of 2**70 would otherwise read as 1.18e21).
JsonReadOptions recordingJsonOptions();

/// A status by Tilescope's name (statusName), as a recording's "tilescope" object carries it;
/// anything else is refused at `node`, naming the statuses there are.
ResultStatus recordedStatus(const JsonNode& node);

/// A recorded time at `node`, a number in the unit that `toMs` converts to milliseconds from;
/// refused when it is negative or, in ms, not finite. 0 passes here: a failed result records no
/// time (checkRecordedResult refuses it for an Ok result).
double recordedTimeMs(const JsonNode& node, double toMs = 1);

/// A recorded parameter value at `node`, as configValueFromJson reads it, but an integer above
/// 2^63 - 1 refused (a config's integers are 64-bit signed; read as a double it would be another
/// value).
ConfigValue recordedParameterValue(const JsonNode& node);

/// Where one recorded result lies in its file, for checkRecordedResult's messages.
struct RecordedPlace {
    std::string file;
    std::string entry;  ///< the result ("/results/3", "/cache/64,2", "results row 17")
    std::string time;   ///< the field its median time came from ("/results/3/measurements/0/value")
    std::string config; ///< the field of its configuration ("/results/3/configuration")
};

/// The checks of a result as read: its configuration names a parameter; an Ok result's median is
/// a time a kernel can take (isMeasurableTime); no time of any result (median, min, max, stdev,
/// the interval's ends) is negative or not finite.
void checkRecordedResult(const ResultRecord& r, const RecordedPlace& place);

/// checkRecordedResult over every result of a session read whole (a database's, one held in
/// memory), each placed by its row: "results row 17, column time_ms" (by its position where it
/// has no id).
void checkRecordedSession(const SessionData& session, const std::string& file);

} // namespace tilescope
