#pragma once

// The same problem measured on two GPUs (or in two contexts): per config the time on each and
// their ratio, the rank correlation of the two orders, and how much each side's winner loses on
// the other. Configs are matched on the parameters both sessions have; a parameter only one side
// has is left out when it takes one value there (Kernel Tuner's nvml_gr_clock, say), and reduced
// to the side's best config otherwise. Only configs Ok on both sides count.

#include "model/records.h"

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace tilescope {

/// One side of a comparison: a session and its results.
struct CompareSide {
    std::string label; ///< for people: "NVIDIA H200 (h200.db, session 1)"
    SessionInfo info;
    std::vector<ResultRecord> results;
};

struct ComparedConfig {
    ConfigValues config; ///< the shared parameters' values
    double timeA = 0;    ///< median ms on A
    double timeB = 0;
    double ratio = 0; ///< timeB / timeA
    double rankA = 0; ///< 1 = fastest among the common configs (ties share the mean rank)
    double rankB = 0;
};

struct WinnerTransfer {
    ConfigValues config;                                                          ///< the winner on one side
    double timeThere = 0;                                                         ///< its time on the other side
    double bestThere = 0;                                                         ///< the other side's best time
    double loss() const { return bestThere > 0 ? timeThere / bestThere - 1 : 0; } ///< 0.05: 5 % slower
    double rankThere = 0;                                                         ///< its rank on the other side
};

struct DeviceComparison {
    std::string labelA;
    std::string labelB;
    std::vector<std::string> shared;     ///< parameters matched on
    std::vector<std::string> leftOut;    ///< for people: "nvml_gr_clock (only B; always 1080)"
    std::vector<ComparedConfig> configs; ///< Ok on both, fastest on A first
    std::size_t okA = 0;                 ///< Ok configs on A (after reduction)
    std::size_t okB = 0;
    double spearman = 0; ///< rank correlation of the two orders (NaN with fewer than 3 configs)
    double medianRatio = 0;
    double minRatio = 0;
    double maxRatio = 0;
    std::optional<WinnerTransfer> aOnB; ///< A's winner measured on B
    std::optional<WinnerTransfer> bOnA;
    std::size_t topK = 0;       ///< size of the top sets below
    std::size_t topOverlap = 0; ///< configs in both sides' top topK
    std::string sizeNote;       ///< "" or a warning: the sessions measured different problem sizes
};

/// Compares two sides. Throws InputError when they share no parameter or no config is Ok on both.
DeviceComparison compareSides(const CompareSide& a, const CompareSide& b, std::size_t topK = 10);

/// Spearman's rank correlation of two equally long series (average ranks for ties); NaN with
/// fewer than 3 values or when a series is constant.
double spearmanCorrelation(const std::vector<double>& x, const std::vector<double>& y);

/// The summary for people, a few lines: the match, the ratio, the correlation, the winners' losses.
std::vector<std::string> comparisonSentences(const DeviceComparison& c);

} // namespace tilescope
