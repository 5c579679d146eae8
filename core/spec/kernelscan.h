#pragma once

// A first problem from a kernel's source: what the source shows of its tuning parameters and
// arguments, read without compiling it. Parameters are the names the source leaves to its
// builder: macros tested by #if, #ifdef, #ifndef or #elif (with the default an #ifndef guard
// gives), Kernel Tuner's block_size_x/y/z and ALL_CAPS names that are used but never defined,
// and the non-type template parameters of the __global__ function. A heuristic, not a C++
// parser: the editor shows what it found for the user to keep, change or drop.

#include "spec/tuningproblem.h"

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tilescope {

struct ScannedParameter {
    std::string name;
    std::optional<std::string> defaultValue; ///< from `#ifndef NAME / #define NAME value`, or a template default
    std::string origin;                      ///< "#ifndef guard", "#if", "template parameter", "used, not defined"
};

struct ScannedArgument {
    std::string name;
    std::string baseType; ///< as written, without const, pointer and qualifiers: "float", "__half", "int"
    bool pointer = false;
    bool isConst = false; ///< a pointer to const: the kernel only reads it
};

struct KernelScan {
    std::string kernelName;                      ///< the first __global__ function; "" when there is none
    std::vector<std::string> templateParameters; ///< its template parameters, in order (types too)
    std::vector<ScannedParameter> parameters;    ///< in order of first appearance
    std::vector<ScannedArgument> arguments;      ///< the kernel's, in order
};

/// Scans CUDA source text.
KernelScan scanKernel(std::string_view source);

/// `source` without comments, its string and character literals emptied and continued lines
/// joined, every line break kept where it was (so that an offset's line is the source's line).
std::string strippedSource(std::string_view source);

/// Where a __global__ function is in stripped source text: offsets of the brackets around its
/// argument list and its body, and its arguments.
struct KernelLocation {
    std::string name;
    std::size_t start = 0;                             ///< the offset of its __global__
    std::size_t argumentsOpen = 0, argumentsClose = 0; ///< the ( and ) of the argument list
    std::size_t bodyOpen = 0, bodyClose = 0;           ///< the { and } of the body (npos without one)
    std::vector<ScannedArgument> arguments;
};

/// The __global__ function `name` (template arguments, if written, are ignored); the first one
/// when `name` is empty. nullopt when there is none.
std::optional<KernelLocation> locateKernel(std::string_view text, std::string_view name = {});

/// A T1 problem for the scanned kernel in `kernelFile` (a path; the problem's KernelFile is its
/// file name, relative to the problem beside it): each parameter with its default as its one value
/// (else [1]), the kernel's arguments with sizes and fills from ProblemSize (4096 to start), and
/// Kernel Tuner's launch rules. Throws InputError when the file cannot be read or has no
/// __global__ function.
TuningProblem proposeProblem(const std::filesystem::path& kernelFile);

} // namespace tilescope
