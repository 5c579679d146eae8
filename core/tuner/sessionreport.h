#pragma once

// A session's end in words: the summary the CLI prints after a run (what ran, on what, how far it
// got, the best and why others do not rank), and the short texts it is made of.

#include "model/records.h"
#include "tuner/backendspec.h"
#include "tuner/tuningsession.h"

#include <string>
#include <vector>

namespace tilescope {

/// "ok 12, compile_error 3" (or "none"): a session's results per status.
std::string statusSummary(const StatusCounts& counts);

/// "0.3956 ms (95 %: 0.39-0.4)  33.1 TFLOP/s": a best result's time, its interval when it was
/// measured again, and its objective named `objectiveName`; of a result analysed, not timed, what
/// compiling told in the order `by` ranks it: "occupancy 100 %, no spills, 32 registers (by
/// occupancy; not timed)".
std::string bestResultText(const ResultRecord& best, const std::string& objectiveName,
                           StaticRank by = StaticRank::Occupancy);

/// "a config 85.2 ms of the GPU's time: checking its outputs 55.1 ms (60 of 60 outputs compared
/// on the GPU), timing 25 ms, counters 5.1 ms": where the benchmark time of a config went, as a
/// mean over the configs measured; "" where the backend did not say (a replay, the analysis backend).
std::string benchmarkPartsSentence(const SessionPipeline& pipeline);

/// What the summary says beside the session itself.
struct SessionReportContext {
    std::string problemPath;                   ///< the problem file as given
    std::string database;                      ///< the results database as given
    std::size_t shapeIndex = 0;                ///< the shape the session ran
    std::string objectiveName;                 ///< "TFLOP/s"; "" time only
    BackendSpec spec;                          ///< where the measurements came from
    const Backend* backend = nullptr;          ///< a replay says how many recorded configs it matched
    StaticRank rankBy = StaticRank::Occupancy; ///< how the analysed results ranked (SessionOptions::rankBy)
};

/// The summary of a finished (or cancelled) session.
struct SessionReport {
    std::string text;                  ///< lines for stdout, each ending in a line break
    std::vector<std::string> warnings; ///< for stderr, without "warning: "
    std::vector<std::string> notes;    ///< for stderr, without "note: "
};

/// "Session 3 finished: ...", then one indented line each for the problem, the backend, the
/// strategy, the results, the best, what is implausible, verification, confirmation, the GPU's
/// state, the time and the database.
SessionReport sessionReport(const SessionSummary& summary, const SessionReportContext& context);

} // namespace tilescope
