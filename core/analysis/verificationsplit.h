#pragma once

// Why configs disagree with the reference, when one parameter says it: every config with P = v
// matches the reference and every other does not. The kernel is then usually right and its
// outputs depend on P (a partial result per block, a layout chosen by P), so comparing with the
// first config's outputs cannot verify it: the problem needs ReferenceArguments (the expected
// outputs), or verification off.

#include "model/records.h"

#include <cstddef>
#include <string>
#include <vector>

namespace tilescope {

/// One parameter whose values split the verified configs into those that match the reference
/// and those that do not.
struct VerificationSplit {
    std::string parameter;
    std::vector<std::string> matchingValues; ///< its values whose configs all match, as text
    std::size_t matching = 0;                ///< configs that match (ok)
    std::size_t differing = 0;               ///< configs that do not (wrong_result)
};

/// The parameters (in the order the results' configs name them) that split `results`: every
/// value of P is taken either only by configs that match the reference (ok) or only by configs
/// that do not (wrong_result), and each side has at least `minEach` configs. Other statuses take
/// no side. Empty when no config differs.
std::vector<VerificationSplit> verificationSplits(const std::vector<ResultRecord>& results, std::size_t minEach = 3);

/// One sentence for a session summary: "12 configs match the reference and 40 do not, split by
/// BLOCK: every config with BLOCK = 16 matches, every other does not: the outputs depend on BLOCK
/// ...; give the expected outputs as ReferenceArguments, or tune with --no-verify". "" for none.
std::string describeVerificationSplits(const std::vector<VerificationSplit>& splits);

} // namespace tilescope
