#pragma once

// A results database a real TuningSession wrote by replaying the demo recording (a real H200
// session of sgemm at M = N = K = 2048): session 1 the whole space replayed (exhaustive), session 2
// 100 configs drawn at random (seed 7). For the suites of the use cases that read databases.

#include "measure/replay/replaybackend.h"
#include "spec/tuningproblem.h"
#include "store/resultstore.h"
#include "tuner/tuningsession.h"

#include <filesystem>
#include <string>

namespace tilescope::test {

inline const std::string kDemoRecording = TILESCOPE_SOURCE_DIR "/resources/demo/sgemm-h200-2048.t4.json.gz";
inline const std::string kDemoProblem = TILESCOPE_SOURCE_DIR "/kernels/sgemm/sgemm.json";
inline constexpr std::size_t kDemoShape = 1; // M = N = K = 2048, where the demo was recorded

/// Writes the two sessions into a new database at `db`.
inline void writeDemoDatabase(const std::filesystem::path& db) {
    const TuningProblem problem = TuningProblem::load(kDemoProblem);
    ResultStore store = ResultStore::open(db);
    SessionOptions options;
    options.shapeIndex = kDemoShape;
    options.compile = SessionOptions::Compile::Never;
    options.backendLabel = "replay:" + kDemoRecording;
    ReplayBackend everything(kDemoRecording);
    TuningSession(problem, everything, store, options).run();

    options.strategy = "random";
    options.seed = 7;
    options.budget.configs = 100;
    ReplayBackend some(kDemoRecording);
    TuningSession(problem, some, store, options).run();
}

} // namespace tilescope::test
