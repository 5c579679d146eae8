#pragma once

// How far a kernel's bounds checks let it index its buffers, read from its source without
// compiling it. Each index into an argument buffer (`in[y * w + x]`, `in + i`) whose names are
// all bounded by the checks around it (`if (y < h && x < w)`, `for (int k = 0; k < n; ++k)`,
// `if (i >= n) return;`, `(i < n) ? in[i] : 0`) or stand for numbers (an object-like #define, a tuning parameter's -D,
// a scalar argument, a `const int` computed from those; the #defines of the headers the kernel
// includes with `#include "..."` count too) is evaluated with each bounded name at
// its bound less one: the element the threads at the launch's edge reach. A heuristic, not a C++
// parser: an index it cannot follow (a name it cannot bound or evaluate, a call, a member, a
// shift) is left out, so it finds too little rather than too much.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tilescope {

class TuningProblem;

/// Where the headers a kernel includes with `#include "..."` are, as NVRTC finds them: beside the
/// including file, then in `dirs`. Headers are read for their object-like #defines only (sizes
/// such as `#define N 4096`), to a depth of 8 and 64 headers at most.
struct HeaderSearch {
    std::filesystem::path file;              ///< the kernel file; "" follows no header
    std::vector<std::filesystem::path> dirs; ///< the include folders, in order
};

/// A problem's header search: its kernel file; its folder and the -I / --include-path folders
/// of its CompilerOptions.
HeaderSearch headerSearch(const TuningProblem& problem);

/// One index into an argument buffer, with the bounds around it.
struct BoundedIndex {
    std::size_t argument = 0; ///< the kernel argument's position
    std::string access;       ///< as written, tokens spaced: "input_image + y * input_width + x"
    std::string index;        ///< the index alone: "y * input_width + x"
    /// Bounded name -> its exclusive bound (C text), outermost check first; an inner check of
    /// the same name comes later and wins.
    std::vector<std::pair<std::string, std::string>> bounds;
    std::string checks; ///< the checks as written, "y < input_height && x < input_width"
    int line = 0;       ///< 1-based, in the source
};

class KernelReach {
public:
    /// Reads the __global__ function `kernelName` of `source` (template arguments in the name are
    /// ignored), and the #defines of `source` and of the headers it includes (found by `headers`).
    /// Finds nothing when there is no such function.
    KernelReach(std::string_view source, std::string_view kernelName, const HeaderSearch& headers = {});

    /// The kernel's argument names, in order (empty when the kernel was not found).
    const std::vector<std::string>& argumentNames() const { return m_arguments; }
    /// The element type a pointer argument is declared with ("float", "float4"); "" for a scalar.
    const std::string& pointee(std::size_t argument) const { return m_pointees[argument]; }
    /// The bounded indexes into pointer arguments, in source order.
    const std::vector<BoundedIndex>& indexes() const { return m_indexes; }

    /// The largest element `index` reaches: each bounded name at its bound less one, the names
    /// of `values` (a config's -D values, scalar arguments' values, as C text) before the
    /// source's own #defines and constants. nullopt when a name stays unknown or the index is not
    /// whole-number arithmetic (+ - * / % and parentheses).
    std::optional<std::int64_t> largest(const BoundedIndex& index,
                                        const std::map<std::string, std::string>& values) const;

private:
    std::vector<std::string> m_arguments;
    std::vector<std::string> m_pointees;
    std::vector<BoundedIndex> m_indexes;
    std::map<std::string, std::string> m_defines; // object-like #defines with one definition, headers' too
    std::map<std::string, std::string> m_locals;  // integer constants the kernel declares once and never changes
};

} // namespace tilescope
