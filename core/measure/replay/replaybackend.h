#pragma once

// A backend that answers from a recording instead of a GPU (Kernel Tuner's simulation mode):
// a Tilescope database, a T4 results file or a Kernel Tuner cache. Each config gets the
// recorded outcome, timing, metrics and static info, and the recorded compile and benchmark
// times, so a replayed session also tells how long the real one took. Configs the recording
// lacks come back Skipped ("absent from the recording").

#include "measure/backend.h"
#include "model/records.h"

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tilescope {

struct ReplayOptions {
    /// Testing aid: wall time spent per config, so that a replayed run lasts long enough to be
    /// interrupted (the CLI's hidden --replay-delay-ms). Cancellation cuts it short.
    std::chrono::milliseconds delay{0};
    /// Spend this many times each config's recorded benchmark time as wall time (0: none): a
    /// worker that is as busy as the recorded GPU was, for measuring how a session scales with
    /// workers (the CLI's hidden --replay-pace). Added to `delay`.
    double pace = 0;
    /// Which session of a database to replay; default: the newest that matches the problem.
    std::optional<std::int64_t> session;
};

class ReplayBackend : public Backend {
public:
    /// Reads the recording (throws InputError for a file that is not one, or a damaged one).
    explicit ReplayBackend(const std::filesystem::path& recording, ReplayOptions options = {});
    /// Replays sessions held in memory; `name` stands for the file in messages. Throws InputError
    /// for a result that no recording may hold (checkRecordedSession).
    ReplayBackend(std::vector<SessionData> sessions, std::string name, ReplayOptions options = {});
    ~ReplayBackend() override;

    /// Picks the recorded session that matches the problem (kernel name, parameter names, shape
    /// or ProblemSize) and indexes its results by config. Throws InputError when none matches,
    /// saying why, or when none of its configs is in the space.
    BackendInfo open(const TuningProblem& problem, std::size_t shapeIndex, const ConfigSpace& space) override;
    void measure(std::span<const MeasureItem> items, const MeasureControl& control, const MeasureSink& sink) override;

    /// The session replayed (after open).
    const SessionInfo& recordedSession() const;
    /// The session replayed with its results, as recorded (after open).
    const SessionData& recordedData() const;
    /// Recorded results whose config is in the space, and those that are not (after open).
    std::size_t matchedResults() const;
    std::size_t unmatchedResults() const;

private:
    struct State;
    std::unique_ptr<State> m_state;
};

} // namespace tilescope
