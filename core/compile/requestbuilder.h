#pragma once

// From a tuning problem's config to a compile request, Kernel Tuner's way: every tuning
// parameter becomes -DNAME=VALUE (in the problem's parameter order), then Kernel Tuner's
// block_size_x/y/z defaults that the kernel names but the problem does not tune, the problem's
// CompilerOptions follow, and the kernel file's folder is the include dir. Shape names (M, N,
// K) are not defined: kernels take them as arguments (sgemm's M, N, K would collide), and a
// compile that does not depend on the shape is shared by every shape through the cache.

#include "compile/compiler.h"
#include "space/configspace.h"

#include <string>
#include <string_view>
#include <vector>

namespace tilescope {

class TuningProblem;

/// The text of a parameter value in a -D option: ints in decimal, floats as Python's repr
/// (0.5, 1e-05), bools as 1 and 0 (C has no True), strings as they are.
std::string defineValue(const expr::Value& value);

class RequestBuilder {
public:
    /// Reads the problem's kernel file. Throws InputError naming KernelFile when it cannot.
    explicit RequestBuilder(const TuningProblem& problem);

    /// The request for `config` (value indices in the problem's parameter order) and `arch`.
    CompileRequest request(const Config& config, const std::string& arch) const;
    /// The defines of `config`, in parameter order, then the implicit block sizes.
    std::vector<std::pair<std::string, std::string>> defines(const Config& config) const;
    /// `identifier` occurs in `source` as a whole word.
    static bool mentions(std::string_view source, std::string_view identifier);

    const std::string& source() const { return m_base.source; }

private:
    CompileRequest m_base;                         // everything but defines and arch
    std::vector<std::string> m_names;              // parameter names
    std::vector<std::vector<std::string>> m_texts; // [parameter][value index] -> define text
    std::vector<std::pair<std::string, std::string>> m_implicit; // block_size_x 256, ... (see above)
};

} // namespace tilescope
