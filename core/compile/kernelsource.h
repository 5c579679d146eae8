#pragma once

// A kernel's source as Kernel Tuner prepares it for one config (prepare_kernel_string in
// kernel_tuner/util.py, 1.5): each define becomes a line of a prefix, in order, "#define NAME
// VALUE" (line breaks in the value escaped); a define whose name contains "loop_unroll_factor"
// becomes "constexpr int NAME = VALUE;" instead, or, with the value 0, removes every
// "#pragma unroll NAME" line of the source; a non-empty prefix ends with "#line 1", so that
// diagnostics keep the file's own line numbers. Kernels written for Kernel Tuner rely on each
// rule: defaults under "#ifndef kernel_tuner", "#pragma unroll loop_unroll_factor_x",
// grid_size_x. The one home of these rules: every compile goes through it.

#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

namespace tilescope {

using Defines = std::vector<std::pair<std::string, std::string>>;

/// `source` with Kernel Tuner's prefix for `defines` (see above), byte for byte what
/// prepare_kernel_string returns for a CUDA kernel given the same defines in the same order.
std::string prepareKernelSource(std::string_view source, const Defines& defines);

/// Kernel Tuner's replace_param_occurrences: each word of `text` (a run of letters, digits and
/// '_') that is the name of one of `parameters` becomes that parameter's text; the rest stays.
/// Used on kernel names ("scale<block_size_x>" -> "scale<128>") and on string values.
std::string replaceParameterNames(std::string_view text, const Defines& parameters);

/// The words of `text` (runs of letters, digits and '_'), for telling which names a source
/// mentions.
std::unordered_set<std::string> wordsOf(std::string_view text);

/// The names Kernel Tuner's prefix defines besides the tuning parameters: grid_size_x/y/z,
/// block_size_x/y/z and kernel_tuner.
const std::vector<std::string>& kernelTunerDefines();

/// A line of a kernel's source that replaces a define for every config: "#define NAME ..." or
/// "#undef NAME" where the preprocessor surely reaches it.
struct Redefinition {
    std::string name;
    int line = 0;     ///< 1-based, in the source
    std::string text; ///< the directive as written, trimmed
};

/// The lines of `source` that define or undefine one of `names` outside any conditional that
/// could skip them, when every name in `defined` (and in `names`) is defined beforehand, as
/// Kernel Tuner's prefix defines them: "#ifndef kernel_tuner" and "#ifndef NAME" skip, "#ifdef"
/// of a defined name and "#if 1" do not; a conditional it cannot decide ("#if X > 2") hides what
/// it holds. Comments are skipped. For telling why a parameter does not change the code.
std::vector<Redefinition> findRedefinitions(std::string_view source, const std::vector<std::string>& names,
                                            const std::vector<std::string>& defined);

} // namespace tilescope
