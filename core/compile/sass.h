#pragma once

// A cubin's machine code (SASS) by source line, through the CUDA toolkit's disassembler: nvdisasm
// -g prints each instruction under the source line it came from ("//## File "k.cu", line 12"),
// provided the kernel was compiled with line information (NVRTC --generate-line-info, which does
// not change the code), and marks the instructions that spill or refill a register
// ((*"SpillRefill"*)), which tells spills from a local array's loads and stores.

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace tilescope {

/// NVRTC's option that adds line information to a compile without changing its code.
inline constexpr const char* kLineInfoOption = "--generate-line-info";

struct SassInstruction {
    std::uint32_t offset = 0; ///< in the function, in bytes (nvdisasm's /*0040*/; CUPTI's pcOffset)
    std::string file;   ///< the source file as the compile named it ("" before any line mark)
    int line = 0;       ///< 0: no line information
    std::string text;   ///< "STL [R1+0xc0], R15", without the annotation and the ';'
    std::string opcode; ///< "STL", "LDL.64", "FFMA", ... (a predicate such as @P0 left out)
    bool spill = false; ///< marked SpillRefill: a register spilled or refilled

    bool localStore() const; ///< STL*
    bool localLoad() const;  ///< LDL*
};

struct SassFunction {
    std::string name; ///< as the cubin names it (mangled unless extern "C")
    std::vector<SassInstruction> instructions;
    bool hasLineInfo = false;  ///< some instruction has a source line
    bool spillsMarked = false; ///< some instruction carries the SpillRefill mark
};

/// The functions of nvdisasm's text output (-g, or -g -c), in order. Lines it does not know are skipped.
std::vector<SassFunction> parseNvdisasm(std::string_view text);

/// nvdisasm's path: $TILESCOPE_NVDISASM, else on PATH, beside nvcc, in $CUDA_HOME/bin or the usual
/// toolkit folders; with `triton`, for a Triton kernel's binaries, else the one Triton's wheel
/// ships (where Triton is installed: tritonSetup()), which does not mark spills. Empty, with
/// `error` saying where it looked and how to get it, when missing.
std::filesystem::path findNvdisasm(std::string* error, bool triton = false);

struct Disassembly {
    bool ok = false;
    std::string error; ///< why not: nvdisasm missing or failing
    std::vector<SassFunction> functions;
};

/// Disassembles a cubin with `nvdisasm -g -c` (the path from findNvdisasm when empty).
Disassembly disassemble(const std::vector<char>& cubin, std::filesystem::path nvdisasm = {});

} // namespace tilescope
