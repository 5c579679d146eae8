#pragma once

// Register spills and local memory by source line: a compiled kernel's machine code (compile/
// sass.h) counted per line of its source, spill stores and refills apart from the loads and
// stores of local arrays, and two configs' lines side by side.

#include "compile/sass.h"

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

    int spills() const { return spillStores + spillLoads; }
    int localTraffic() const { return spills() + localStores + localLoads; }
};

struct LineCounts {
    std::vector<SourceLine> lines; ///< every line with instructions, by file then line
    bool hasLineInfo = false;      ///< false: compiled without line information (all in line 0)
    bool spillsMarked = false;     ///< the disassembler marked spills (else spill and local are one count)
    int instructions = 0;
    int spillStores = 0, spillLoads = 0, localStores = 0, localLoads = 0;
};

/// Counts one function's instructions by source line.
LineCounts countByLine(const SassFunction& function);

/// The lines with local-memory instructions, the most first (then by file and line).
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
