#pragma once

// The Triton export: per kernel a list of triton.Config for triton.autotune, and a config as
// Python.

#include "model/records.h"

#include <cstddef>
#include <string>
#include <vector>

namespace tilescope {

/// Python source defining, per kernel, a list of triton.Config: the `topK` best configs of
/// every (shape, device), best first, without repeats. Parameters named like warps
/// (num_warps, NUM_WARPS, WARPS, warps) and stages (num_stages, NUM_STAGES, STAGES, stages)
/// become the num_warps= and num_stages= arguments, num_ctas and maxnreg theirs; the rest go in
/// the kwargs dict. Where the sessions name their shapes' dims, the decorator follows each list:
/// `<kernel>_autotune = triton.autotune(configs=<kernel>_configs, key=['M', 'N', 'K'])`.
/// Configs analysed, not timed (the analysis backend's) rank by `by` after the timed ones, and
/// their comment says what compiling told.
std::string writeTritonConfigs(const std::vector<SessionData>& sessions, std::size_t topK,
                               StaticRank by = StaticRank::Occupancy);

/// `config` as Python: `triton.Config({...}, num_warps=..., num_stages=...)`, parameters named
/// like warps and stages (see writeTritonConfigs) as those arguments, the rest in the dict.
std::string tritonConfigExpression(const ConfigValues& config);
/// A JSON value as a Python literal (True, None, float('inf'), lists, strings).
std::string pythonValue(const ConfigValue& value);

} // namespace tilescope
