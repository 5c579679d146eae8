#pragma once

// Which elements of an output a launch wrote, and what one config's outputs show beside the
// reference config's: elements the reference writes that this config never wrote, NaN or Inf
// where the reference is finite. A WriteOnly output is filled with a canary before the checked
// launch, so an element still holding it was never written; a ReadWrite output keeps its initial
// contents (the kernel may read them), so there an element is judged by whether the launch changed
// it. No CUDA here: the worker downloads the buffers, and all of it is tested without a GPU.

#include "measure/cuda/argumentdata.h"
#include "spec/launchplan.h"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace tilescope {

/// The canary a WriteOnly output holds before a checked launch: every byte 0xFF, in every
/// floating-point type a NaN with its sign and every payload bit set, which no arithmetic
/// produces (a GPU's NaN results are the canonical 0x7FFF...). An element that holds it after the
/// launch is confirmed as unwritten by a second launch over kSecondCanary, so an integer output
/// that really holds all ones is not mistaken for one never written.
inline constexpr unsigned char kCanary = 0xFF;
inline constexpr unsigned char kSecondCanary = 0x5A;

/// One bit per value of an output (values of the argument's element type: a float4 has four).
class ElementMask {
public:
    ElementMask() = default;
    explicit ElementMask(std::int64_t values);

    std::int64_t size() const { return m_values; }
    /// Set bits.
    std::int64_t count() const;
    bool test(std::int64_t i) const { return (m_bits[static_cast<std::size_t>(i >> 6)] >> (i & 63)) & 1u; }
    void set(std::int64_t i) { m_bits[static_cast<std::size_t>(i >> 6)] |= std::uint64_t{1} << (i & 63); }
    /// Sets every bit `other` has set (the masks are of one size).
    void unite(const ElementMask& other);
    /// Clears every bit `other` has clear.
    void intersect(const ElementMask& other);
    bool operator==(const ElementMask&) const = default;

    /// The bits, 64 elements a word, element i in bit i % 64 of word i / 64; bits past size() are 0.
    std::uint64_t* words() { return m_bits.data(); }
    const std::uint64_t* words() const { return m_bits.data(); }
    std::size_t wordCount() const { return m_bits.size(); }

private:
    std::vector<std::uint64_t> m_bits;
    std::int64_t m_values = 0;
};

/// The elements of `output` whose bytes are not all `canary`: those a launch wrote over a buffer
/// filled with it.
ElementMask writtenOver(const ArgumentSpec& arg, std::span<const unsigned char> output, unsigned char canary);
/// The elements whose bits differ from `initial`: those a launch changed in a ReadWrite buffer.
ElementMask changedFrom(const ArgumentSpec& arg, std::span<const unsigned char> output,
                        std::span<const unsigned char> initial);
/// The elements that differ from `initial` by more than `tolerance` of the output's scale (its
/// largest finite magnitude; for integers any difference), or that are NaN or Inf where `initial`
/// is not: those a reference config surely changed, whatever the rounding of another config's sums.
ElementMask changedBeyond(const ArgumentSpec& arg, std::span<const unsigned char> output,
                          std::span<const unsigned char> initial, double tolerance);
/// The elements whose value is finite (every one, for integer types).
ElementMask finiteValues(const ArgumentSpec& arg, std::span<const unsigned char> output);

// ElementGap (elements counted: how many and the lowest) is argumentdata.h's.
/// The elements set in `wanted` and not in `have`.
ElementGap missingFrom(const ElementMask& wanted, const ElementMask& have);
/// The elements not set in `mask`.
ElementGap unsetIn(const ElementMask& mask);
/// The last element set in `mask`, -1 when none is.
std::int64_t lastSetIn(const ElementMask& mask);

/// NaN or Inf values of an output.
struct NonFinite {
    std::int64_t count = 0;
    std::int64_t first = -1; ///< -1 when there is none
    double firstValue = 0;   ///< the value there (NaN, Inf or -Inf)
};
/// The NaN and Inf values of `output` at the elements set in `where` (every element when null);
/// none for integer types.
NonFinite nonFiniteValues(const ArgumentSpec& arg, std::span<const unsigned char> output,
                          const ElementMask* where = nullptr);

/// What one launch left in an output, beside its reference config's.
struct OutputScan {
    ElementGap unwritten;          ///< elements the reference config wrote and this launch did not
    std::int64_t extra = 0;        ///< elements this launch wrote and the reference config did not
    NonFinite nonFinite;           ///< NaN or Inf where this launch wrote and the reference's values are finite
    std::int64_t lastWritten = -1; ///< the last element this launch wrote (-1: none)

    /// Every element the reference wrote and this launch did not lies past the last one this
    /// launch wrote, and it wrote as many elements as the launch had `blocks`: one result per
    /// block (a sum per block in a buffer sized for the most blocks), not holes in it, nor a
    /// grid too small for its output (which leaves a tail too, but a block's worth of elements a
    /// block).
    bool endsEarly(std::int64_t blocks) const {
        return unwritten.count > 0 && unwritten.first > lastWritten && lastWritten + 1 == blocks;
    }
};
/// One pass over `output` (what a config checks every time, at the speed of memory): which
/// elements the launch wrote, over the canary `canary` when `initial` is empty, else those whose
/// bits differ from `initial`; compared with the reference config's `refWritten` and `refFinite`.
OutputScan scanOutput(const ArgumentSpec& arg, std::span<const unsigned char> output, unsigned char canary,
                      std::span<const unsigned char> initial, const ElementMask& refWritten,
                      const ElementMask& refFinite);

/// "argument 'out': 16,777,216 of 67,108,864 elements never written, the first at 196,608" (a
/// canaried output), or for a ReadWrite one "... elements keep their initial contents where the
/// reference config changed them, the first at ...".
std::string unwrittenMessage(const ArgumentSpec& arg, const ElementGap& gap, bool canaried);
/// "argument 'out': 12 elements are NaN or Inf where the reference config's are finite, the
/// first at 4,096 (nan)"; `againstReference` false: "... elements are NaN or Inf, ...".
std::string nonFiniteMessage(const ArgumentSpec& arg, const NonFinite& found, bool againstReference);

} // namespace tilescope
