#pragma once

// Why configs disagree with the reference, and whether one parameter says it: every config with
// P = v matches the reference and every other does not. That can mean the outputs depend on P (a
// partial result per block, a layout chosen by P, time steps per launch), but only when the
// configs that differ write every element the reference writes, leave no NaN or Inf, and agree
// with each other where P agrees: a session then verifies them again within the groups of P (each
// against the first config of its group). Even then a kernel wrong for some values of P, the same
// way each time, looks alike, so they stay wrong_result until the problem declares the groups
// (Tilescope.VerifyWithin). Otherwise the verdict says what is wrong: elements never written, NaN
// or Inf, values beyond the tolerance.

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

/// Why the split's explanation cannot hold: the configs that differ leave elements unwritten that
/// the reference writes, or hold NaN or Inf where it is finite (their metrics verify.unwritten,
/// verify.nonfinite): "14 of the 40 configs that differ leave elements unwritten (BLOCK=64: ...)".
/// "" when nothing speaks against it.
std::string splitObstacle(const std::vector<ResultRecord>& results, const VerificationSplit& split);

/// What verifying the configs of a split again within the groups of its parameter found.
struct WithinGroupsCheck {
    std::string parameter;
    std::size_t verified = 0;   ///< configs verified again, each against the first config of its group
    std::size_t agree = 0;      ///< of them, those that matched it
    std::string firstDiffering; ///< "BLOCK=64, ...: why" of one that did not ("" none)
};

/// The session's verdict on its wrong results, for people; "" when there are none. With a split
/// whose explanation can hold and a within-groups check that every config passed: that the
/// outputs may depend on P or the kernel be wrong for the other values the same way each time
/// (agreeing with its group proves neither), and how the problem says which (VerifyWithin, with
/// an objective that counts the work P changes, or ReferenceArguments); a check that some failed
/// or an obstacle: what is wrong; no check: how to verify within the groups. Without a split: how
/// many configs are wrong and in which way. Never advises turning verification off.
std::string describeVerification(const std::vector<ResultRecord>& results, const std::vector<VerificationSplit>& splits,
                                 const WithinGroupsCheck* within = nullptr);

/// A verdict a session recorded in its provenance JSON: "verification" (describeVerification)
/// or "second_inputs" (what the final round's second input set found); "" when absent.
std::string recordedVerdict(const std::string& provenanceJson, const char* key);

} // namespace tilescope
