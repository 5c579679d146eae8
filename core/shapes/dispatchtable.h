#pragma once

// Shapes as an axis: the shape x config matrix of measured times, and the dispatch table chosen
// from it, the smallest set of configs (or the best of at most K) such that every tuned shape
// runs within a stated regret of its own best; the rule that maps any shape to an entry (the
// nearest tuned shape), and a C++ header that dispatches by it.

#include "analysis/regime.h"
#include "model/records.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tilescope {

/// Median times of configs on shapes, from sessions of one kernel at several shapes.
struct ShapeConfigMatrix {
    std::string kernel;
    std::vector<std::string> dimNames;                  ///< the shapes' names, in the first session's order
    std::vector<std::vector<std::int64_t>> shapes;      ///< per shape, its value per dim name
    std::vector<ConfigValues> configs;                  ///< every config measured Ok on some shape
    std::vector<std::vector<std::optional<double>>> ms; ///< [shape][config]; nullopt: not measured Ok there

    std::string shapeLabel(std::size_t shape) const; ///< "M=1 N=4096 K=4096"
    /// The shape's fastest measured time (every shape has one: a shape without any Ok result is
    /// not in the matrix).
    double bestMs(std::size_t shape) const;
    /// time / best - 1 of `config` on `shape`; nullopt where it was not measured.
    std::optional<double> regret(std::size_t shape, std::size_t config) const;
    /// Measured cells, of shapes x configs.
    std::size_t measuredCells() const;
};

/// The matrix of `kernel`'s sessions (all of them when `kernel` is empty and they are of one
/// kernel): one row per shape (sessions of the same shape together; a config measured in
/// several keeps its lowest median), one column per config that ran correctly somewhere.
/// Throws InputError (naming `source`) when the sessions hold several kernels and none is named,
/// when the named kernel has no session, when their shapes have different names, or when no
/// config ran correctly. Rows are sorted by their dims.
ShapeConfigMatrix buildShapeConfigMatrix(const std::vector<SessionData>& sessions, const std::string& kernel,
                                         const std::string& source);

/// A dispatch table: a few configs, and for each tuned shape the entry it runs.
struct DispatchTable {
    std::vector<std::size_t> entries; ///< columns of the matrix, in the order chosen
    std::vector<std::size_t> choice;  ///< per shape: the index in `entries` of its fastest entry
    std::vector<double> regret;       ///< per shape: its entry's time / the shape's best - 1
    double worstRegret = 0;
    double meanRegret = 0;
    /// Whether the table is proven optimal (the search finished); false when the search hit its
    /// limit and the table is the greedy one (still within the bound, maybe not the smallest).
    bool proven = true;
};

/// The smallest table that runs every shape within `maxRegret` (0.03 for 3 %) of its own best;
/// among tables of that size, the lowest worst regret, then the lowest mean. A shape whose
/// best is the only config within the bound still gets it, so a table always exists.
DispatchTable planWithinRegret(const ShapeConfigMatrix& matrix, double maxRegret);

/// The table of at most `maxEntries` configs (at least 1) with the lowest worst regret (then the
/// lowest mean): the smallest regret bound that planWithinRegret meets with that many entries.
/// Where no `maxEntries` configs were measured on every shape between them, the smallest table
/// that was (it has more entries: the caller says so).
DispatchTable planWithEntries(const ShapeConfigMatrix& matrix, std::size_t maxEntries);

/// How far apart two shapes are: the sum over their dims of |log2(a) - log2(b)|, values below 1
/// counting as 1 (dims beyond the shorter one are not counted). The one measure of nearness for
/// dispatch and for seeding a shape's search.
double shapeDistance(const std::vector<std::int64_t>& a, const std::vector<std::int64_t>& b);

/// The dispatch rule for any shape: the tuned shape nearest to it (the sum over dims of
/// |log2(d) - log2(tuned d)|; ties to the earlier tuned shape), whose entry it runs. Returns the
/// tuned shape's row. `dims` are in the matrix's dimNames order; values below 1 count as 1.
std::size_t nearestShape(const ShapeConfigMatrix& matrix, const std::vector<std::int64_t>& dims);

