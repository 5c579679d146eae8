#pragma once

// Register spills and local memory by source line: a compiled kernel's machine code (compile/
// sass.h) counted per line of its source, spill stores and refills apart from the loads and
// stores of local arrays, and two configs' lines side by side; with a run's executed counts
// (CUPTI's SASS metrics, Measurement::executed), how often each line's instructions ran.

#include "compile/sass.h"
#include "model/measurement.h"

#include <cstdint>

#include <string>
#include <vector>

namespace tilescope {

struct SourceLine {
    std::string file;
    int line = 0;
    int instructions = 0;
    int spillStores = 0; ///< STL marked SpillRefill
    int spillLoads = 0;  ///< LDL marked SpillRefill
    int localStores = 0; ///< other STL: a local array (or, where spills are not marked, either)
    int localLoads = 0;
    std::vector<std::string> localInstructions; ///< the STL/LDL of the line, as nvdisasm prints them
    // Executions by warps in one launch (addExecuted), of the same instructions.
    std::uint64_t executedInstructions = 0;
    std::uint64_t executedSpillStores = 0, executedSpillLoads = 0;
    std::uint64_t executedLocalStores = 0, executedLocalLoads = 0;

    int spills() const { return spillStores + spillLoads; }
    int localTraffic() const { return spills() + localStores + localLoads; }
    std::uint64_t executedSpills() const { return executedSpillStores + executedSpillLoads; }
    std::uint64_t executedLocalTraffic() const { return executedSpills() + executedLocalStores + executedLocalLoads; }
};

struct LineCounts {
    std::vector<SourceLine> lines; ///< every line with instructions, by file then line
    bool hasLineInfo = false;      ///< false: compiled without line information (all in line 0)
    bool spillsMarked = false;     ///< the disassembler marked spills (else spill and local are one count)
    int instructions = 0;
    int spillStores = 0, spillLoads = 0, localStores = 0, localLoads = 0;
    bool hasExecuted = false; ///< addExecuted gave the lines a run's counts
    std::uint64_t executedInstructions = 0;
    std::uint64_t executedSpillStores = 0, executedSpillLoads = 0, executedLocalStores = 0, executedLocalLoads = 0;

    std::uint64_t executedSpills() const { return executedSpillStores + executedSpillLoads; }
};

/// Counts one function's instructions by source line.
LineCounts countByLine(const SassFunction& function);

/// Adds a run's executions per instruction (by offset in `function`, the one `counts` was made
/// from) to the lines and totals of `counts`. Returns how many counted offsets are not an
/// instruction of `function` (0 when the run and the disassembly are of the same binary).
std::size_t addExecuted(LineCounts& counts, const SassFunction& function, const std::vector<InstructionCount>& executed);

/// The lines with local-memory instructions, the most first: by spill instructions, or, with a
/// run's counts, by executed local-memory instructions (then by file and line).
std::vector<SourceLine> localLines(const LineCounts& counts);

/// The entry function `entryName` of a disassembly (its mangled name as the cubin has it);
/// nullptr when absent.
const SassFunction* findFunction(const Disassembly& disassembly, const std::string& entryName);

/// One line of two configs' counts: the lines that spill in one and not the other, or more.
struct LineDifference {
    std::string file;
    int line = 0;
    int spillsA = 0, spillsB = 0;
    int localA = 0, localB = 0; ///< all local-memory instructions
};

/// The lines whose spill or local-memory counts differ between `a` and `b`, the largest change first.
std::vector<LineDifference> lineDifferences(const LineCounts& a, const LineCounts& b);

} // namespace tilescope
