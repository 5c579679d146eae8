#pragma once

// The host side of kernel arguments: what a buffer holds before the first launch, the 16-bit
// float conversions, and the comparison of an output with its reference. No CUDA here, so all of
// it is tested without a GPU; the worker moves the bytes to and from the device.

#include "spec/launchplan.h"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tilescope {

/// The seed of a Random fill: the argument's RandomSeed, else one derived from the run's seed and
/// the argument's index (so that two unseeded arguments differ).
std::uint64_t fillSeed(const ArgumentSpec& arg, std::uint64_t runSeed);

/// The initial contents of a Vector argument (arg.bytes() bytes).
///   Constant: every value FillValue.
///   Random: independent uniform values from a counter-based generator (splitmix64), the same
///     for a seed on every machine. Floating types in [-1, 1) on a grid their precision holds
///     exactly (float: steps of 2^-23, double 2^-52, half 2^-10, bfloat16 2^-7, float8_e4m3 2^-3,
///     float8_e5m2 2^-2; a step of one unit in the last place at 1): sums of products
///     stay near 1 per term and far from overflow. Signed integers in [-8, 8), unsigned in
///     [0, 8), bool 0 or 1: small, so that integer kernels do not overflow either.
///   BinaryRaw: the bytes of DataSource, relative to `baseDir` (or absolute); it must hold
///     exactly arg.bytes() bytes.
/// Throws InputError (naming `problemFile` and the argument's DataSource) for a data file that
/// cannot be read or has the wrong size.
std::vector<unsigned char> initialContents(const ArgumentSpec& arg, std::uint64_t runSeed,
                                           const std::filesystem::path& baseDir, const std::string& problemFile = {});

/// A buffer of arg's layout in which every value is `value` (which must fit: valueFits).
std::vector<unsigned char> constantContents(const ArgumentSpec& arg, double value);

/// The bytes of `file`, which must hold exactly `bytes` bytes. Throws InputError(problemFile,
/// pointer, ...) that says which file (as resolved) and what is wrong with it.
std::vector<unsigned char> readRawFile(const std::filesystem::path& file, std::int64_t bytes,
                                       const std::string& problemFile, const std::string& pointer,
                                       const std::string& what);

/// How an output is compared with its reference.
enum class Validation : std::uint8_t {
    /// Tilescope's default: max_i |out_i - ref_i| / S <= tolerance, where S = max_j |ref_j| over
    /// the finite values (1 when they are all 0). Relative to the output's scale rather than to
    /// each value, so values that cancel to ~0 do not blow up; not max(1, S), so outputs far
    /// below 1 (softmax probabilities) are still checked to their own precision.
    Normalized,
    /// T1 AbsoluteDifference: sum_i |out_i - ref_i| <= threshold.
    AbsoluteDifference,
    /// T1 SideBySideComparison: max_i |out_i - ref_i| <= threshold.
    SideBySide,
    /// T1 SideBySideRelativeComparison: max_i |out_i - ref_i| / |ref_i| <= threshold (where
    /// ref_i is 0, the absolute difference).
    SideBySideRelative,
};

/// T1's ValidationMethod ("" = Normalized); nullopt for an unknown name.
std::optional<Validation> parseValidation(std::string_view t1Name);

/// The default tolerance of the Normalized comparison for a type. Several configs of one kernel
/// sum in different orders (tile shapes, split-K, FMA contraction), so outputs differ by
/// rounding: about sqrt(terms) * epsilon relative to the output's scale. The tolerances leave
/// room for that over long sums, and stay far below the error of a real bug (a wrong or missing
/// term moves a value by ~1/terms of the scale or more):
///   double 1e-9 (epsilon 1.1e-16), float 1e-4 (6e-8), half 1e-2 (4.9e-4, and half outputs are
///   usually rounded once from a float sum), bfloat16 5e-2 (3.9e-3); integers and bool exact (0).
///   FP8 outputs are rounded once from a float sum, to a grid so coarse that two configs' sums
///   land on neighbouring values: one step of the type at the output's scale, float8_e4m3 2^-3
///   (3 mantissa bits), float8_e5m2 2^-2 (2 bits).
double defaultTolerance(ElementType type);

/// Elements of an output, counted: how many and the lowest.
struct ElementGap {
    std::int64_t count = 0;
    std::int64_t first = -1; ///< the lowest such element; -1 when there is none
};

/// Which elements a launch wrote, judged beside the comparison (measure/cuda/outputcheck.h): a
/// WriteOnly output filled with `canary` before the launch, or a ReadWrite one whose `initial`
/// contents the reference config changed.
struct WriteCheck {
    bool canaried = false;
    unsigned char canary = 0xFF;
    std::span<const unsigned char> initial; ///< a ReadWrite output's initial contents (empty: none)
};

/// The outcome of comparing one output with its reference.
struct Verdict {
    bool ok = true;
    /// The error by the method; infinity when a value is NaN or infinite where the reference is
    /// finite (or the other way round).
    double error = 0;
    std::string message; ///< when !ok: the argument, the element, its value and the expected value
    /// Values further from the reference than the tolerance allows on their own (the Normalized,
    /// SideBySide and SideBySideRelative methods; AbsoluteDifference: values that differ at all).
    std::int64_t mismatched = 0;
    /// With a WriteCheck: elements the reference config wrote and this launch did not (left as
    /// the canary, or as their initial contents where the reference changed them beyond rounding).
    ElementGap unwritten;
    std::int64_t extra = 0; ///< with a canaried WriteCheck: elements written that the reference left unwritten
    ElementGap nonFinite;   ///< NaN or Inf values where the reference's are finite
};

/// Compares `output` with `reference` (both arg.bytes() bytes of arg's layout). Values with equal
/// bits always agree (NaN where the reference has the same NaN included). With `check`, the
/// same pass counts the elements never written (Verdict::unwritten, extra): an output equal to
/// its reference bit for bit costs no more than before.
Verdict compareValues(const ArgumentSpec& arg, std::span<const unsigned char> output,
                      std::span<const unsigned char> reference, Validation method, double tolerance,
                      const WriteCheck* check = nullptr);

/// One value of `type` at `p` (elementSize(type) bytes, host byte order) as a double.
double decodeValue(ElementType type, const unsigned char* p);

/// The index (in values of arg.element) of the first value of a floating-point buffer that
/// still holds the worker's poison (all bits set, a NaN): a value the kernel never wrote. -1 if
/// none, and always -1 for integer types, where all bits set is an ordinary value (-1, the maximum).
std::int64_t firstPoisoned(const ArgumentSpec& arg, std::span<const unsigned char> data);

} // namespace tilescope
