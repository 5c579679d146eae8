#pragma once

// How far a kernel's bounds checks let it index its buffers, read from its source without
// compiling it. Each index into an argument buffer (`in[y * w + x]`, `in + i`), or into a local
// pointer the kernel sets once from one (`float* src = in + halo * w + halo;`), is evaluated as
// the range of values its names can take: a name is bounded by the checks around the access
// (`if (y < h && x < w)`, `for (int k = 0; k < n; ++k)`, `if (i >= n) return;`,
// `(i < n) ? in[i] : 0`, `while (i < n)`), by the integer the kernel declares it as once and
// never changes (`int y = tile_h * blockIdx.y + j;`, resolved in the block where it is declared),
// by where its loop starts, and by the launch (`threadIdx.x` below the block's size, `blockIdx.x`
// below the grid's), whichever is tightest; numbers come from object-like #defines (the kernel's
// and those of the headers it includes with `#include "..."`, expanded as the preprocessor does),
// a tuning parameter's -D and a scalar argument's value. A heuristic, not a C++ parser: an index
// it cannot follow (a name nothing bounds, a call, a value read from memory, a check it cannot
// read around a name nothing else bounds) is not decided, and `reach` says why, so it finds
// too little rather than too much.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
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
    /// Bounded name -> its exclusive bound (C text), outermost check first; every one holds, so
    /// the tightest wins.
    std::vector<std::pair<std::string, std::string>> bounds;
    std::string checks;  ///< the checks as written, "y < input_height && x < input_width"
    int line = 0;        ///< 1-based, in the source
    std::string through; ///< the local pointer indexed, as declared ("src = in + halo * w + halo"); "" when direct
    std::string offset;  ///< that pointer's offset from the argument (C text); "" when direct
    std::size_t at = 0;  ///< the access's place in the kernel's body, for KernelReach's own use
};

/// How far one index reaches, or why that could not be decided.
struct IndexReach {
    std::optional<std::int64_t> largest; ///< the largest element reached; nullopt when not decided
    std::string unknown;                 ///< when not decided: what could not be followed, as written
    bool compiled = true;                ///< false: the access is under an #if these values leave out
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

    /// The largest element `index` reaches (with its pointer's offset), each name at the largest
    /// value its checks, declaration, loop and the launch allow. `values` gives numbers as C text:
    /// a config's -D values (before the source's own #defines, as on NVRTC's command line), scalar
    /// arguments' values, and the launch as "blockDim.x" ... "gridDim.z" (without them `threadIdx`
    /// and `blockIdx` bound nothing). Not decided when a name stays unknown or the index is not
    /// whole-number arithmetic (+ - * / %, shifts, `&` with a mask, min/max, ?:, integer casts).
    IndexReach reach(const BoundedIndex& index, const std::map<std::string, std::string>& values) const;

    /// reach(index, values).largest.
    std::optional<std::int64_t> largest(const BoundedIndex& index,
                                        const std::map<std::string, std::string>& values) const;

    struct Body; // the kernel's tokens, declarations and checks (boundsreach.cpp)

private:
    std::vector<std::string> m_arguments;
    std::vector<std::string> m_pointees;
    std::vector<BoundedIndex> m_indexes;
    std::map<std::string, std::string> m_defines; // object-like #defines with one definition, headers' too
    std::shared_ptr<const Body> m_body;
};

} // namespace tilescope
