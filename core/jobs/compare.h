#pragma once

// The compare use case: one problem measured on two GPUs (or in two contexts), each side a
// session of any recording (a results database, a T4 file, a Kernel Tuner cache) or results a
// front end holds already: per config the time on each and their ratio, the rank correlation,
// and how much each side's winner loses on the other (analysis/devicecompare.h), optionally
// written as CSV. The CLI's `compare` maps its options onto a CompareRequest and prints the
// outcome; the workbench's Compare panel reads its other side with readCompareSide() and
// compares the results on screen with it through runCompare().

#include "analysis/devicecompare.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace tilescope {

struct CompareRequest {
    /// The recordings compared, read when `a` or `b` is null: the session numbered
    /// `sessionA`/`sessionB`, else the newest with results.
    std::string pathA;
    std::string pathB;
    std::optional<std::int64_t> sessionA;
    std::optional<std::int64_t> sessionB;
    std::shared_ptr<const CompareSide> a; ///< side A, read already (the results on screen)
    std::shared_ptr<const CompareSide> b;
    bool labelSessions = true; ///< a side read from a database names its session in its label
    std::size_t top = 10;      ///< the size of the top sets compared
    std::string csvPath;       ///< also write every matched config there as CSV ("" none)
};

/// Reports as the comparison goes. Each may be left empty.
struct CompareEvents {
    /// Which session of a recording was taken when it holds several ("session 3 of 4, the newest
    /// with results").
    std::function<void(const std::string& note)> sessionPicked;
};

struct CompareOutcome {
    std::shared_ptr<const CompareSide> a;
    std::shared_ptr<const CompareSide> b;
    DeviceComparison comparison;
    std::string csvWritten; ///< the CSV file written ("" none)
};

/// One side read from a recording: the session numbered `session`, else the newest with results.
/// Its label is the device and the file ("NVIDIA H200 (h200.db, session 1)"; the session only
/// with `labelSession` and for a database). Throws InputError as readSession() does.
CompareSide readCompareSide(const std::string& path, std::optional<std::int64_t> session = std::nullopt,
                            bool labelSession = true, const CompareEvents& events = {});

/// Runs the comparison. Throws InputError for a recording that cannot be read or has no such
/// session, as compareSides() does (no shared parameter, no config Ok on both sides), and as
/// writeFileAtomically() does for the CSV file.
CompareOutcome runCompare(const CompareRequest& request, const CompareEvents& events = {});

/// Every matched config as CSV: the shared parameters, then time_a_ms, time_b_ms, ratio, rank_a,
/// rank_b; fastest on A first.
std::string comparisonCsv(const DeviceComparison& comparison);

} // namespace tilescope