/// The spread of each shape's configs in `sessions` of `kernel` (as buildShapeConfigMatrix
/// picks them), in the matrix's shape order; a config measured in several sessions counts once,
/// with its lowest median and that result's spread. A result without a spread counts as 0.5 %.
std::vector<ShapeSpread> shapeSpreads(const std::vector<SessionData>& sessions, const ShapeConfigMatrix& matrix);

/// The regime of one shape: its spread, its best config's roofline, and the verdict in words.
struct ShapeRegime {
    ShapeSpread spread;
    Roofline roofline; ///< of the shape's best config, on the device of the session that measured it
    std::string verdict;
};

/// Per shape of `matrix` (in its order): shapeSpreads() and the roofline of its best config, from
/// the problem and device of a session at that shape (the problem as the session recorded it;
/// none known for sessions without one, such as imports).
std::vector<ShapeRegime> shapeRegimes(const std::vector<SessionData>& sessions, const ShapeConfigMatrix& matrix);

/// Shapes seen in production and how often: the distribution buckets are planned for.
struct ShapeCount {
    std::vector<std::int64_t> dims; ///< in the order of the distribution's dim names
    double count = 0;
};

/// Canonical shapes to tune instead of every shape seen: each seen shape runs padded up to the
/// smallest bucket that holds it (every dim at least its own).
struct BucketPlan {
    std::vector<std::vector<std::int64_t>> buckets; ///< smallest first
    std::vector<std::size_t> bucketOf;              ///< per seen shape: its bucket
    /// The work padding adds, weighted by the counts: sum of count * (volume(bucket) /
    /// volume(shape) - 1) over sum of counts (0.25: a quarter more work on average).
    double padding = 0;
    double worstPadding = 0; ///< the largest volume(bucket) / volume(shape) - 1 of a seen shape
};

/// Reads a distribution as CSV: a header of dim names and a `count` column (any order, names
/// as the problem's shapes name them), one shape a row. Throws InputError with the line for a
/// bad row, a missing count column, a negative count.
std::pair<std::vector<std::string>, std::vector<ShapeCount>> readShapeDistribution(const std::string& csvText,
                                                                                   const std::string& fileName);

/// At most `maxBuckets` buckets for `seen`, drawn from the seen shapes with each dim rounded up
/// to a power of two (the elementwise largest always among them, so that every shape fits),
/// chosen greedily to lower the weighted padding, then improved by swapping one bucket at a time
/// while that lowers it.
BucketPlan planBuckets(const std::vector<ShapeCount>& seen, std::size_t maxBuckets);

/// A self-contained C++17 header (only <cstdint>, <cmath> and <cstdlib>): in namespace
/// `guardName`::kernel, a Config struct, kEntries (the table's configs), kShapes (the tuned
/// shapes and the entry each runs), and `const Config& dispatch(dims...)`: the entry of the
/// nearest tuned shape, as nearestShape() chooses it, for every shape (no shape is left out: the
/// nearest tuned one is the fallback). The regrets are in comments and in kShapes.
std::string writeDispatchHeader(const ShapeConfigMatrix& matrix, const DispatchTable& table,
                                const std::string& guardName = "tilescope_dispatch");

/// Python for triton.autotune: KEY (the dim names), ENTRIES and TUNED_SHAPES (each tuned shape's
/// dims, entry and regret), `pick(*dims)` (the entry of the nearest tuned shape, as
/// nearestShape() chooses it), `configs()` (the entries as triton.Config, importing triton only
/// when called) and `prune(configs, named_args, **kwargs)` for `prune_configs_by=
/// {"early_config_prune": prune}`: it keeps the one config the table gives the call's shape, so
/// autotune runs it without benchmarking the others. The dims must be named as the kernel's
/// arguments are.
std::string writeDispatchTriton(const ShapeConfigMatrix& matrix, const DispatchTable& table);

} // namespace tilescope
